"""The boolean kind's ``TaskKind``: PVR over bits (Abbe et al. 2022), ``BooleanTask``,
regressed with MSE.

Registered as ``boolean`` when ``pvr_keras.kinds`` is imported. A run's ``holdout`` is the set
of frozen bits as a subset integer (``tasks.frozen_mask``): bit j set means x_j = +1 in every
training example (their canonical holdout); the test split is the whole cube's uniform
distribution. Or the task's seen ``domain`` (``domains``) draws the training and validation
examples. The recorded ``test_loss`` is the mean squared error, twice the paper's
generalisation error. Its generators are named ``"module:function"``, imported when a run
needs them: tf.data (``tf_data``, its arrays too) and its JAX twin (``jax_data``); its
benchmark hooks are in ``benchmark``. Its default training settings are ``hyperparams.BOOLEAN``
(in the table of the papers' settings, ``hyperparams.RECIPES``, below this layer).
"""

from pvr_keras.hyperparams import BOOLEAN
from pvr_keras.kinds.boolean.domains import slug as domain_slug
from pvr_keras.kinds.boolean.task import BooleanTask, frozen_bits
from pvr_keras.kinds.spec import BenchmarkHooks, DifficultyAxis, TaskKind, register_kind
from pvr_keras.tasks.aggregations import slug as aggregation_slug

HERE = "pvr_keras.kinds.boolean"

# Always in a Boolean run's identity, whatever their value.
IDENTITY = ("model", "pointer_bits", "window", "aggregation", "window_mode", "holdout",
            "num_examples", "seed")  # fmt: skip


def model_arguments(task):
    """Boolean models take the bits: their number."""
    return {"num_bits": task.num_bits}


def check(task, holdout):
    """The holdout is the frozen bits' subset integer (0: none frozen); a run has a holdout
    or a seen domain, not both."""
    frozen_bits(holdout, task.num_bits)
    if holdout and task.domain != "all":
        raise ValueError(
            f"give a holdout (frozen bits) or a seen domain, not both; received holdout="
            f"{holdout} and domain={task.domain!r} (the domain frozen:... freezes bits too)"
        )
    return int(holdout)


def id_parts(run):
    """``p3-w3-majority-truncated[-frozen7]``."""
    task = run.task
    parts = [f"p{task.pointer_bits}", f"w{task.window}", aggregation_slug(task.aggregation),
             task.window_mode]  # fmt: skip
    if task.value_bits is not None:
        parts.append(f"v{task.value_bits}")
    bits = frozen_bits(run.data.holdout, task.num_bits)
    if bits:
        parts.append("frozen" + "_".join(map(str, bits)))
    if task.domain != "all":
        parts.append(domain_slug(task.domain))
    return parts


HOOKS = f"{HERE}.benchmark"
# The text form's difficulty (reasoning-gym curricula): the window only. A frozen bit is no
# difficulty (it fixes an input of the training split, not the rule), so each frozen bit stays
# a config of its own (boolean/f3-frozen0 .. 10), and so does the aggregation (parity3).
DIFFICULTY = (DifficultyAxis("window", (1, 2, 3, 4, 5), "value bits aggregated"),)
# Their code's 1,900 training examples at d = 11; the test split is the whole cube.
BENCHMARK = BenchmarkHooks(
    sizes={"standard": dict(train=1_900, validation=1_000, test=None),
           "small": dict(train=1_900, validation=1_000, test=None)},
    supervised=("bits", "label"),
    rows=f"{HOOKS}:rows",
    features=f"{HOOKS}:features",
    hashed=("int8", "float32"),
    whole=f"{HOOKS}:cube_size",
    text_rule=f"{HOOKS}:text_rule",
    text_sequence=f"{HOOKS}:text_sequence",
    text_answers=f"{HOOKS}:text_answers",
    text_difficulty=DIFFICULTY,
    score=f"{HOOKS}:score",
)  # fmt: skip

BOOLEAN_KIND = register_kind(
    TaskKind(
        name="boolean",
        task=BooleanTask,
        models="bits",
        recipe=BOOLEAN,
        dataset=f"{HERE}.tf_data:boolean_dataset",
        device=f"{HERE}.jax_data:boolean_stream",
        arrays=f"{HERE}.tf_data:boolean_arrays",
        model_arguments=model_arguments,
        check=check,
        defaults={
            "model": "bits_mlp",
            "num_examples": 1_900,
            "test_examples": 2_048,
            "train_eval_examples": 1_900,
        },  # fmt: skip
        identity=IDENTITY,
        iid_eval=False,
        eval_batch_size=4096,
        metric="mse",
        id_parts=id_parts,
        benchmark=BENCHMARK,
    )
)
