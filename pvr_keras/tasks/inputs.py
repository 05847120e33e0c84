"""The check of a rule's input arrays that the kinds' rules share (token, block, chain)."""

import numpy as np


def integer_tokens(x, name="tokens"):
    """``x`` as an int64 array, refusing values that are not whole numbers (1.7, NaN, inf):
    a float array of whole numbers is read as they are, nothing is rounded."""
    x = np.asarray(x)
    if x.dtype.kind in "iu":
        return x.astype(np.int64, copy=False)
    if x.dtype.kind == "b" or x.dtype.kind not in "f":
        raise ValueError(f"{name} must be integers; received dtype {x.dtype}")
    if not np.isfinite(x).all() or (x != np.round(x)).any():
        bad = x[~np.isfinite(x) | (x != np.round(x))].ravel()[:3]
        raise ValueError(f"{name} must be whole numbers; received values such as {bad.tolist()}")
    return x.astype(np.int64)
