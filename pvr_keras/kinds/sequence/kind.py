"""The image-sequence kind's ``TaskKind``: the token task with every token drawn as a random
MNIST image of that digit (Figure 2), ``TokenTask``; trained on the paper's visual recipe
(``hyperparams.VISUAL``, shared with the block kind).

Registered as ``sequence`` when ``pvr_keras.kinds`` is imported. Its generators are named
``"module:function"``, imported when a run needs them: tf.data (``tf_data``, also the arrays
and the data preparation) and its JAX twin (``jax_data``); its benchmark hooks are in
``benchmark``.
"""

from pvr_keras.hyperparams import VISUAL
from pvr_keras.kinds.spec import BenchmarkHooks, TaskKind, register_kind
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.tasks.aggregations import slug as aggregation_slug

HERE = "pvr_keras.kinds.sequence"
DIGITS = 10

# The fields every image-sequence run has been recorded with (image_sequence.py; its model
# fields are the image_sequence builder's arguments, model_kwargs).
IDENTITY = (
    "num_examples", "test_examples", "train_eval_examples", "epochs", "batch_size",
    "learning_rate", "schedule", "seed", "window", "aggregation", "holdout", "model_kwargs",
)  # fmt: skip


def model_arguments(task):
    return {"seq_len": task.seq_len, "num_classes": task.num_classes}


def check(task, holdout):
    """The tokens are drawn as MNIST digits: at most 10 values."""
    if task.num_values > DIGITS:
        raise ValueError(
            f"image sequences draw tokens as MNIST digits: num_values must be at most {DIGITS}; "
            f"received {task.num_values}"
        )
    return task.check_holdout(holdout)


def id_parts(run):
    return [f"w{run.task.window}", aggregation_slug(run.task.aggregation)] + (
        [f"h{run.data.holdout}"] if run.data.holdout else []
    )


HOOKS = f"{HERE}.benchmark"
BENCHMARK = BenchmarkHooks(
    sizes={"standard": dict(train=60_000, validation=5_000, test=10_000),
           "small": dict(train=10_000, validation=2_000, test=2_000)},
    supervised=("images", "label"),
    rows=f"{HOOKS}:rows",
    features=f"{HOOKS}:features",
    images=f"{HOOKS}:image_sets",
)  # fmt: skip

SEQUENCE_KIND = register_kind(
    TaskKind(
        name="sequence",
        task=TokenTask,
        models="sequence",
        recipe=VISUAL,
        dataset=f"{HERE}.tf_data:sequence_dataset",
        device=f"{HERE}.jax_data:sequence_stream",
        arrays=f"{HERE}.tf_data:sequence_arrays",
        model_arguments=model_arguments,
        check=check,
        defaults={"model": "image_sequence", "num_examples": 60_000},
        identity=IDENTITY,
        iid_eval=False,
        eval_batch_size=500,
        images=True,
        prepare=f"{HERE}.tf_data:prepare",
        id_parts=id_parts,
        benchmark=BENCHMARK,
    )
)
