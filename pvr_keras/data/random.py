"""Counter-based randomness: every random number is a pure function of (key, index, slot).

A stateless hash (the splitmix64 finaliser) turns an example index and a slot number into 64
random bits, so example ``i`` of a split never depends on batch size, shuffling, worker count
or how many examples came before it, and memory stays O(batch) for any dataset size.
"""

import tensorflow as tf

from pvr_keras.data.tf_setup import configure_devices

configure_devices()  # before any pipeline op: TensorFlow's GPUs (hidden under JAX)

# The keys are plain Python, shared with the JAX twin (jax_random.py); re-exported here.
# ruff: noqa: E402
from pvr_keras.data.keys import GOLDEN, MUL1, MUL2, SPLITS, check_seed, check_split, stream_key

__all__ = [
    "GOLDEN",
    "MUL1",
    "MUL2",
    "SPLITS",
    "check_seed",
    "check_split",
    "epoch_order",
    "random_bits",
    "stream_key",
    "uniform_int",
]


def _mix(z):
    """splitmix64 finaliser on a uint64 tensor (wrapping arithmetic)."""
    z = z + tf.constant(GOLDEN, tf.uint64)
    z = tf.bitwise.bitwise_xor(z, tf.bitwise.right_shift(z, tf.constant(30, tf.uint64)))
    z = z * tf.constant(MUL1, tf.uint64)
    z = tf.bitwise.bitwise_xor(z, tf.bitwise.right_shift(z, tf.constant(27, tf.uint64)))
    z = z * tf.constant(MUL2, tf.uint64)
    return tf.bitwise.bitwise_xor(z, tf.bitwise.right_shift(z, tf.constant(31, tf.uint64)))


def random_bits(key, index, num_slots):
    """64 random bits per (example, slot): index (B,) int64 -> (B, num_slots) uint64."""
    example = _mix(tf.cast(index, tf.uint64) + tf.constant(key, tf.uint64))
    slots = tf.range(num_slots, dtype=tf.int64)
    return _mix(tf.bitwise.bitwise_xor(example[:, None], _mix(tf.cast(slots, tf.uint64))[None]))


def uniform_int(bits, maxval):
    """Integers uniform in [0, maxval) from uint64 bits, as int64.

    Small ranges use the multiply-shift of the top 32 bits (bias below 2^-32 * maxval); large
    ranges (up to 2^53) go through a float64 in [0, 1).
    """
    maxval = int(maxval)
    if maxval < 2**31:
        high = tf.bitwise.right_shift(bits, tf.constant(32, tf.uint64))
        scaled = tf.bitwise.right_shift(
            high * tf.constant(maxval, tf.uint64), tf.constant(32, tf.uint64)
        )
        return tf.cast(scaled, tf.int64)
    unit = tf.cast(tf.bitwise.right_shift(bits, tf.constant(11, tf.uint64)), tf.float64)
    unit = unit * (1.0 / 2**53)
    return tf.minimum(tf.cast(tf.floor(unit * maxval), tf.int64), maxval - 1)


def epoch_order(num_examples, batch_start, batch_size, key, epoch, shuffle):
    """Example indices of one batch of one epoch: (<= batch_size,) int64.

    With ``shuffle`` the epoch's order is a pseudo-random permutation of [0, N) keyed by
    (key, epoch) (``tf.random.experimental.index_shuffle``): a bijection computed per index,
    so no permutation of N indices is ever held in memory.
    """
    stop = tf.minimum(batch_start + batch_size, num_examples)
    positions = tf.range(batch_start, stop, dtype=tf.int64)
    if not shuffle:
        return positions
    seed = tf.stack([tf.constant(key & 0x7FFFFFFFFFFFFFFF, tf.int64), tf.cast(epoch, tf.int64)])
    return tf.random.experimental.index_shuffle(positions, seed=seed, max_index=num_examples - 1)
