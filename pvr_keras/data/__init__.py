"""tf.data pipelines for every PVR task; the only package that imports tensorflow directly."""

from pvr_keras.data.tf_setup import configure_devices

configure_devices()  # before any pipeline op: TensorFlow's GPUs (hidden under JAX)

# ruff: noqa: E402
from pvr_keras.data.block import block_arrays, block_dataset
from pvr_keras.data.images import load_images
from pvr_keras.data.sequence import sequence_arrays, sequence_dataset
from pvr_keras.data.token import token_arrays, token_dataset

__all__ = [
    "block_arrays",
    "block_dataset",
    "load_images",
    "sequence_arrays",
    "sequence_dataset",
    "token_arrays",
    "token_dataset",
]
