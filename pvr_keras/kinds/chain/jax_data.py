"""Chain examples made on the JAX device: the twin of ``tf_data``, bit for bit, without
TensorFlow.

The same slots (``keys``), the same splitmix64 bits (``pvr_keras.data.jax_random``, uint32
pairs), the same draws and the same epoch orders as ``chain_dataset``; ``chain_stream``
serves the batches to ``model.fit`` as a ``DeviceStream`` (``pvr_keras.data.jax_stream``)
whose arrays are made, and stay, on the accelerator. Imports JAX and Keras, never TensorFlow.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_size
from pvr_keras.data.jax_stream import DeviceStream, collect
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.chain import keys
from pvr_keras.kinds.chain.task import ChainTask

ARRAY_BATCH = 65_536


def _take(params, index):
    return jnp.take_along_axis(params, index, axis=1)


def make_examples(task, key, split):
    """``fn(index, constants=()) -> {"x", "y"}`` for (B,) uint32 example indices, traceable
    in ``jax.jit``: x int32 (B, seq_len), y int32 (B,), equal to ``tf_data.make_examples``."""
    length = task.length
    table = np.asarray(task.split_hops(split), np.int32)
    positions = np.arange(1, length, dtype=np.int32)

    def examples(index, constants=()):
        del constants  # the chain task reads no arrays
        example = jax_random.example_bits(key, index)
        slot = jax_random.slot_bits(example, [0])[0][:, 0]
        hops = jnp.asarray(table)[jax_random.uniform_int(slot, len(table))]
        high = jax_random.slot_bits(example, range(1, length))[0]
        rows = jnp.broadcast_to(positions, high.shape)
        # Positions ranked by (key, position): the order tf_data sorts as one int64 key.
        _, order = lax.sort((high, rows), dimension=1, num_keys=2)
        rank = jnp.argsort(order, axis=1).astype(jnp.int32)
        zero = jnp.zeros((order.shape[0], 1), jnp.int32)
        if task.form == "cycle":
            after = jnp.concatenate([order, zero], axis=1)
            x = jnp.concatenate([hops[:, None], after[:, :1], _take(after, rank + 1)], axis=1)
            y = _take(after, hops[:, None])[:, 0]
            return {"x": x, "y": y}
        chosen = rank < hops[:, None]
        pointers = jnp.sort(jnp.where(chosen, rows, length), axis=1)
        pointers = jnp.concatenate([pointers, zero + length], axis=1)
        last = _take(pointers, hops[:, None] - 1)[:, 0]
        y = jax_random.uniform_int(jax_random.slot_bits(example, [length])[0][:, 0], last + 1)
        count = jnp.cumsum(chosen.astype(jnp.int32), axis=1)
        following = _take(pointers, count)
        filler_bits = jax_random.slot_bits(example, range(length + 1, 2 * length))[0]
        filler = jax_random.uniform_int(filler_bits, length)
        body = jnp.where(chosen, jnp.where(count < hops[:, None], following, y[:, None]), filler)
        return {"x": jnp.concatenate([pointers[:, :1], body], axis=1), "y": y}

    return examples


def _validate(request):
    """As ``tf_data._validate``: what a checked request may still ask that cannot be made."""
    if not isinstance(request.task, ChainTask):
        raise ValueError(f"task must be a ChainTask; received {type(request.task).__name__}")
    check_size(request.num_examples)


def chain_stream(request=None, num_examples=None, /, **fields):
    """Batched chain examples made on the JAX device: ``chain_dataset``'s twin (the same
    request gives the same examples in the same order).

    Returns:
        A ``DeviceStream`` (a ``keras.utils.PyDataset``) of (x int32 (batch, seq_len),
        y int32 (batch,)) ``jax.Array`` batches.
    """
    r = stream_request(request, num_examples, fields, batch_size=1024)  # checked when made
    _validate(r)
    key = keys.stream_key(r.seed, r.split)
    return DeviceStream(
        make_examples(r.task, key, r.split), r.num_examples, r.batch_size, key,
        shuffle=r.shuffle, epochs=r.epochs, first_epoch=r.first_epoch,
    )  # fmt: skip


def chain_arrays(task, num_examples, *, split="train", seed=0, holdout=0):
    """The first ``num_examples`` examples of a split as NumPy arrays, made on the device:
    equal to ``numpy_data.chain_arrays`` for the same arguments."""
    stream = chain_stream(
        StreamRequest(task, num_examples, split, seed, holdout, min(num_examples, ARRAY_BATCH),
                      shuffle=False)
    )  # fmt: skip
    return collect(stream)
