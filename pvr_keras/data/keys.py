"""Stream keys: the 64-bit key of every random stream, in plain Python (no TensorFlow, no JAX).

Both twins of the generator, tf.data (``random.py``, ``token.py``) and JAX on the device
(``jax_random.py``, ``device.py``), hash an example index under one of these keys, so they
share this module and the keys are equal by construction.
"""

import numpy as np

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


def token_stream_key(task, seed, split, holdout, *salt):
    """The key of a token stream: (seed, split, holdout), plus the held-out tuple when it is
    not the default one (so the default streams never change)."""
    values = ()
    if holdout and task.holdout_values is not None:
        # >= 2: never equal to a sequence stream's image salt (1) in the same place.
        values = (
            2 + int(np.ravel_multi_index(task.holdout_values, (task.num_values,) * task.window)),
        )
    return stream_key(seed, split, holdout, *values, *salt)


def held_out_codes(task, holdout):
    """Held-out windows as sorted base-num_values codes (first window value most significant):
    (k,) int64, Python-int exact (``num_values ** window`` may pass 2^32)."""
    tuples = task.holdout_tuples(holdout)
    powers = task.num_values ** np.arange(task.window - 1, -1, -1, dtype=np.int64)
    return np.sort(tuples @ powers)
