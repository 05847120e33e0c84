"""Chain examples as tf.data: batched, stateless, any size in O(batch) memory.

The tf.data twin of ``numpy_data`` (and of ``jax_data``): the same slots (``keys``), bits
(``pvr_keras.data.random``) and draws, compiled with XLA, batched and reshuffled each epoch
by the library's pipeline (``pvr_keras.data.pipeline``), so example i of a split is the same
on every backend, batch size and epoch.
"""

import numpy as np
import tensorflow as tf

from pvr_keras.data import random
from pvr_keras.data.checks import check_size
from pvr_keras.data.pipeline import batched_dataset, check_instance
from pvr_keras.data.request import stream_request
from pvr_keras.kinds.chain import keys
from pvr_keras.kinds.chain.task import ChainTask

CHUNK_EXAMPLES = 32_768


def uniform_below(bits, maxval):
    """Integers uniform in [0, maxval) for a bound per example ((B,) ints below 2^31), as
    ``numpy_data.uniform_below``."""
    high = tf.bitwise.right_shift(bits, tf.constant(32, tf.uint64))
    scaled = tf.bitwise.right_shift(high * tf.cast(maxval, tf.uint64), tf.constant(32, tf.uint64))
    return tf.cast(scaled, tf.int64)


def _gather(params, index):
    return tf.gather(params, index, batch_dims=1)


def make_examples(task, key, split):
    """``fn(index) -> (x int32 (B, seq_len), y int32 (B,))`` for (B,) int64 indices."""
    length, shift = task.length, keys.position_bits(task)
    table = np.asarray(task.split_hops(split), np.int64)
    positions = tf.range(1, length, dtype=tf.int64)

    def examples(index):
        bits = random.random_bits(key, index, keys.num_slots(task))
        batch = tf.shape(index, out_type=tf.int64)[0]
        hops = tf.gather(tf.constant(table), random.uniform_int(bits[:, 0], len(table)))
        high = tf.cast(tf.bitwise.right_shift(bits[:, 1:length], tf.constant(32, tf.uint64)),
                       tf.int64)  # fmt: skip
        keyed = tf.bitwise.bitwise_or(tf.bitwise.left_shift(high, shift), positions)
        order = tf.bitwise.bitwise_and(tf.sort(keyed, axis=1), (1 << shift) - 1)
        rank = tf.cast(tf.argsort(order, axis=1), tf.int64)
        zero = tf.zeros([batch, 1], tf.int64)
        if task.form == "cycle":
            after = tf.concat([order, zero], axis=1)
            x = tf.concat([hops[:, None], after[:, :1], _gather(after, rank + 1)], axis=1)
            y = _gather(after, hops[:, None])[:, 0]
        else:
            chosen = rank < hops[:, None]
            pointers = tf.sort(tf.where(chosen, positions, length), axis=1)
            pointers = tf.concat([pointers, zero + length], axis=1)
            last = _gather(pointers, hops[:, None] - 1)[:, 0]
            y = uniform_below(bits[:, length], last + 1)
            count = tf.cumsum(tf.cast(chosen, tf.int64), axis=1)
            following = _gather(pointers, count)
            filler = random.uniform_int(bits[:, length + 1 :], length)
            body = tf.where(chosen, tf.where(count < hops[:, None], following, y[:, None]), filler)
            x = tf.concat([pointers[:, :1], body], axis=1)
        return tf.cast(x, tf.int32), tf.cast(y, tf.int32)

    return tf.function(examples, jit_compile=True, autograph=False)


def _validate(request):
    """What a request (checked when made, its holdout by ``ChainTask.check_holdout``) may
    still ask that the chain kind cannot make."""
    check_instance("task", request.task, ChainTask)
    check_size(request.num_examples)


def chain_dataset(request=None, num_examples=None, /, **fields):
    """A tf.data pipeline of batched chain examples ``(x, y)``.

    Args:
        request: a ``StreamRequest`` (``pvr_keras.data.request``) of a ``ChainTask``, or the
            task, with ``num_examples`` and the request's other fields as keywords
            (``split``, ``seed``, ``batch_size`` (default 1024), ``shuffle``, ``epochs``,
            ``first_epoch``; ``holdout`` must be 0), as ``data.token_dataset``.

    Returns:
        ``tf.data.Dataset`` of (x int32 (batch, seq_len), y int32 (batch,)).
    """
    r = stream_request(request, num_examples, fields, batch_size=1024)  # checked when made
    _validate(r)
    key = keys.stream_key(r.seed, r.split)
    make = make_examples(r.task, key, r.split)

    def examples(index):
        x, y = make(index)
        return {"x": x, "y": y}

    return batched_dataset(
        examples, r.num_examples, r.batch_size, key, shuffle=r.shuffle, epochs=r.epochs,
        first_epoch=r.first_epoch, outputs=("x", "y"), chunk_examples=CHUNK_EXAMPLES,
    )  # fmt: skip
