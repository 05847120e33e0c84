"""The block kind's ``TaskKind``: 2x2 (or 3x3) blocks of MNIST / CIFAR-10 images (Section 3.2,
Figures 3 and 6-8), ``BlockTask``; trained by the CNNs on the paper's visual recipe
(``hyperparams.VISUAL``, shared with the image-sequence kind), and the presets of the block
recipes (``PRESETS``).

Registered as ``block`` when ``pvr_keras.kinds`` is imported. Its generators are named
``"module:function"``, imported when a run needs them: tf.data (``tf_data``, also the arrays
and the data preparation) and its JAX twin (``jax_data``); its benchmark hooks are in
``benchmark``.
"""

from pvr_keras.hyperparams import VISUAL
from pvr_keras.kinds.block.task import BlockTask
from pvr_keras.kinds.spec import BenchmarkHooks, TaskKind, register_kind

HERE = "pvr_keras.kinds.block"

# The fields every block run has been recorded with (block_iid.py, block_holdout.py).
IDENTITY = (
    "num_examples", "test_examples", "train_eval_examples", "epochs", "batch_size",
    "learning_rate", "schedule", "seed", "model", "values", "width", "holdout",
)  # fmt: skip


def model_arguments(task):
    """Image models take float images of the composed block's shape."""
    return {"input_shape": task.image_shape, "num_classes": task.num_classes}


def check(task, holdout):
    """Holdout of blocks is Figure 6's shift: on (1 / True) or off (0 / False)."""
    if holdout not in (0, 1) or (not isinstance(holdout, bool | int)):
        raise ValueError(f"holdout of a block task is 0 or 1 (Figure 6's shift); got {holdout!r}")
    task.check_holdout(bool(holdout))
    return bool(holdout)


def id_parts(run):
    return [run.task.values, *(["holdout"] if run.data.holdout else [])]


HOOKS = f"{HERE}.benchmark"
BENCHMARK = BenchmarkHooks(
    sizes={"standard": dict(train=60_000, validation=5_000, test=10_000),
           "small": dict(train=10_000, validation=2_000, test=2_000)},
    supervised=("image", "label"),
    rows=f"{HOOKS}:rows",
    features=f"{HOOKS}:features",
    images=f"{HOOKS}:image_sets",
)  # fmt: skip

BLOCK_KIND = register_kind(
    TaskKind(
        name="block",
        task=BlockTask,
        models="image",
        recipe=VISUAL,
        dataset=f"{HERE}.tf_data:block_dataset",
        device=f"{HERE}.jax_data:block_stream",
        arrays=f"{HERE}.tf_data:block_arrays",
        model_arguments=model_arguments,
        check=check,
        defaults={"model": "resnet18", "width": 64, "num_examples": 60_000},
        identity=IDENTITY,
        iid_eval=False,
        eval_batch_size=500,
        images=True,
        prepare=f"{HERE}.tf_data:prepare",
        id_parts=id_parts,
        benchmark=BENCHMARK,
    )
)


# The presets of the block recipes (block_iid.py and block_holdout.py share them, so that a
# block_iid run can stand in for block_holdout's IID model). Each maps the flags given to
# field values over the kind's defaults (the paper's visual recipe, ResNet18 at width 64).
def paper(given):
    """ResNet18 at torchvision width 64, Adam 1e-4, batch 50, 10 epochs, constant rate,
    60,000 training and 10,000 test examples."""
    return {}


def medium(given):
    """Figure 7 in docs/results: width 16, 60,000 / 10,000 examples, 5 epochs of Adam 2e-3
    with cosine decay."""
    return dict(width=16, train_eval_examples=5_000, epochs=5, learning_rate=2e-3,
                schedule="cosine")  # fmt: skip


def quick(given):
    """Minutes on a 2-core CPU: width 8, 25,000 / 2,000 examples, 5 epochs of Adam 2e-3 with
    cosine decay."""
    return dict(width=8, num_examples=25_000, test_examples=2_000, train_eval_examples=2_000,
                epochs=5, learning_rate=2e-3, schedule="cosine")  # fmt: skip


PRESETS = {"quick": quick, "medium": medium, "paper": paper}
