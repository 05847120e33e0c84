"""Stream keys: the 64-bit key of every random stream, in plain Python (no TensorFlow, no JAX).

Every twin of a generator, tf.data (``random.py``), JAX on the device (``jax_random.py``)
and NumPy (``numpy_random.py``), hashes an example index under one of these keys, so they
share this module and the keys are equal by construction. A kind's own keys build on
``stream_key`` (the token kind's: ``pvr_keras.kinds.token.keys``).
"""

from pvr_keras.checks import check_choice, check_seed

GOLDEN = 0x9E3779B97F4A7C15
MUL1 = 0xBF58476D1CE4E5B9
MUL2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1
SPLITS = ("train", "test")


def mix_int(z):
    """splitmix64 finaliser on a Python int (used once per key, not per example)."""
    z = (z + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * MUL1) & MASK
    z = ((z ^ (z >> 27)) * MUL2) & MASK
    return z ^ (z >> 31)


def check_split(split):
    return check_choice("split", split, SPLITS)


def stream_key(seed, split, *salt):
    """The 64-bit key of one random stream: (seed, split, salt...) -> Python int.

    Train and test, and any two seeds, get unrelated keys, hence independent streams.
    """
    key = mix_int(check_seed(seed))
    for part in (SPLITS.index(check_split(split)) + 1, *salt):
        key = mix_int(key ^ mix_int(int(part)))
    return key
