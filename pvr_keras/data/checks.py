"""The argument checks every stream shares (tf.data and device twins alike): no TensorFlow,
no JAX, so that either side can import them."""

import numpy as np


def check_positive(name, value):
    """``value`` must be a positive integer; returns it as an int."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer; received {value!r}")
    return int(value)


MAX_EXAMPLES = 2**31 - 1  # example indices are int32 on the device


def check_size(num_examples):
    """A split's size: a positive integer below 2**31 (example indices are int32)."""
    n = check_positive("num_examples", num_examples)
    if n > MAX_EXAMPLES:
        raise ValueError(f"num_examples must be at most 2**31 - 1; received {n:,}")
    return n


def check_memory(num_examples, bytes_per_example, what):
    """Refuses an array call that would need more memory than this machine has, saying how
    much it needs (streams need O(batch): use them for more)."""
    import os

    need = num_examples * bytes_per_example
    try:
        have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return need
    if need > have // 2:
        raise ValueError(
            f"{what} of {num_examples:,} examples needs about {need / 1e9:.1f} GB, more than "
            f"half of this machine's {have / 1e9:.0f} GB; take fewer, or stream them (the "
            f"*_dataset / *_stream functions need memory for one batch)"
        )
    return need


def check_schedule(epochs, first_epoch):
    """Validates ``epochs`` (positive or None) and ``first_epoch`` (non-negative)."""
    if epochs is not None and (
        isinstance(epochs, bool) or not isinstance(epochs, int | np.integer) or epochs < 1
    ):
        raise ValueError(f"epochs must be a positive integer or None; received {epochs!r}")
    bad = isinstance(first_epoch, bool) or not isinstance(first_epoch, int | np.integer)
    if bad or first_epoch < 0:
        raise ValueError(f"first_epoch must be a non-negative integer; received {first_epoch!r}")


def check_instance(name, value, cls):
    """``value`` must be a ``cls`` (e.g. the task of a stream); returns it."""
    if not isinstance(value, cls):
        raise ValueError(f"{name} must be a {cls.__name__}; received {type(value).__name__}")
    return value
