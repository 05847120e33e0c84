"""Image-sequence PVR made on the JAX device: the twin of ``tf_data``, bit for bit.

The MNIST images are read once from TFDS on the host (``images.load_images``; TensorFlow is
kept off the accelerators for it) and then live in device memory, passed to the jitted batch
program as arguments. The tokens are the token kind's JAX twin's (``kinds.token.jax_data``),
the images drawn from the second stream (``keys``) with ``jax_random``'s draws, so for the
same (task, seed, split, holdout, index) the pixels, labels, tokens and image indices equal
``data.sequence_arrays``.
"""

import jax.numpy as jnp
import numpy as np

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.jax_stream import DeviceStream
from pvr_keras.data.jax_stream import collect as _collect
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.sequence import keys
from pvr_keras.kinds.sequence.keys import NUM_DIGITS
from pvr_keras.kinds.token import jax_data as token_device
from pvr_keras.kinds.token.task import TokenTask

CHUNK_EXAMPLES = 1024  # examples per dispatch, as tf_data's chunks


def _load_images(name, split, data_dir):
    """``load_images``: TFDS decodes on the host with TensorFlow, whose GPUs it hides first
    under JAX (``tf_setup``), so a JAX process keeps its accelerators' memory."""
    from pvr_keras.data.images import load_images

    return load_images(name, split, data_dir)


def to_float(x):
    """uint8 pixels -> float32 in [0, 1], as ``tf_data``'s."""
    return x.astype(jnp.float32) * np.float32(1.0 / 255.0)


def _check_task(task):
    """As ``tf_data._check_task`` (the request's other fields, its holdout included, are
    checked when it is made)."""
    if not isinstance(task, TokenTask):
        raise ValueError(f"task must be a TokenTask; received {type(task).__name__}")
    if task.num_values > NUM_DIGITS:
        raise ValueError(
            f"image sequences draw tokens as MNIST digits, so num_values must be <= "
            f"{NUM_DIGITS}; received num_values={task.num_values}"
        )


def sequence_source(task, split, data_dir=None):
    """(constants, None): MNIST images, the image indices grouped by digit, and each digit's
    first position and count in that order (``tf_data.make_examples``'s tables)."""
    images, labels = _load_images("mnist", split, data_dir)
    counts = np.bincount(labels, minlength=NUM_DIGITS)
    missing = [d for d in range(task.num_values) if counts[d] == 0]
    if missing:
        raise ValueError(f"the mnist {split} split has no images of digit(s) {missing}")
    order = np.argsort(labels, kind="stable").astype(np.int32)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
    return (images, order, starts, counts.astype(np.int32)), None


def make_examples(task, seed, split, holdout=0):
    """Returns ``(fn, key)``, the twin of ``tf_data.make_examples``: ``fn(index, constants)``
    gives ``x`` float32 (B, seq_len, 28, 28, 1), ``y``, ``tokens`` and ``image_index`` int32."""
    key, image_key = keys.stream_keys(task, seed, split, holdout)
    tokens_fn = token_device.make_examples(task, key, split, holdout)

    def examples(index, constants):
        images, order, starts, counts = constants
        out = tokens_fn(index)
        tokens = out["x"]  # (B, seq_len)
        hi, _ = jax_random.random_bits(image_key, index, task.seq_len)
        rank = jax_random.uniform_int(hi, counts[tokens])
        image_index = order[starts[tokens] + rank]
        x = to_float(images[image_index])
        return {"x": x, "y": out["y"], "tokens": tokens, "image_index": image_index}

    return examples, key


def sequence_stream(request=None, num_examples=None, /, **fields):
    """Batched image-sequence PVR examples made on the JAX device: ``sequence_dataset``'s
    twin (the same request, the same batches in the same order).

    Returns:
        A ``DeviceStream`` of (x float32 (batch, seq_len, 28, 28, 1), y int32 (batch,)).
    """
    r = stream_request(request, num_examples, fields, batch_size=50)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    _check_task(task)
    check_size(num_examples)
    constants, _ = sequence_source(task, split, r.data_dir)
    examples, key = make_examples(task, seed, split, holdout)
    return DeviceStream(
        examples,
        num_examples,
        r.batch_size,
        key,
        shuffle=r.shuffle,
        epochs=r.epochs,
        first_epoch=r.first_epoch,
        chunk_examples=CHUNK_EXAMPLES,
        constants=constants,
    )


def sequence_arrays(task, num_examples, *, split, seed, holdout=0, data_dir=None):
    """The first ``num_examples`` image sequences of a split, in index order, made on the
    device: ``x, y, info`` equal to ``data.sequence_arrays`` (info arrays as int32)."""
    _check_task(task)
    r = StreamRequest(task, num_examples, split, seed, holdout)  # checks them
    num_examples, holdout = check_size(r.num_examples), r.holdout
    check_memory(num_examples, 8 * task.seq_len * 28 * 28 + 24 * task.seq_len, "sequence_arrays")
    constants, _ = sequence_source(task, split, data_dir)
    examples, key = make_examples(task, seed, split, holdout)
    names = ("x", "y", "tokens", "image_index")
    stream = DeviceStream(
        examples,
        num_examples,
        min(num_examples, CHUNK_EXAMPLES),
        key,
        shuffle=False,
        outputs=names,
        constants=constants,
    )
    x, y, *rest = _collect(stream)
    return x, y, dict(zip(names[2:], rest, strict=True))
