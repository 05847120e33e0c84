"""Counter-based randomness: every random number is a pure function of (key, index, slot).

A stateless hash (the splitmix64 finaliser) turns an example index and a slot number into 64
random bits, so example ``i`` of a split never depends on batch size, shuffling, worker count
or how many examples came before it, and memory stays O(batch) for any dataset size.
"""

import numpy as np
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
    "check_schedule",
    "check_seed",
    "check_split",
    "epoch_order",
    "epochs_dataset",
    "random_bits",
    "stream_key",
    "uniform_int",
]


def check_schedule(epochs, first_epoch):
    """Validates ``epochs`` (positive or None) and ``first_epoch`` (non-negative)."""
    if epochs is not None and (
        isinstance(epochs, bool) or not isinstance(epochs, int | np.integer) or epochs < 1
    ):
        raise ValueError(f"epochs must be a positive integer or None; received {epochs!r}")
    bad = isinstance(first_epoch, bool) or not isinstance(first_epoch, int | np.integer)
    if bad or first_epoch < 0:
        raise ValueError(f"first_epoch must be a non-negative integer; received {first_epoch!r}")


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


def epochs_dataset(one_epoch, num_batches, *, first_epoch, epochs, shuffle):
    """The batches of ``epochs`` passes, ``one_epoch(epoch)`` each, from ``first_epoch``.

    ``one_epoch`` maps an int64 epoch number to a dataset of that pass's ``num_batches``
    batches (in the pass's order, keyed by the number). ``epochs=None`` runs forever.

    With ``shuffle`` and a finite ``epochs``, iterating the dataset again goes on to the next
    epochs, as ``model.fit(ds, epochs=N)`` does once per epoch: epoch ``e`` of ``fit`` sees
    the order of epoch ``first_epoch + e`` instead of replaying the first, and
    ``first_epoch=k`` with ``fit(..., initial_epoch=k)`` resumes the orders of an
    uninterrupted run. The count lives in a variable of the dataset and moves on when a
    pass's last batch is consumed, so an iterator that reads one batch and is dropped (Keras
    on JAX takes one to build the model) does not skip an epoch. A pass of one batch is the
    exception: that peek counts as the pass, which changes nothing a model can see (the same
    examples, reordered within the one batch).
    """
    check_schedule(epochs, first_epoch)
    counting = bool(shuffle and epochs)
    if counting:
        upcoming = tf.Variable(first_epoch, dtype=tf.int64, trainable=False, name="next_epoch")
        start = tf.data.Dataset.from_tensors(0).map(lambda _: upcoming.read_value())
        numbers = start.flat_map(lambda s: tf.data.Dataset.range(s, s + epochs))
    else:  # an unshuffled order has no epoch; a stream forever is iterated once
        stop = first_epoch + epochs if epochs else 2**62
        numbers = tf.data.Dataset.range(first_epoch, stop)
    ds = numbers.flat_map(one_epoch)
    # flat_map hides the length; state it so Keras and progress bars know it.
    ds = ds.apply(
        tf.data.experimental.assert_cardinality(
            num_batches * epochs if epochs else tf.data.INFINITE_CARDINALITY
        )
    )
    ds = ds.prefetch(tf.data.AUTOTUNE)
    if not counting:
        return ds

    def count(i, batch):
        # After the prefetch, so it runs when the consumer takes the batch, not ahead of it.
        last = tf.equal(tf.math.floormod(i, num_batches), num_batches - 1)
        done = tf.cond(last, lambda: upcoming.assign_add(1), lambda: upcoming.read_value())
        with tf.control_dependencies([done]):
            return tf.nest.map_structure(tf.identity, batch)

    return ds.enumerate().map(count)
