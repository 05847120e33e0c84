"""The block kind's benchmark hooks (``BLOCK_KIND.benchmark``): its configs' rows, composed
by the tf.data composer from the local MNIST / CIFAR-10 copy, and their TFDS features. Named
by reference from ``kind``."""

import numpy as np


def image_sets(task):
    """The TFDS image datasets a block task draws from (the pointer's MNIST first)."""
    return task.sources


def rows(source, index):
    """``image`` uint8 (B, H, W, C), ``label`` int32, ``cell_labels`` int64 (B, cells),
    ``held_out`` bool: under Figure 6's holdout the test stream holds only held-out examples
    and the train stream none (the cell pools exclude them)."""
    import tensorflow as tf

    from pvr_keras.kinds.block import keys, tf_data

    if "examples" not in source.cache:
        source.cache["examples"] = tf_data.make_examples(
            source.task,
            keys.stream_key(source.seed, source.stream),
            source.stream,
            bool(source.config.holdout),
            source.data_dir,
            dtype="uint8",
        )
    out = source.cache["examples"](tf.constant(index, tf.int64))
    held = bool(source.config.holdout) and source.stream == "test"
    return {"image": np.asarray(out["x"]), "label": np.asarray(out["y"]),
            "cell_labels": np.asarray(out["cell_labels"]),
            "held_out": np.full(len(index), held)}  # fmt: skip


def features(task):
    import tensorflow_datasets as tfds

    return tfds.features.FeaturesDict({
        "image": tfds.features.Image(shape=task.image_shape),
        "label": tfds.features.Tensor(shape=(), dtype=np.int32, minimum=0,
                                      maximum=9),  # int32 as the source's
        "cell_labels": tfds.features.Tensor(shape=(task.grid * task.grid,), dtype=np.int64),
        "held_out": np.bool_,
    })  # fmt: skip
