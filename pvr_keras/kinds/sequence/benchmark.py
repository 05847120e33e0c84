"""The image-sequence kind's benchmark hooks (``SEQUENCE_KIND.benchmark``): its configs' rows,
the token streams drawn as MNIST digits by the tf.data composer, and their TFDS features.
Named by reference from ``kind``."""

import numpy as np


def image_sets(task):
    """The TFDS image datasets an image sequence draws from."""
    return ("mnist",)


def rows(source, index):
    """``images`` uint8 (B, seq_len, 28, 28, 1), ``tokens`` int32 (B, seq_len), ``label``
    int32."""
    import tensorflow as tf

    from pvr_keras.kinds.sequence import tf_data

    if "examples" not in source.cache:
        source.cache["examples"] = tf_data.make_examples(
            source.task, source.seed, source.stream, 0, source.data_dir
        )[0]
    out = source.cache["examples"](tf.constant(index, tf.int64))
    images = np.round(np.asarray(out["x"]) * 255).astype(np.uint8)
    return {"images": images, "tokens": np.asarray(out["tokens"]),
            "label": np.asarray(out["y"])}  # fmt: skip


def features(task):
    import tensorflow_datasets as tfds

    return tfds.features.FeaturesDict({
        "images": tfds.features.Tensor(shape=(task.seq_len, 28, 28, 1), dtype=np.uint8),
        "tokens": tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32),
        "label": tfds.features.Tensor(shape=(), dtype=np.int32, minimum=0,
                                      maximum=task.num_values - 1),  # int32 as the source's
    })  # fmt: skip
