"""Token PVR as tf.data: batched, stateless, any size up to 5x10^7 and beyond in O(batch) memory.

Example ``i`` of a split is a pure function of (seed, split, holdout, i): its tokens come from a
counter-based hash (``pvr_keras.data.random``, the slots of ``keys``), so the N training
examples are the same N every epoch, in a new order each epoch, on every backend and run.
Labels are computed in batched TF ops that follow ``TokenTask.label`` exactly (tested against
it); the TF twins of the token aggregations (``TF_RULES``) serve the block kind too.
"""

import numpy as np
import tensorflow as tf

from pvr_keras.data import random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.pipeline import batched_dataset, check_instance
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.token import keys
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.tasks import aggregations

CHUNK_EXAMPLES = 32_768


def _mod_sum(window, num_values):
    return tf.math.floormod(tf.reduce_sum(window, axis=1), num_values)


def _median(window, num_values):
    del num_values
    return tf.sort(window, axis=1)[:, (window.shape[1] - 1) // 2]


def _maj_vote(window, num_values):
    counts = tf.reduce_sum(tf.one_hot(window, num_values, dtype=tf.int64), axis=1)
    # Break ties towards the smallest value explicitly: argmax gives no tie guarantee.
    score = counts * num_values + tf.range(num_values - 1, -1, -1, dtype=tf.int64)
    return tf.argmax(score, axis=1, output_type=tf.int64)


def _min(window, num_values):
    del num_values
    return tf.reduce_min(window, axis=1)


def _max(window, num_values):
    del num_values
    return tf.reduce_max(window, axis=1)


# The TensorFlow rules, by name (``tasks.aggregations.NUMPY``'s twins).
TF_RULES = {"mod_sum": _mod_sum, "median": _median, "maj_vote": _maj_vote, "min": _min,
            "max": _max}  # fmt: skip


def tf_aggregate(aggregation, window, num_values):
    """TF twin of ``tasks.aggregate``: window (B, w) int64 -> (B,) int64."""
    found = TF_RULES.get(aggregation)
    if found is not None:
        return found(window, num_values)
    return tf.cast(aggregations.rule(aggregation, "tensorflow")(window, num_values), tf.int64)


def check_rule(aggregation, width, num_values):
    """An aggregation of yours agrees with its NumPy rule on TensorFlow (compiled as the
    examples are) before it makes any (``tasks.aggregations.check_backend``)."""
    if aggregation in TF_RULES:
        return

    def compute(window, num_values):
        own = aggregations.rule(aggregation, "tensorflow")
        run = tf.function(lambda w: own(w, num_values), jit_compile=True, autograph=False)
        return run(tf.constant(window)).numpy()

    aggregations.check_backend(aggregation, "tensorflow", compute, width=width,
                               num_values=num_values)  # fmt: skip


def tf_label(task, x):
    """TF twin of ``TokenTask.label``: x (B, seq_len) int -> (B,) int64."""
    x = tf.cast(x, tf.int64)
    values = x[:, 1:]
    pointers = x[:, 0] if task.pointer else tf.zeros_like(x[:, 0])
    positions = tf.math.floormod(
        pointers[:, None] + tf.range(task.window, dtype=tf.int64), task.num_positions
    )
    window = tf.gather(values, positions, batch_dims=1)
    return tf_aggregate(task.aggregation, window, task.num_values)


def _decode(task, codes):
    """Base-num_values codes (B,) -> window digits (B, w), first digit most significant."""
    powers = task.num_values ** np.arange(task.window - 1, -1, -1, dtype=np.int64)
    return tf.math.floormod(tf.math.floordiv(codes[:, None], powers), task.num_values)


def _window_draw(task, holdout, split, bits, index):
    """Window digits (B, w) for a holdout split, or None when every window is allowed.

    Train: uniform over all windows except the held-out tuples (sampled directly from the
    complement, so no rejection loop and no effect on any other token). Test: only held-out
    tuples, example i taking tuple i mod k so the k tuples are evenly spread.
    """
    if not holdout:
        return None
    codes = keys.held_out_codes(task, holdout)
    if split == "test":
        pick = tf.math.floormod(index, holdout)
        return _decode(task, tf.gather(tf.constant(codes), pick))
    rank = random.uniform_int(bits, task.num_values**task.window - holdout)
    # The rank-th allowed code is rank + #{j : codes[j] - j <= rank} (codes sorted, so
    # codes[j] - j is non-decreasing): one binary search, whatever the number of codes.
    shifted = tf.constant(codes - np.arange(len(codes), dtype=np.int64))
    skipped = tf.searchsorted(shifted, rank, side="right", out_type=tf.int64)
    return _decode(task, rank + skipped)


# The key of a token stream (shared with the NumPy and JAX twins).
stream_key = keys.stream_key


def make_examples(task, key, split, holdout=0):
    """Returns ``fn(index) -> (x, y)`` mapping (B,) example indices to tokens and labels.

    Slots of the hash: 0..seq_len-1 the tokens, seq_len the pointer, seq_len+1 the window.
    """
    n = task.num_positions
    check_rule(task.aggregation, task.window, task.num_values)

    def examples(index):
        bits = random.random_bits(key, index, keys.num_slots(task))
        x = random.uniform_int(bits[:, : task.seq_len], task.num_values)
        pointers = random.uniform_int(bits[:, task.seq_len], task.pointer_values)
        x = tf.concat([pointers[:, None], x[:, 1:]], axis=1)
        window = _window_draw(task, holdout, split, bits[:, task.seq_len + 1], index)
        if window is not None:
            # Value position q holds window digit (q - p) mod n when that is < w.
            offset = tf.math.floormod(tf.range(n, dtype=tf.int64)[None] - pointers[:, None], n)
            in_window = offset < task.window
            digits = tf.gather(window, tf.minimum(offset, task.window - 1), batch_dims=1)
            x = tf.concat([x[:, :1], tf.where(in_window, digits, x[:, 1:])], axis=1)
        return tf.cast(x, tf.int32), tf.cast(tf_label(task, x), tf.int32)

    # XLA fuses the ~60 elementwise integer ops into a few loops: ~7x faster than running
    # them one kernel at a time, and exact (integer arithmetic; the tests pin the output).
    return tf.function(examples, jit_compile=True, autograph=False)


def token_dataset(request=None, num_examples=None, /, **fields):
    """A tf.data pipeline of batched token PVR examples ``(x, y)``.

    Args:
        request: a ``StreamRequest`` (``data.request``) of a ``TokenTask``, or the task, with
            ``num_examples`` and the request's other fields as keywords: ``split``, ``seed``,
            ``holdout`` (holdout-k of Section 6.2, 0 = IID: train never has a held-out tuple
            in its value window, test only those), ``batch_size`` (default 1024; the last
            batch of an epoch may be smaller), ``shuffle`` (a new order each epoch, keyed by
            the epoch number; iterated again, as ``model.fit(ds, epochs=N)`` does, the
            dataset goes on to the next epoch's order), ``epochs`` (None repeats forever)
            and ``first_epoch`` (it keys the order: a resumed run, ``fit(...,
            initial_epoch=k)`` on ``first_epoch=k``, sees an uninterrupted one's orders).

    Returns:
        ``tf.data.Dataset`` of (x int32 (batch, seq_len), y int32 (batch,)).

    Example:
        >>> ds = token_dataset(TokenTask(window=2), 10_000, batch_size=256)
        >>> x, y = next(iter(ds))
        >>> x.shape, y.shape
        (TensorShape([256, 11]), TensorShape([256]))
    """
    r = stream_request(request, num_examples, fields, batch_size=1024)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    check_instance("task", task, TokenTask)
    key = stream_key(task, seed, split, holdout)
    token_examples = make_examples(task, key, split, holdout)

    def examples(index):
        x, y = token_examples(index)
        return {"x": x, "y": y}

    # Many batches per XLA call (CHUNK_EXAMPLES examples), sliced afterwards: the fixed cost
    # of running the graph is shared by ~32k examples instead of one batch.
    return batched_dataset(
        examples, num_examples, r.batch_size, key, shuffle=r.shuffle, epochs=r.epochs,
        first_epoch=r.first_epoch, outputs=("x", "y"), chunk_examples=CHUNK_EXAMPLES,
    )  # fmt: skip


def token_arrays(task, num_examples, *, split="train", seed=0, holdout=0):
    """The first ``num_examples`` examples of a split as NumPy arrays, in index order.

    Returns:
        x int32 (num_examples, seq_len) and y int32 (num_examples,); row i is example i of the
        split, identical to what ``token_dataset`` yields for that index.

    Example:
        >>> x, y = token_arrays(TokenTask(), 5)
        >>> bool((TokenTask().label(x) == y).all())
        True
    """
    check_instance("task", task, TokenTask)
    request = StreamRequest(task, num_examples, split, seed, holdout, shuffle=False)
    num_examples = request.num_examples
    check_memory(check_size(num_examples), 8 * (task.seq_len + 1), "token_arrays")
    ds = token_dataset(request.replace(batch_size=min(num_examples, 65_536)))
    xs, ys = zip(*((x.numpy(), y.numpy()) for x, y in ds), strict=True)
    return np.concatenate(xs), np.concatenate(ys)
