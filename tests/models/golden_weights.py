"""Weights and inputs of the golden fixtures, made from their names alone (NumPy only).

``tools/generate/make_golden.py`` fills torchvision's models with ``tensor(name, shape)`` for every
entry of their ``state_dict`` and records the logits; ``test_golden.py`` fills our Keras
models with the same arrays by the same names and compares. So a fixture stores only the
logits and a digest of each array (made again here, bit for bit: NumPy's PCG64 stream and
``Generator.random`` are stable across versions; the digests would say if not).
"""

import hashlib
import zlib

import numpy as np


def _rng(seed, *words):
    return np.random.default_rng([seed, *words])


def tensor(name, shape, seed=0):
    """float32 values of the torch parameter or buffer ``name`` of ``shape`` (torch layout).

    Uniform, scaled by kind so activations stay O(1) through deep stacks: conv and linear
    weights He-uniform over their fan-in; BatchNorm scales in [0.5, 1.5], shifts and running
    means in [-0.3, 0.3], running variances in [0.5, 1.5] (so eps, the affine part and the
    running statistics all count); biases in [-0.3, 0.3].
    """
    shape = tuple(int(s) for s in shape)
    unit = _rng(seed, zlib.crc32(name.encode())).random(shape) * 2 - 1  # U(-1, 1)
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "running_var":
        value = 1.0 + 0.5 * unit
    elif leaf == "weight" and len(shape) == 1:  # BatchNorm scale
        value = 1.0 + 0.5 * unit
    elif leaf == "weight":
        value = unit * np.sqrt(6.0 / np.prod(shape[1:]))
    else:  # bias, running_mean
        value = 0.3 * unit
    return value.astype(np.float32)


def inputs(shape, seed=0):
    """float32 images in [0, 1] of ``shape`` (batch, height, width, channels)."""
    return _rng(seed, 1).random(tuple(shape)).astype(np.float32)


def digest(array):
    """16 hex digits of SHA-256 over the array's float32 bytes."""
    return hashlib.sha256(np.ascontiguousarray(array, np.float32).tobytes()).hexdigest()[:16]
