"""Boolean PVR as tf.data: bits in {+1, -1}, stateless, any size up to 5x10^7 in O(batch) memory.

Example ``i`` of a split is a pure function of (seed, split, frozen bits, i): one 64-bit hash
of the index (``data.random``, under the split's key: ``keys``) gives its bits, bit j of the
hash making x_j = 1 - 2 * bit (so 0 is +1, as in the cube's row order). In the training split
the frozen bits are then set to +1 (the canonical holdout of Abbe et al. 2022); the test split
is never frozen: uniform on the whole cube, the same for every frozen set. Labels follow the
task's NumPy rule exactly (``BooleanTask.label``, ``BooleanFunction.label``; tested against
them).
"""

import numpy as np
import tensorflow as tf

from pvr_keras.data import random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.pipeline import batched_dataset
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.boolean import keys
from pvr_keras.kinds.boolean.keys import draw_plan, pattern_columns
from pvr_keras.kinds.boolean.task import (
    BooleanFunction,
    check_target,
    holdout_of,
    rule_of,
    split_frozen,
)
from pvr_keras.tasks import aggregations

CHUNK_EXAMPLES = 32_768


def stream_key(task, seed, split, holdout):
    """The key of a Boolean stream: (seed, split, frozen mask of the split, d)."""
    return keys.stream_key(task.num_bits, seed, split, split_frozen(task, holdout, split))


def _parity(window, present):
    return tf.reduce_prod(tf.where(present, window, 1), axis=1)


def _majority(window, present):
    return tf.sign(tf.reduce_sum(tf.where(present, window, 0), axis=1))


def _min(window, present):
    return tf.reduce_min(tf.where(present, window, 1), axis=1)


def _max(window, present):
    return tf.reduce_max(tf.where(present, window, -1), axis=1)


# The TensorFlow rules, by name (``tasks.aggregations.NUMPY_BOOLEAN``'s twins).
TF_RULES = {"parity": _parity, "majority": _majority, "min": _min, "max": _max}


def tf_aggregate(aggregation, window, present):
    """TF twin of ``tasks.aggregations.aggregate_bits``: (B, w) +1/-1 and where present -> (B,)."""
    found = TF_RULES.get(aggregation)
    if found is not None:
        return found(window, present)
    own = aggregations.rule(aggregation, "tensorflow", "boolean")
    return tf.cast(own(window, present), tf.float32)


def check_rule(task):
    """A Boolean aggregation of yours agrees with its NumPy rule on TensorFlow before it makes
    any example (``tasks.aggregations.check_backend``)."""
    if task.aggregation is None or task.aggregation in TF_RULES:
        return
    width = len(task.subset) if isinstance(task, BooleanFunction) else task.window

    def compute(window, present):
        own = aggregations.rule(task.aggregation, "tensorflow", "boolean")
        run = tf.function(lambda w, p: own(w, p), jit_compile=True, autograph=False)
        return run(tf.constant(window), tf.constant(present)).numpy()

    aggregations.check_backend(task.aggregation, "tensorflow", compute, width=width,
                               family="boolean")  # fmt: skip


def tf_label(task, x):
    """TF twin of the task's ``label``: x (B, d) int +1/-1 -> (B,) float32."""
    x = tf.cast(x, tf.float32)
    if isinstance(task, BooleanFunction):
        if task.aggregation is not None:
            window = tf.gather(x, list(task.subset), axis=1)
            return tf_aggregate(task.aggregation, window, tf.ones_like(window, tf.bool))
        out = tf.zeros(tf.shape(x)[:1], tf.float32)
        for bits, coefficient in task.terms:
            if not bits:  # the constant term
                out += coefficient
                continue
            out += coefficient * tf.reduce_prod(tf.gather(x, list(bits), axis=1), axis=1)
        return out
    p, v = task.pointer_bits, task.num_value_bits
    powers = tf.constant(2 ** np.arange(p - 1, -1, -1), tf.float32)
    pointer = tf.cast(tf.reduce_sum((x[:, :p] + 1) / 2 * powers, axis=1), tf.int64)
    positions = pointer[:, None] + tf.range(task.window, dtype=tf.int64)
    if task.window_mode == "cyclic":
        positions, present = tf.math.floormod(positions, v), tf.ones_like(positions, tf.bool)
    else:
        present = positions < v
        positions = tf.minimum(positions, v - 1)
    window = tf.gather(x[:, p:], positions, batch_dims=1)
    return tf_aggregate(task.aggregation, window, present)


def make_examples(task, key, frozen, split="train"):
    """``fn(index) -> {"x", "y"}``: (B,) int64 indices to x int8 (B, d), y float32 (B,)."""
    d = task.num_bits
    shifts = tf.constant(np.arange(d), tf.uint64)
    keep = tf.constant([not (frozen >> j) & 1 for j in range(d)])
    plan = draw_plan(task, key, split)
    inside, shift = pattern_columns(plan, d)
    task = rule_of(task)  # a FunctionTask's function labels its points
    check_rule(task)

    def cube_bits(index):
        slots = 1 if plan.mode == "cube" else 2
        bits = random.random_bits(key, index, slots)  # bit j of the first word is x_j
        ones = tf.bitwise.bitwise_and(tf.bitwise.right_shift(bits[:, :1], shifts[None]), 1)
        x = 1 - 2 * tf.cast(ones, tf.int32)
        x = tf.where(keep[None], x, 1)  # frozen bits are +1
        if plan.mode == "patterns":  # the domain's bits: a seen pattern, uniformly
            choice = random.uniform_int(bits[:, 1], len(plan.table))
            pattern = tf.gather(tf.constant(plan.table, tf.int64), choice)
            own = tf.bitwise.bitwise_and(tf.bitwise.right_shift(pattern[:, None], shift[None]), 1)
            x = tf.where(inside[None], 1 - 2 * tf.cast(own, tf.int32), x)
        return x

    def rows_bits(index):
        table = tf.constant(plan.table, tf.int64)
        rows = tf.gather(table, tf.math.floormod(tf.cast(index, tf.int64), len(plan.table)))
        ones = tf.bitwise.bitwise_and(tf.bitwise.right_shift(rows[:, None], np.arange(d)), 1)
        return 1 - 2 * tf.cast(ones, tf.int32)

    def examples(index):
        x = rows_bits(index) if plan.mode == "rows" else cube_bits(index)
        return {"x": tf.cast(x, tf.int8), "y": tf_label(task, x)}

    return tf.function(examples, jit_compile=True, autograph=False)


def boolean_dataset(request=None, num_examples=None, /, **fields):
    """A tf.data pipeline of batched Boolean examples ``(x, y)``.

    Args:
        request: a ``StreamRequest`` (``data.request``) of a ``BooleanTask`` (or a
            ``BooleanFunction``), or the task, with ``num_examples`` and the request's other
            fields as keywords, as ``token_dataset`` (``batch_size`` default 64). Its
            ``holdout`` is the frozen bits as a subset integer (bit j set: x_j = +1 in
            training; ``tasks.frozen_mask``); the test split is never frozen.

    Returns:
        ``tf.data.Dataset`` of (x int8 (batch, d) of +1/-1, y float32 (batch,)).

    Example:
        >>> ds = boolean_dataset(f3(), 1900, holdout=frozen_mask([7], 11))
        >>> x, y = next(iter(ds))
        >>> bool((x.numpy()[:, 7] == 1).all())
        True
    """
    r = stream_request(request, num_examples, fields, batch_size=64)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    check_target(task)
    frozen = split_frozen(task, holdout, split)  # checks the holdout (the task has no check)
    key = keys.stream_key(task.num_bits, seed, split, frozen)  # stream_key's, checked once
    examples = make_examples(task, key, frozen, split)
    return batched_dataset(
        examples, num_examples, r.batch_size, key, shuffle=r.shuffle, epochs=r.epochs,
        first_epoch=r.first_epoch, outputs=("x", "y"), chunk_examples=CHUNK_EXAMPLES,
    )  # fmt: skip


def boolean_arrays(task, num_examples, *, split="train", seed=0, frozen=(), holdout=0):
    """The first ``num_examples`` examples of a split as NumPy arrays, in index order.

    Args:
        frozen: the frozen bits of the training split, a sequence (``(7,)``).
        holdout: or the same as a subset integer (the kind's form; give one of the two).

    Returns:
        x int8 (num_examples, d) and y float32 (num_examples,); row i is example i of the
        split, identical to what ``boolean_dataset`` yields for that index.

    Example:
        >>> x, y = boolean_arrays(f3(), 5, frozen=(0,))
        >>> bool((f3().label(x) == y).all())
        True
    """
    holdout = holdout_of(task, frozen, holdout)
    request = StreamRequest(task, num_examples, split, seed, holdout, shuffle=False)
    num_examples = request.num_examples
    check_memory(check_size(num_examples), task.num_bits + 4, "boolean_arrays")
    ds = boolean_dataset(request.replace(batch_size=min(num_examples, 65_536)))
    xs, ys = zip(*((x.numpy(), y.numpy()) for x, y in ds), strict=True)
    return np.concatenate(xs), np.concatenate(ys)
