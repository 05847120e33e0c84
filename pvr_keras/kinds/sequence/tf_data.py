"""Image-sequence PVR (Figure 2) as tf.data: the token task with tokens drawn as MNIST digits.

Example ``i`` of a split has exactly the tokens and label of example ``i`` of
``token_dataset`` with the same (task, seed, split, holdout); each token ``t`` is then drawn as
an MNIST image of digit ``t``, picked uniformly among that split's images of ``t`` by a
separate counter-based hash of (seed, split, holdout, i, position) (the two keys: ``keys``).
Batched TF ops only.
"""

import numpy as np
import tensorflow as tf

from pvr_keras.data import random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.images import load_images
from pvr_keras.data.pipeline import (
    batched_dataset,
    check_instance,
    collect_arrays,
)
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.sequence import keys
from pvr_keras.kinds.sequence.keys import NUM_DIGITS
from pvr_keras.kinds.token import tf_data as token_data
from pvr_keras.kinds.token.task import TokenTask

CHUNK_EXAMPLES = 1024  # sequences made per map call; sliced into batches afterwards


def _check_task(task):
    """The task of image sequences (the request's other fields, its holdout included, are
    checked when it is made)."""
    check_instance("task", task, TokenTask)
    if task.num_values > NUM_DIGITS:
        raise ValueError(
            f"image sequences draw tokens as MNIST digits, so num_values must be <= "
            f"{NUM_DIGITS}; received num_values={task.num_values}"
        )


def _uniform_below(bits, maxval):
    """Integers uniform in [0, maxval) for a tensor maxval (< 2^31), multiply-shift as
    ``random.uniform_int``: bits uint64 and maxval int64 of the same shape -> int64."""
    high = tf.bitwise.right_shift(bits, tf.constant(32, tf.uint64))
    scaled = tf.bitwise.right_shift(high * tf.cast(maxval, tf.uint64), tf.constant(32, tf.uint64))
    return tf.cast(scaled, tf.int64)


def make_examples(task, seed, split, holdout=0, data_dir=None):
    """Returns ``(fn, key)``: ``fn(index)`` maps (B,) example indices to a dict of ``x``
    float32 (B, seq_len, 28, 28, 1), ``y`` int32 (B,), ``tokens`` int32 (B, seq_len) and
    ``image_index`` int64 (B, seq_len) (each token's image in ``load_images("mnist", split)``);
    ``key`` is the token stream's key (it also keys the epoch shuffle)."""
    images, labels = load_images("mnist", split, data_dir)
    counts = np.bincount(labels, minlength=NUM_DIGITS)
    missing = [d for d in range(task.num_values) if counts[d] == 0]
    if missing:
        raise ValueError(f"the mnist {split} split has no images of digit(s) {missing}")
    order = np.argsort(labels, kind="stable")  # image indices grouped by digit
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    images_t, order_t = tf.constant(images), tf.constant(order)
    starts_t, counts_t = tf.constant(starts), tf.constant(counts)
    key, image_key = keys.stream_keys(task, seed, split, holdout)
    tokens_fn = token_data.make_examples(task, key, split, holdout)

    def examples(index):
        tokens, y = tokens_fn(index)  # (B, seq_len), (B,)
        digits = tf.cast(tokens, tf.int64)
        bits = random.random_bits(image_key, index, task.seq_len)
        rank = _uniform_below(bits, tf.gather(counts_t, digits))
        image_index = tf.gather(order_t, tf.gather(starts_t, digits) + rank)
        x = tf.cast(tf.gather(images_t, image_index), tf.float32) * (1.0 / 255.0)
        return {"x": x, "y": y, "tokens": tokens, "image_index": image_index}

    return examples, key


def sequence_dataset(request=None, num_examples=None, /, **fields):
    """A tf.data pipeline of batched image-sequence PVR examples ``(x, y)`` (Figure 2).

    Args:
        request: a ``StreamRequest`` (``data.request``) of a ``TokenTask`` (``num_values <=
            10``: tokens are drawn as MNIST digits), or the task, with ``num_examples`` and
            the request's other fields as keywords, as ``token_dataset`` (the same order;
            ``batch_size`` default 50). Digits come from the ``split``'s MNIST split in
            ``data_dir`` (prepared; default ``TFDS_DATA_DIR`` or ~/tensorflow_datasets);
            ``holdout`` is the token task's holdout-k, applied to the tokens.

    Returns:
        ``tf.data.Dataset`` of (x float32 (batch, seq_len, 28, 28, 1) in [0, 1], y int32
        (batch,)).

    Example:
        >>> ds = sequence_dataset(TokenTask(), 1000, split="train", seed=0,
        ...                       data_dir="DIR")
        >>> x, y = next(iter(ds))
        >>> x.shape
        TensorShape([50, 11, 28, 28, 1])
    """
    r = stream_request(request, num_examples, fields, batch_size=50)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    _check_task(task)
    examples, key = make_examples(task, seed, split, holdout, r.data_dir)
    return batched_dataset(
        examples,
        num_examples,
        r.batch_size,
        key,
        shuffle=r.shuffle,
        epochs=r.epochs,
        first_epoch=r.first_epoch,
        outputs=("x", "y"),
        chunk_examples=CHUNK_EXAMPLES,
    )


def sequence_arrays(task, num_examples, *, split, seed, holdout=0, data_dir=None):
    """The first ``num_examples`` image sequences of a split as NumPy arrays, in index order.

    Returns:
        x float32 (N, seq_len, 28, 28, 1), y int32 (N,) and ``info``, a dict of ``tokens``
        int32 (N, seq_len) (equal to ``token_arrays`` for the same arguments) and
        ``image_index`` int64 (N, seq_len) (each token's image in the MNIST split).

    Example:
        >>> task = TokenTask()
        >>> x, y, info = sequence_arrays(task, 4, split="test", seed=0,
        ...                              data_dir="DIR")
        >>> bool((task.label(info["tokens"]) == y).all())
        True
    """
    _check_task(task)
    r = StreamRequest(task, num_examples, split, seed, holdout)  # checks them
    num_examples, holdout = r.num_examples, r.holdout
    check_memory(check_size(num_examples), 8 * task.seq_len * 28 * 28 + 24 * task.seq_len,
                 "sequence_arrays")  # fmt: skip
    examples, key = make_examples(task, seed, split, holdout, data_dir)
    return collect_arrays(examples, num_examples, key, ("x", "y", "tokens", "image_index"))


def prepare(task, data_dir=None, *, download=True):
    """Prepares the TFDS images the task draws from in ``data_dir`` (the block and sequence
    kinds' ``prepare``): a no-op when they are there; downloads them if allowed."""
    from pvr_keras.data import images

    images.prepare_sources(("mnist",), data_dir, download=download)
