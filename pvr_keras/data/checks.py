"""The argument checks every stream shares (tf.data and device twins alike): no TensorFlow,
no JAX, so that either side can import them. The general checks live in ``pvr_keras.checks``;
these are the streams' own."""

import numpy as np

from pvr_keras.checks import (  # noqa: F401  (the streams' checks, in one import)
    MAX_EXAMPLES,
    MAX_INDEX,
    check_instance,
    check_int,
    check_positive,
    is_integer,
    memory_bytes,
)


def check_size(num_examples):
    """A split's size: a positive integer below 2**31 (example indices are int32)."""
    n = check_positive("num_examples", num_examples)
    if n > MAX_EXAMPLES:
        raise ValueError(f"num_examples must be at most 2**31 - 1; received {n:,}")
    return n


def check_memory(num_examples, bytes_per_example, what):
    """Refuses an array call that would need more memory than this machine has, saying how
    much it needs (streams need O(batch): use them for more)."""
    need = num_examples * bytes_per_example
    have = memory_bytes()
    if have is not None and need > have // 2:
        raise ValueError(
            f"{what} of {num_examples:,} examples needs about {need / 1e9:.1f} GB, more than "
            f"half of this machine's {have / 1e9:.0f} GB; take fewer, or stream them (the "
            f"*_dataset / *_stream functions need memory for one batch)"
        )
    return need


def check_schedule(epochs, first_epoch):
    """Validates ``epochs`` (positive or None) and ``first_epoch`` (non-negative)."""
    if epochs is not None and (not is_integer(epochs) or epochs < 1):
        raise ValueError(f"epochs must be a positive integer or None; received {epochs!r}")
    check_int("first_epoch", first_epoch, 0)


def check_index(index):
    """Example indices: a 1-D array of non-negative integers, as int64 (the NumPy examples'
    ``index``)."""
    index = np.asarray(index)
    if index.dtype == object and index.ndim == 1 and all(map(is_integer, index.tolist())):
        largest = max(index.tolist())  # Python ints NumPy holds in no integer dtype
        if largest >= MAX_INDEX:
            raise ValueError(f"indices must fit int64; received {largest}")
    if index.ndim != 1 or not (index.size == 0 or np.issubdtype(index.dtype, np.integer)):
        raise ValueError(f"index must be a 1-D array of integers; received {index!r:.80}")
    if index.size and index.min() < 0:
        raise ValueError(f"indices must be non-negative; received {int(index.min())}")
    if index.dtype.kind == "u" and index.size and index.max() >= MAX_INDEX:  # a cast would wrap
        raise ValueError(f"indices must fit int64; received {int(index.max())}")
    return index.astype(np.int64)
