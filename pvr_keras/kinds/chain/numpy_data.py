"""Chain examples in plain NumPy: example i of a split, by index (no TensorFlow, no JAX).

The NumPy twin of ``tf_data`` and ``jax_data``: the same slots (``keys``), the same bits
(``pvr_keras.data.numpy_random``), the same draws, so any index array gives the rows the
streams give for those indices. ``chain_arrays`` (``data.chain_arrays``) is the kind's
arrays function: the first n examples of a split.

    >>> from pvr_keras.kinds.chain.task import ChainTask
    >>> task = ChainTask(length=40, hops=(1, 2, 3, 4))
    >>> x, y = chain_arrays(task, 1000, split="train", seed=0)
    >>> x.shape, y.shape, bool((task.label(x) == y).all())
    ((1000, 40), (1000,), True)
"""

import numpy as np

from pvr_keras.data import numpy_random
from pvr_keras.data.checks import check_index, check_memory, check_size
from pvr_keras.kinds.chain import keys
from pvr_keras.kinds.chain.task import ChainTask

ARRAY_BATCH = 65_536
_U64 = np.uint64


def uniform_below(bits, maxval):
    """Integers uniform in [0, maxval) for a bound per example ((B,) ints below 2^31): the
    multiply-shift of ``numpy_random.uniform_int``, row by row."""
    high = bits >> _U64(32)
    with np.errstate(over="ignore"):
        return ((high * np.asarray(maxval).astype(_U64)) >> _U64(32)).astype(np.int64)


def random_order(task, bits):
    """Positions 1..L-1 ranked by (order key, position): (B, L-1) int64 from slots 1..L-1."""
    shift = keys.position_bits(task)
    positions = np.arange(1, task.length, dtype=np.int64)
    keyed = ((bits >> _U64(32)).astype(np.int64) << shift) | positions
    return np.sort(keyed, axis=1) & ((1 << shift) - 1)


def build(task, split, bits):
    """(x int64 (B, seq_len), y int64 (B,)) from the (B, num_slots) bits of a batch."""
    table = np.asarray(task.split_hops(split), np.int64)
    hops = table[numpy_random.uniform_int(bits[:, 0], len(table))]
    length = task.length
    order = random_order(task, bits[:, 1:length])  # pi_1 .. pi_(L-1)
    rank = np.argsort(order, axis=1)  # rank[c - 1]: where position c is in the order
    if task.form == "cycle":
        after = np.concatenate([order, np.zeros((len(order), 1), np.int64)], axis=1)
        successor = np.take_along_axis(after, rank + 1, axis=1)  # of positions 1..L-1
        x = np.concatenate([hops[:, None], after[:, :1], successor], axis=1)
        return x, np.take_along_axis(after, hops[:, None], axis=1)[:, 0]
    chosen = rank < hops[:, None]  # positions 1..L-1 on the chain
    positions = np.arange(1, length, dtype=np.int64)
    pointers = np.sort(np.where(chosen, positions, length), axis=1)  # p1 < ... < pk, then L
    pointers = np.concatenate([pointers, np.full((len(order), 1), length)], axis=1)
    last = np.take_along_axis(pointers, hops[:, None] - 1, axis=1)[:, 0]  # pk
    label = uniform_below(bits[:, length], last + 1)
    count = np.cumsum(chosen, axis=1)  # position c is p_count when chosen
    following = np.take_along_axis(pointers, count, axis=1)  # p_(count + 1)
    filler = numpy_random.uniform_int(bits[:, length + 1 :], length)
    body = np.where(chosen, np.where(count < hops[:, None], following, label[:, None]), filler)
    return np.concatenate([pointers[:, :1], body], axis=1), label


def chain_examples(task, index, *, seed=0, split="train"):
    """Examples ``index`` of a chain split: x int32 (B, seq_len), y int32 (B,), the rows
    that ``chain_dataset`` and ``chain_stream`` give for these indices."""
    if not isinstance(task, ChainTask):
        raise ValueError(f"task must be a ChainTask; received {type(task).__name__}")
    index = check_index(index)
    key = keys.stream_key(seed, split)
    x, y = build(task, split, numpy_random.random_bits(key, index, keys.num_slots(task)))
    return x.astype(np.int32), y.astype(np.int32)


def chain_arrays(task, num_examples, *, split="train", seed=0, holdout=0):
    """The first ``num_examples`` examples of a split as NumPy arrays, in index order.

    Returns:
        x int32 (num_examples, seq_len) and y int32 (num_examples,): row i is example i of
        the split, as ``chain_dataset`` and ``chain_stream`` make it.
    """
    if not isinstance(task, ChainTask):
        raise ValueError(f"task must be a ChainTask; received {type(task).__name__}")
    task.check_holdout(holdout)
    keys.stream_key(seed, split)  # checks both
    n = check_size(num_examples)
    # The arrays, and the hash slots of one batch of them at a time.
    check_memory(n, 4 * (task.seq_len + 1), "chain_arrays")
    parts = [
        chain_examples(task, np.arange(start, min(start + ARRAY_BATCH, n)), seed=seed,
                       split=split)
        for start in range(0, n, ARRAY_BATCH)
    ]  # fmt: skip
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
