"""Token PVR made on the JAX device: the twin of ``tf_data``, bit for bit, without TensorFlow.

Example ``i`` of a split is the same pure function of (seed, split, holdout, i) as in
``token_dataset``: the same stream key and slots (``keys``), the same splitmix64 bits
(``pvr_keras.data.jax_random``, uint32 pairs), the same multiply-shift draws, holdout windows
and labels, and the same epoch orders. ``token_stream`` serves the batches to ``model.fit``
as a ``keras.utils.PyDataset`` whose arrays are made, and stay, on the accelerator
(``pvr_keras.data.jax_stream``); ``token_arrays`` returns the first examples of a split
as NumPy, to compare with ``data.token_arrays``. The JAX twins of the token aggregations
(``JAX_RULES``) serve the block kind too. This module imports JAX and Keras, never
TensorFlow.

Example:
    >>> from pvr_keras.kinds.token import jax_data
    >>> stream = jax_data.token_stream(TokenTask(window=2), 10_000, batch_size=256)
    >>> x, y = stream[0]          # jax.Arrays on the default device
    >>> x.shape, y.shape
    ((256, 11), (256,))
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.jax_stream import DeviceStream
from pvr_keras.data.jax_stream import collect as _collect
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.token import keys
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.tasks import aggregations

ARRAY_BATCH = 65_536


def _check_task(task):
    if not isinstance(task, TokenTask):
        raise ValueError(f"task must be a TokenTask; received {type(task).__name__}")
    return task


# The JAX rules take the window as a list of w (B,) int32 arrays and are elementwise only
# (no sort, no gather, no one-hot): XLA then makes the whole label one vectorised loop.
# O(w^2) comparisons for median and maj_vote, none depending on num_values.


def _mod_sum(window, num_values):
    return sum(window[1:], window[0]) % num_values


def _min(window, num_values):
    del num_values
    return functools.reduce(jnp.minimum, window)


def _max(window, num_values):
    del num_values
    return functools.reduce(jnp.maximum, window)


def _median(window, num_values):
    # The lower median is the value of rank (w - 1) // 2, ties ranked by position.
    del num_values
    w = len(window)
    out = jnp.zeros_like(window[0])
    for j, v in enumerate(window):
        rank = sum(
            ((u < v) | ((u == v) & (i < j))).astype(jnp.int32)
            for i, u in enumerate(window)
            if i != j
        )
        out = jnp.where(rank == (w - 1) // 2, v, out)
    return out


def _maj_vote(window, num_values):
    # Score count * num_values + (num_values - 1 - value) is distinct per value and
    # largest for the most common value, ties going to the smallest.
    best = None
    for v in window:
        count = sum((u == v).astype(jnp.int32) for u in window)
        score = count * num_values + (num_values - 1 - v)
        best = score if best is None else jnp.maximum(best, score)
    return num_values - 1 - best % num_values


# The JAX rules, by name (``tasks.aggregations.NUMPY``'s twins).
JAX_RULES = {"mod_sum": _mod_sum, "median": _median, "maj_vote": _maj_vote, "min": _min,
             "max": _max}  # fmt: skip


def jax_aggregate(aggregation, window, num_values):
    """JAX twin of ``tasks.aggregate`` on a window given as a list of w (B,) int32 arrays
    (an ``Aggregation`` of yours gets them stacked, (B, w))."""
    found = JAX_RULES.get(aggregation)
    if found is not None:
        return found(window, num_values)
    own = aggregations.rule(aggregation, "jax")
    return own(jnp.stack(window, axis=1), num_values).astype(jnp.int32)


def check_rule(aggregation, width, num_values):
    """An aggregation of yours agrees with its NumPy rule on JAX (jitted, as the examples
    are) before it makes any (``tasks.aggregations.check_backend``)."""
    if aggregation in JAX_RULES:
        return

    def compute(window, num_values):
        own = aggregations.rule(aggregation, "jax")
        return np.asarray(jax.jit(lambda w: own(w, num_values))(jnp.asarray(window, jnp.int32)))

    aggregations.check_backend(aggregation, "jax", compute, width=width, num_values=num_values)


def jax_label(task, x):
    """JAX twin of ``TokenTask.label``: x (B, seq_len) int32 -> (B,) int32."""
    pointers = x[:, 0] if task.pointer else jnp.zeros_like(x[:, 0])
    window = []
    for j in range(task.window):
        position = (pointers + j) % task.num_positions
        window.append(jnp.take_along_axis(x[:, 1:], position[:, None], axis=1)[:, 0])
    return jax_aggregate(task.aggregation, window, task.num_values)


def _check_holdout_size(task, holdout):
    # num_values ** window <= 2^53 is TokenTask.check_holdout's own limit.
    if holdout and task.num_values**task.window >= 2**31 and task.num_values >= 2**16:
        raise ValueError(
            f"device input decodes wide holdout windows for num_values < 2^16; received "
            f"{task.num_values} (use the tf.data input)"
        )


def _digits(code, task):
    """Base-num_values digits of int32 codes (B,): a list of w (B,) int32, most significant
    first."""
    return [
        (code // task.num_values ** (task.window - 1 - j)) % task.num_values
        for j in range(task.window)
    ]


def _wide_digits(code, task):
    """As ``_digits`` for (hi, lo) uint32 codes, by long division of 16-bit limbs."""
    hi, lo = code
    limbs = [hi >> 16, hi & 0xFFFF, lo >> 16, lo & 0xFFFF]  # most significant first
    d = jax_random.u32(task.num_values)
    digits = []
    for _ in range(task.window):
        rest, quotient = jnp.zeros_like(lo), []
        for limb in limbs:
            current = (rest << 16) | limb  # < num_values * 2^16 <= 2^32
            quotient.append(current // d)
            rest = current % d
        limbs = quotient
        digits.append(rest.astype(jnp.int32))
    return digits[::-1]


def _count_at_most(table, value):
    """#{j : table[j] <= value} for a sorted uint64 table (NumPy) and (hi, lo) values: a
    binary search of fixed length, the twin of ``tf.searchsorted(side="right")``."""
    t_hi = jnp.asarray((table >> 32).astype(np.uint32))
    t_lo = jnp.asarray((table & 0xFFFFFFFF).astype(np.uint32))
    lo = jnp.zeros(value[0].shape, jnp.int32)
    hi = jnp.full(value[0].shape, len(table), jnp.int32)
    for _ in range(int(len(table)).bit_length()):
        mid = (lo + hi) // 2
        at = jnp.minimum(mid, len(table) - 1)
        e_hi, e_lo = t_hi[at], t_lo[at]
        below = (e_hi < value[0]) | ((e_hi == value[0]) & (e_lo <= value[1]))
        go = lo < hi
        lo = jnp.where(go & below, mid + 1, lo)
        hi = jnp.where(go & ~below, mid, hi)
    return lo


def _window_draw(task, holdout, split, bits, index):
    """The twin of ``tf_data._window_draw``: the window digits as a list of w (B,) int32, or
    None (IID)."""
    if not holdout:
        return None
    codes = keys.held_out_codes(task, holdout)
    if split == "test":
        powers = task.num_values ** np.arange(task.window - 1, -1, -1, dtype=np.int64)
        table = (codes[:, None] // powers) % task.num_values  # (k, w), by sorted code
        pick = index % holdout
        return [jnp.asarray(table[:, j].astype(np.int32))[pick] for j in range(task.window)]
    size = task.num_values**task.window - holdout
    shifted = (codes - np.arange(len(codes), dtype=np.int64)).astype(np.uint64)
    if task.num_values**task.window < 2**31:
        rank = jax_random.uniform_int(bits, size)
        wide = rank.astype(jnp.uint32)
        skipped = _count_at_most(shifted, (jnp.zeros_like(wide), wide))
        return _digits(rank + skipped, task)
    rank = jax_random.uniform_wide(bits, size)
    skipped = _count_at_most(shifted, rank).astype(jnp.uint32)
    return _wide_digits(jax_random.add64(rank, (jnp.zeros_like(skipped), skipped)), task)


def make_examples(task, key, split, holdout=0):
    """Returns ``fn(index, constants=()) -> {"x", "y"}`` for (B,) uint32 example indices,
    traceable in ``jax.jit``: x int32 (B, seq_len), y int32 (B,), equal to
    ``tf_data.make_examples``.

    Slots of the hash: 0..seq_len-1 the tokens, seq_len the pointer, seq_len+1 the window.
    Written for XLA on a CPU as much as for an accelerator: the tokens are one elementwise
    (B, seq_len) computation (column 0 hashes the pointer's slot, so no concatenation, which
    would break XLA's vectorised loop), stored once before the label reads them.
    """
    _check_holdout_size(task, holdout)
    check_rule(task.aggregation, task.window, task.num_values)
    seq_len, n, w = task.seq_len, task.num_positions, task.window
    columns = [seq_len, *range(1, seq_len)]  # x[:, c] comes from slot columns[c]
    bounds = np.array([task.pointer_values] + [task.num_values] * n, np.uint32)
    position = np.arange(seq_len, dtype=np.int32) - 1  # value position of each column

    def examples(index, constants=()):
        del constants  # the token task reads no arrays
        example = jax_random.example_bits(key, index)
        x = jax_random.uniform_int(jax_random.slot_bits(example, columns), bounds)
        bits = jax_random.slot_bits(example, [seq_len + 1])
        window = _window_draw(task, holdout, split, (bits[0][:, 0], bits[1][:, 0]), index)
        if window is not None:
            # Value position q holds window digit (q - p) mod n when that is < w.
            offset = (position[None] - x[:, :1]) % n  # (B, seq_len)
            digit = sum(jnp.where(offset == j, d[:, None], 0) for j, d in enumerate(window))
            x = jnp.where((position[None] >= 0) & (offset < w), digit, x)
        # x % (2^31 - 1) is x (tokens are small), but XLA counts a remainder as expensive and
        # so does not fuse the tokens into the label's gather below, which would recompute
        # every hash it reads element by element: the tokens are made once, then read.
        x = x % np.int32(2**31 - 1)
        return {"x": x, "y": jax_label(task, x)}

    return examples


def _validate(request):
    """What a checked request may still ask that the device cannot make (``StreamRequest``
    checks its fields, the holdout included, once when it is made)."""
    _check_task(request.task)
    check_size(request.num_examples)  # (make_examples: the holdout's windows)


def token_stream(request=None, num_examples=None, /, **fields):
    """Batched token PVR examples made on the JAX device: ``token_dataset``'s twin.

    Args:
        request: a ``StreamRequest`` (``data.request``) of a ``TokenTask``, or the task, with
            ``num_examples`` (below 2^31) and the request's other fields as keywords, as
            ``token_dataset``: the same request gives the same examples in the same order.

    Returns:
        A ``DeviceStream`` (a ``keras.utils.PyDataset``) of (x int32 (batch, seq_len),
        y int32 (batch,)) ``jax.Array`` batches; ``stream.with_distribution(dp)`` shards
        them over a ``keras.distribution.DataParallel``.
    """
    r = stream_request(request, num_examples, fields, batch_size=1024)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    _validate(r)
    key = keys.stream_key(task, seed, split, holdout)
    return DeviceStream(
        make_examples(task, key, split, holdout),
        num_examples,
        r.batch_size,
        key,
        shuffle=r.shuffle,
        epochs=r.epochs,
        first_epoch=r.first_epoch,
    )


def token_arrays(task, num_examples, *, split="train", seed=0, holdout=0):
    """The first ``num_examples`` examples of a split as NumPy arrays, in index order,
    made on the device: equal to ``data.token_arrays`` for the same arguments."""
    _check_task(task)
    request = StreamRequest(task, num_examples, split, seed, holdout, shuffle=False)
    num_examples = request.num_examples
    check_memory(check_size(num_examples), 8 * (task.seq_len + 1), "token_arrays")
    return _collect(token_stream(request.replace(batch_size=min(num_examples, ARRAY_BATCH))))
