"""The argument checks every stream shares (tf.data and device twins alike): no TensorFlow,
no JAX, so that either side can import them."""

import numpy as np


def check_positive(name, value):
    """``value`` must be a positive integer; returns it as an int."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer; received {value!r}")
    return int(value)


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
