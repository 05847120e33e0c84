"""The batching every tf.data stream shares: chunked, keyed by example index, epoch after epoch.

Example ``i`` of a split is ``examples(index)`` of a task's generator, a pure function of the
index; a stream visits [0, N) once per epoch in an order keyed by (stream key, epoch)
(``random.epoch_order``), makes many batches per XLA call and slices them, and counts its
epochs across iterations (``epochs_dataset``). A kind's ``tf_data`` module (``kinds/<name>/``)
keeps only what is specific to its task: the generator.
"""

import math

import numpy as np
import tensorflow as tf

from pvr_keras.data import random
from pvr_keras.data.checks import check_instance, check_positive, check_schedule

__all__ = [
    "batched_dataset",
    "check_instance",
    "check_positive",
    "check_schedule",
    "collect_arrays",
    "epochs_dataset",
]


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


CHUNK_EXAMPLES = 1024  # examples made per map call (by default); sliced into batches after


def batched_dataset(
    examples, num_examples, batch_size, key, *, shuffle, epochs, first_epoch, outputs,
    chunk_examples=CHUNK_EXAMPLES,
):  # fmt: skip
    """Batches of ``examples(index)`` over ``epochs`` passes.

    ``examples`` maps (B,) int64 example indices to a dict; ``outputs`` names the keys
    yielded (a tuple of tensors). Each epoch visits [0, num_examples) in an order keyed by
    (key, epoch), so a resumed run (``first_epoch``) sees the same order. Small batches are
    made ``chunk_examples`` at a time (whole batches) and then sliced, because per-op
    overhead would dominate a small batch; the batches are the same either way.
    """
    check_schedule(epochs, first_epoch)
    num_batches = math.ceil(num_examples / batch_size)
    per_chunk = max(1, chunk_examples // batch_size)  # batches per chunk
    num_chunks = math.ceil(num_batches / per_chunk)

    def chunk(epoch, c):
        start, size = c * per_chunk * batch_size, per_chunk * batch_size
        out = examples(random.epoch_order(num_examples, start, size, key, epoch, shuffle))
        return tuple(out[name] for name in outputs)

    def epoch_batches(epoch):
        ds = tf.data.Dataset.range(num_chunks).map(
            lambda c: chunk(epoch, c), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
        )
        # Every chunk but the epoch's last holds whole batches, so this only slices; per
        # epoch, so that no batch spans two epochs.
        return ds.rebatch(batch_size) if per_chunk > 1 else ds

    return epochs_dataset(
        epoch_batches, num_batches, first_epoch=first_epoch, epochs=epochs, shuffle=shuffle
    )


def collect_arrays(examples, num_examples, key, names):
    """Runs ``examples`` over indices 0..num_examples-1 in index order and returns NumPy
    ``x, y, info`` where ``info`` maps ``names[2:]`` to the extra outputs."""
    ds = batched_dataset(
        examples,
        num_examples,
        min(num_examples, 1024),
        key,
        shuffle=False,
        epochs=1,
        first_epoch=0,
        outputs=names,
    )
    parts = list(zip(*((t.numpy() for t in batch) for batch in ds), strict=True))
    x, y, *rest = (np.concatenate(part) for part in parts)
    return x, y, dict(zip(names[2:], rest, strict=True))
