"""The chain kind's ``TaskKind``: ``ChainTask`` examples trained by the token models.

Registered as ``chain`` when ``pvr_keras.kinds`` is imported (``recipes/train.py --kind
chain``). The token models (``models="token"``: MLP, Transformer, Mixer) take its L-valued
tokens of any length: ``seq_len`` (L, or L + 1 for the cycle form), ``vocab`` L and L classes.
Its generators are named ``"module:function"``, imported when a run needs them: tf.data
(``tf_data``), its JAX twin (``jax_data``) and the NumPy arrays (``numpy_data``).

Its default training settings, ``CHAIN``, are the paper's token recipe (``hyperparams.TOKEN``:
SGD momentum 0.9, batch 1024, 200 epochs, cosine from 0.05 after a 10-epoch warm-up), kept
here so that the kind's own study can change them without touching the token kind.
"""

import dataclasses

from pvr_keras.hyperparams import TOKEN
from pvr_keras.kinds.chain.task import ChainTask
from pvr_keras.kinds.spec import BenchmarkHooks, DifficultyAxis, TaskKind, register_kind

CHAIN = dataclasses.replace(TOKEN)
HERE = "pvr_keras.kinds.chain"

# Always in a run's identity, whatever their value (the others when they differ from the
# default: test_hops, the training settings, ...).
IDENTITY = ("model", "length", "form", "hops", "num_examples", "seed")


def model_arguments(task):
    """Token models take int tokens: the sequence length, L token values and L classes."""
    return {"seq_len": task.seq_len, "vocab": task.num_values, "num_classes": task.num_classes}


def check(task, holdout):
    """No holdout: the test split differs by its hop counts (``test_hops``)."""
    return task.check_holdout(holdout)


def _span(hops):
    """``1-4`` for consecutive hop counts, else ``1_3_8``."""
    if len(hops) > 1 and hops == tuple(range(hops[0], hops[-1] + 1)):
        return f"{hops[0]}-{hops[-1]}"
    return "_".join(map(str, hops))


def id_parts(run):
    """``L40-cond-h1-4[-t5-8]`` (``cycle`` for the cycle form)."""
    task = run.task
    parts = [f"L{task.length}", "cond" if task.form == "conditional" else task.form]
    parts.append(f"h{_span(task.hops)}")
    if task.test_hops is not None:
        parts.append(f"t{_span(task.test_hops)}")
    return parts


# The benchmark configs (``chain/...``): at L = 40, trained on hops 1-4 and tested on 1-4, or
# on 5-8 (generalisation to more hops), and the cycle form. Declared here, as data, so that the
# catalog lists them once the kind registers (this module, at the kinds layer, does not import
# the catalog); the hook functions are in ``benchmark`` (at the benchmarks' layer).
HOPS = (1, 2, 3, 4)
CONFIGS = (
    dict(name="chain/l40-h1-4", task=dict(length=40, hops=HOPS),
         description="multi-hop PVR (C-VPR, Abnar et al. 2023), L = 40, hops 1-4 in every "
                     "split"),
    dict(name="chain/l40-h1-4-test5-8", task=dict(length=40, hops=HOPS, test_hops=(5, 6, 7, 8)),
         description="C-VPR at L = 40: train and validation on hops 1-4, test on hops 5-8 "
                     "(generalisation to more hops)"),
    dict(name="chain/l40-cycle-h1-4", task=dict(length=40, hops=HOPS, form="cycle"),
         description="pointer chasing on one random cycle of 40 positions, hops 1-4 (x[0] "
                     "the hop count)"),
)  # fmt: skip
# The text form's difficulty (reasoning-gym curricula): more hops to follow, and a longer
# sequence to follow them in (hops at most length - 1: every level of hops fits every length).
DIFFICULTY = (
    DifficultyAxis("hops", (1, 2, 3, 4, 5, 6, 7, 8), "hop counts drawn (min_hops..max_hops)",
                   span=True),
    DifficultyAxis("length", (10, 20, 40, 80), "positions, and numbers, of a sequence"),
)  # fmt: skip
BENCHMARK = BenchmarkHooks(
    sizes={"standard": dict(train=300_000, validation=10_000, test=10_000),
           "small": dict(train=20_000, validation=2_000, test=2_000)},
    supervised=("tokens", "label"),
    rows=f"{HERE}.benchmark:rows",
    features=f"{HERE}.benchmark:features",
    hashed=("int32", "int32"),
    text_rule=f"{HERE}.benchmark:text_rule",
    text_sequence=f"{HERE}.benchmark:text_sequence",
    text_answers=f"{HERE}.benchmark:text_answers",
    text_difficulty=DIFFICULTY,
    score=f"{HERE}.benchmark:score",
    slices=("hops",),
    configs=CONFIGS,
)  # fmt: skip

CHAIN_KIND = register_kind(
    TaskKind(
        name="chain",
        task=ChainTask,
        models="token",
        recipe=CHAIN,
        dataset=f"{HERE}.tf_data:chain_dataset",
        device=f"{HERE}.jax_data:chain_stream",
        arrays=f"{HERE}.numpy_data:chain_arrays",
        model_arguments=model_arguments,
        check=check,
        identity=IDENTITY,
        iid_eval=False,
        eval_batch_size=4096,
        id_parts=id_parts,
        benchmark=BENCHMARK,
    )
)
