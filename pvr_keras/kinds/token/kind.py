"""The token kind's ``TaskKind``: ``TokenTask`` sequences, the paper's main task (Sections 3.1,
5 and 6), trained by the token models on the paper's token recipe (``hyperparams.TOKEN``,
shared with the chain kind).

Registered as ``token`` when ``pvr_keras.kinds`` is imported. Its generators are named
``"module:function"``, imported when a run needs them: tf.data (``tf_data``), its JAX twin
(``jax_data``) and the arrays (``tf_data``); its benchmark hooks are in ``benchmark``.
"""

from pvr_keras.hyperparams import TOKEN
from pvr_keras.kinds.spec import BenchmarkHooks, DifficultyAxis, TaskKind, register_kind
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.tasks.aggregations import slug as aggregation_slug

HERE = "pvr_keras.kinds.token"

# The fields every token run has been recorded with, in the order the records show them.
IDENTITY = (
    "model", "window", "aggregation", "pointer", "holdout", "num_examples", "seed",
    "window_mode", "test_examples", "epochs", "warmup_epochs", "min_steps", "batch_size",
    "learning_rate", "model_kwargs",
)  # fmt: skip


def model_arguments(task):
    """Token models take int tokens: the sequence length, vocabulary and classes."""
    return {"seq_len": task.seq_len, "vocab": task.num_values, "num_classes": task.num_classes}


def check(task, holdout):
    return task.check_holdout(holdout)


def id_parts(run):
    """``w2-mod_sum[-nopointer][-h1[-of123]]``."""
    task, parts = run.task, [f"w{run.task.window}", aggregation_slug(run.task.aggregation)]
    if not task.pointer:
        parts.append("nopointer")
    if run.data.holdout:
        parts.append(f"h{run.data.holdout}")
        if task.holdout_values is not None:
            parts.append("of" + "".join(map(str, task.holdout_values)))
    return parts


HOOKS = f"{HERE}.benchmark"
# The text form's difficulty (reasoning-gym curricula), easiest first as a reader finds it: a
# wider window, an aggregation that needs more than one comparison, more held-out orders
# (holdout-k needs k <= window!: level i of each axis fits the others' level i).
DIFFICULTY = (
    DifficultyAxis("window", (1, 2, 3, 4, 5), "value positions aggregated (complexity + 1)"),
    DifficultyAxis("aggregation", ("min", "max", "median", "maj_vote", "mod_sum"),
                   "how the window's digits make the answer"),
    DifficultyAxis("holdout", (0, 1, 2, 6, 24), "orders of (0, ..., window-1) never in a "
                   "training window, and the only windows of the test split"),
)  # fmt: skip
# The counterfactual-pair configs (``token/w3-cf-p``, ...: a Config with ``interchange``):
# changing pairs of ``pvr_keras.counterfactuals.pairs``, hashed as base, source and the
# counterfactual label; no text form (a pair is a question about an intervention on a
# network, not one a language model answers from the sequence).
PAIRS = BenchmarkHooks(
    sizes={"standard": dict(train=100_000, validation=10_000, test=10_000),
           "small": dict(train=10_000, validation=2_000, test=2_000)},
    supervised=("base", "counterfactual_label"),
    rows=f"{HOOKS}:pair_rows",
    features=f"{HOOKS}:pair_features",
    hashed=("int32", "int32"),
    hashed_inputs=("base", "source"),
    score=f"{HOOKS}:pair_score",
)  # fmt: skip
BENCHMARK = BenchmarkHooks(
    sizes={"standard": dict(train=300_000, validation=10_000, test=10_000),
           "small": dict(train=20_000, validation=2_000, test=2_000)},
    supervised=("tokens", "label"),
    rows=f"{HOOKS}:rows",
    features=f"{HOOKS}:features",
    hashed=("int32", "int32"),
    text_rule=f"{HOOKS}:text_rule",
    text_sequence=f"{HOOKS}:text_sequence",
    text_answers=f"{HOOKS}:text_answers",
    text_difficulty=DIFFICULTY,
    slices=("pointer",),
    pairs=PAIRS,
)  # fmt: skip

TOKEN_KIND = register_kind(
    TaskKind(
        name="token",
        task=TokenTask,
        models="token",
        recipe=TOKEN,
        dataset=f"{HERE}.tf_data:token_dataset",
        device=f"{HERE}.jax_data:token_stream",
        arrays=f"{HERE}.tf_data:token_arrays",
        model_arguments=model_arguments,
        check=check,
        identity=IDENTITY,
        iid_eval=True,
        eval_batch_size=4096,
        id_parts=id_parts,
        benchmark=BENCHMARK,
    )
)
