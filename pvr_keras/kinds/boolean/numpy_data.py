"""Boolean examples in plain NumPy: example ``i`` of a split, by index.

The third twin of the Boolean generators, after tf.data (``tf_data``) and JAX (``jax_data``):
the same key and draws (``keys``) and the labels of the tasks' own NumPy rules, so any index
array gives the rows the streams give for those indices, with no TensorFlow and no JAX (a
PyTorch ``DataLoader`` worker, the benchmark sources). Memory is O(len(index)).

    >>> x, y = boolean_examples(f3(), [0, 1, 2], seed=0, split="test")
    >>> x.shape, y.shape, x.dtype.name, y.dtype.name
    ((3, 11), (3,), 'int8', 'float32')
"""

import numpy as np

from pvr_keras.data import numpy_random
from pvr_keras.data.checks import check_index
from pvr_keras.data.keys import check_split
from pvr_keras.kinds.boolean import keys
from pvr_keras.kinds.boolean.keys import draw_plan, pattern_columns
from pvr_keras.kinds.boolean.task import check_target, frozen_bits, split_frozen


def boolean_examples(task, index, *, seed=0, split="train", holdout=0):
    """Examples ``index`` of a Boolean split: x int8 (B, d) of +1/-1, y float32 (B,), the rows
    that ``boolean_dataset`` / ``boolean_arrays`` give (``holdout``: the frozen-bit mask; a
    task's seen ``domain`` and ``draw``: ``keys.draw_plan``)."""
    check_target(task)
    check_split(split)
    frozen_bits(holdout, task.num_bits)
    index = check_index(index)
    frozen = split_frozen(task, holdout, split)
    key = keys.stream_key(task.num_bits, seed, split, frozen)
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


__all__ = ["boolean_examples", "boolean_points"]
