"""What the three token generators share, in plain Python: the stream key and the hash slots.

Example i of a split is a pure function of (seed, split, holdout, i): the 64-bit hash of i
under the split's key (``stream_key``, over ``pvr_keras.data.keys``), one hash per slot, read
the same way by NumPy (``numpy_data``), tf.data (``tf_data``) and JAX (``jax_data``):

- slots 1..seq_len-1: the value tokens, uniform in 0..num_values-1 (slot 0 is drawn and
  replaced by the pointer);
- slot seq_len: the pointer, uniform in 0..pointer_values-1;
- slot seq_len+1 (holdout-k only): the window, one base-num_values code drawn from the
  allowed windows (train) or example i's held-out tuple, i mod k (test).

The image-sequence kind draws its tokens from these streams too (its images from a second
stream, keyed with a salt).
"""

import numpy as np

from pvr_keras.data import keys
from pvr_keras.kinds.token.task import held_out_tuples


def stream_key(task, seed, split, holdout, *salt):
    """The key of a token stream: (seed, split, holdout), plus the held-out tuple when it is
    not the default one (so the default streams never change)."""
    values = ()
    if holdout and task.holdout_values is not None:
        # >= 2: never equal to a sequence stream's image salt (1) in the same place.
        values = (
            2 + int(np.ravel_multi_index(task.holdout_values, (task.num_values,) * task.window)),
        )
    return keys.stream_key(seed, split, holdout, *values, *salt)


def num_slots(task):
    """Hash slots per example: the tokens, the pointer and the window."""
    return task.seq_len + 2


def held_out_codes(task, holdout):
    """Held-out windows as sorted base-num_values codes (first window value most significant):
    (k,) int64, Python-int exact (``num_values ** window`` may pass 2^32). ``holdout`` is
    checked already (the generators': their request's)."""
    tuples = held_out_tuples(task, int(holdout))
    powers = task.num_values ** np.arange(task.window - 1, -1, -1, dtype=np.int64)
    return np.sort(tuples @ powers)
