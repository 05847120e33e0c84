"""tf.data pipelines for every PVR task; the only package that imports tensorflow directly."""

from pvr_keras.data.token import token_arrays, token_dataset

__all__ = ["token_arrays", "token_dataset"]
