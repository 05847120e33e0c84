"""Boolean PVR examples in plain NumPy: example ``i`` of a split, by index.

The third twin of the generators, after tf.data (``boolean.py``) and JAX
(``device_boolean.py``): the same hash of (seed, split, holdout, index), the same draws and
the labels of the task's own NumPy rule, so any index array gives the rows the streams give
for those indices, with no TensorFlow and no JAX (a PyTorch ``DataLoader`` worker imports only
this). Memory is O(len(index)). The token kind's twin, ``token_examples``, is in its folder
(``pvr_keras.kinds.token.numpy_data``), re-exported here.
"""

import numpy as np

from pvr_keras.data import keys, numpy_random
from pvr_keras.data.seen import draw_plan, pattern_columns
from pvr_keras.kinds.token.numpy_data import token_examples  # noqa: F401  (an alias)
from pvr_keras.tasks.boolean import check_target, frozen_bits, split_frozen


def _index(index):
    index = np.asarray(index)
    if index.ndim != 1 or not (index.size == 0 or np.issubdtype(index.dtype, np.integer)):
        raise ValueError(f"index must be a 1-D array of integers; received {index!r:.80}")
    if index.size and index.min() < 0:
        raise ValueError(f"indices must be non-negative; received {int(index.min())}")
    return index.astype(np.int64)


def boolean_examples(task, index, *, seed=0, split="train", holdout=0):
    """Examples ``index`` of a Boolean split: x int8 (B, d) of +1/-1, y float32 (B,), the rows
    that ``boolean_dataset`` / ``boolean_arrays`` give (``holdout``: the frozen-bit mask; a
    task's seen ``domain`` and ``draw``: ``data.seen``)."""
    check_target(task)
    keys.check_split(split)
    frozen_bits(holdout, task.num_bits)
    index = _index(index)
    frozen = split_frozen(task, holdout, split)
    key = keys.boolean_stream_key(task.num_bits, seed, split, frozen)
    x = boolean_points(task, key, split, frozen, index)
    return x, task.label(x).astype(np.float32)


def boolean_points(task, key, split, frozen, index):
    """The bits of examples ``index`` of a Boolean stream with ``key``: int8 (B, d)."""
    d = task.num_bits
    plan = draw_plan(task, key, split)
    if plan.mode == "rows":
        rows = plan.table[index % len(plan.table)]
        return (1 - 2 * ((rows[:, None] >> np.arange(d)[None]) & 1)).astype(np.int8)
    bits = numpy_random.random_bits(key, index, 1 if plan.mode == "cube" else 2)
    ones = (bits[:, :1] >> np.arange(d, dtype=np.uint64)[None]) & np.uint64(1)
    x = 1 - 2 * ones.astype(np.int32)
    keep = np.array([not (frozen >> j) & 1 for j in range(d)])
    x = np.where(keep[None], x, 1)
    if plan.mode == "patterns":
        pattern = plan.table[numpy_random.uniform_int(bits[:, 1], len(plan.table))]
        inside, shift = pattern_columns(plan, d)
        x = np.where(inside[None], 1 - 2 * ((pattern[:, None] >> shift[None]) & 1), x)
    return x.astype(np.int8)
