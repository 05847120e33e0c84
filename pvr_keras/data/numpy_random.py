"""The NumPy twin of ``random.py``: the same counter-based random bits, in NumPy's uint64.

No TensorFlow and no JAX: a PyTorch worker, a pandas notebook or a language-model harness gets
example ``i`` of any split as the very bits the tf.data and JAX streams use
(``tests/data/test_numpy_examples.py`` checks them equal bit for bit). uint64 arithmetic wraps
modulo 2^64 in NumPy arrays, as the splitmix64 finaliser needs.
"""

import numpy as np

from pvr_keras.data.keys import GOLDEN, MUL1, MUL2

_U64 = np.uint64


def _mix(z):
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + _U64(GOLDEN)
        z = (z ^ (z >> _U64(30))) * _U64(MUL1)
        z = (z ^ (z >> _U64(27))) * _U64(MUL2)
    return z ^ (z >> _U64(31))


def random_bits(key, index, num_slots):
    """64 random bits per (example, slot): index (B,) int -> (B, num_slots) uint64."""
    index = np.asarray(index, dtype=np.int64).astype(_U64)
    with np.errstate(over="ignore"):
        example = _mix(index + _U64(key))
    slots = _mix(np.arange(num_slots, dtype=_U64))
    return _mix(example[:, None] ^ slots[None])


def uniform_int(bits, maxval):
    """Integers uniform in [0, maxval) from uint64 bits, as int64 (``random.uniform_int``)."""
    maxval = int(maxval)
    if maxval < 2**31:
        high = bits >> _U64(32)
        with np.errstate(over="ignore"):
            return ((high * _U64(maxval)) >> _U64(32)).astype(np.int64)
    unit = (bits >> _U64(11)).astype(np.float64) * (1.0 / 2**53)
    return np.minimum(np.floor(unit * maxval).astype(np.int64), maxval - 1)
