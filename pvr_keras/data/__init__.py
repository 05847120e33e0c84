"""Data for every PVR task: tf.data pipelines, and their JAX twins made on the device.

A kind keeps its generators in its folder, one module an engine (``pvr_keras/kinds/<name>/``:
``tf_data``, ``jax_data``, ``numpy_data``); this package holds what the generators share,
named the same way: the random bits (``random`` for tf.data, its twins ``jax_random`` and
``numpy_random``), the batching (``pipeline`` for tf.data, ``jax_stream`` for batches made on
the JAX device), ``keys``, ``request``, ``images``, ``checks``, ``tf_setup``; and it names the
public generators (``token_dataset``, ``block_arrays``, ...) wherever they live.
``numpy_examples`` gathers the token and Boolean kinds' ``numpy_data`` examples, and ``seen``
is an alias of ``kinds.boolean.keys``, kept for the path it had.

The tf.data modules are the only ones that import tensorflow directly; the first of them to
load sets TensorFlow's devices (``tf_setup.configure_devices``: GPUs hidden under JAX, memory
growth under TensorFlow) before any op. The device twins import JAX, and the token and
Boolean ones never TensorFlow, so this package loads its members lazily:
``from pvr_keras.kinds.token import jax_data`` does not start TensorFlow.
"""

import importlib

# name -> its module: a module of this package, or a full path (a kind's folder)
_MEMBERS = {
    "chain_arrays": "pvr_keras.kinds.chain.numpy_data",
    "boolean_arrays": "pvr_keras.kinds.boolean.tf_data",
    "boolean_dataset": "pvr_keras.kinds.boolean.tf_data",
    "block_arrays": "pvr_keras.kinds.block.tf_data",
    "block_dataset": "pvr_keras.kinds.block.tf_data",
    "load_images": "images",
    "sequence_arrays": "pvr_keras.kinds.sequence.tf_data",
    "sequence_dataset": "pvr_keras.kinds.sequence.tf_data",
    "StreamRequest": "request",
    "token_arrays": "pvr_keras.kinds.token.tf_data",
    "token_dataset": "pvr_keras.kinds.token.tf_data",
}

__all__ = sorted(_MEMBERS)


def __getattr__(name):
    if name in _MEMBERS:
        module = _MEMBERS[name]  # a module of this package, or a kind's (a dotted path)
        module = module if "." in module else f"pvr_keras.data.{module}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'pvr_keras.data' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_MEMBERS))
