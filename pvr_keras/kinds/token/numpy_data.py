"""Token examples in plain NumPy: example i of a split, by index (no TensorFlow, no JAX).

The third twin of the generators, after tf.data (``tf_data``) and JAX (``jax_data``): the same
slots (``keys``), the same bits (``pvr_keras.data.numpy_random``), the same draws and the
labels of ``TokenTask.label``, so any index array gives the rows the streams give for those
indices (a PyTorch ``DataLoader`` worker imports only this). Memory is O(len(index)).

    >>> from pvr_keras.kinds.token.task import TokenTask
    >>> x, y = token_examples(TokenTask(window=2), [0, 1, 2], seed=0, split="test")
    >>> x.shape, y.shape, x.dtype.name, y.dtype.name
    ((3, 11), (3,), 'int32', 'int32')
"""

import numpy as np

from pvr_keras.data import numpy_random
from pvr_keras.data.checks import check_index
from pvr_keras.data.keys import check_split
from pvr_keras.kinds.token import keys
from pvr_keras.kinds.token.task import TokenTask


def _window_draw(task, holdout, split, bits, index):
    """``tf_data._window_draw`` in NumPy: window digits (B, w), or None when all are allowed."""
    if not holdout:
        return None
    codes = keys.held_out_codes(task, holdout)
    powers = task.num_values ** np.arange(task.window - 1, -1, -1, dtype=np.int64)
    if split == "test":
        picked = codes[index % holdout]
    else:
        rank = numpy_random.uniform_int(bits, task.num_values**task.window - holdout)
        shifted = codes - np.arange(len(codes), dtype=np.int64)
        picked = rank + np.searchsorted(shifted, rank, side="right")
    return (picked[:, None] // powers) % task.num_values


def token_examples(task, index, *, seed=0, split="train", holdout=0):
    """Examples ``index`` of a token split: x int32 (B, seq_len), y int32 (B,), the rows that
    ``token_dataset`` / ``token_arrays`` give for these indices."""
    if not isinstance(task, TokenTask):
        raise ValueError(f"task must be a TokenTask; received {type(task).__name__}")
    check_split(split)
    task.check_holdout(holdout)
    index = check_index(index)
    key = keys.stream_key(task, seed, split, holdout)
    bits = numpy_random.random_bits(key, index, keys.num_slots(task))
    x = numpy_random.uniform_int(bits[:, : task.seq_len], task.num_values)
    x[:, 0] = numpy_random.uniform_int(bits[:, task.seq_len], task.pointer_values)
    window = _window_draw(task, holdout, split, bits[:, task.seq_len + 1], index)
    if window is not None:
        n = task.num_positions
        offset = (np.arange(n, dtype=np.int64)[None] - x[:, :1]) % n
        digits = np.take_along_axis(window, np.minimum(offset, task.window - 1), axis=1)
        x[:, 1:] = np.where(offset < task.window, digits, x[:, 1:])
    return x.astype(np.int32), task.label(x).astype(np.int32)
