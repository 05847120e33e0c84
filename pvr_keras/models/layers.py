"""The few custom layers the builders need: class token, position embedding, a bias, adaptive
pooling, and the Boolean models' reading of bits.

Each one uses ``keras.ops`` only, passes ``**kwargs`` to ``Layer`` and implements
``get_config``, so a saved ``.keras`` file reloads with ``safe_mode=True`` on either backend.
"""

import math

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="pvr_keras")
class ClassToken(keras.layers.Layer):
    """Prepends one learnable token to a sequence (ViT's class token, Dosovitskiy et al.).

    (batch, tokens, dim) -> (batch, tokens + 1, dim); ``dim`` parameters, initialised to zero.

    Example:
        >>> ClassToken()(np.zeros((2, 11, 8), "float32")).shape
        (2, 12, 8)
    """

    def build(self, input_shape):
        self.token = self.add_weight(
            shape=(1, 1, input_shape[-1]), initializer="zeros", name="token"
        )

    def call(self, x):
        token = ops.cast(self.token, x.dtype)
        token = ops.broadcast_to(token, (ops.shape(x)[0], 1, ops.shape(x)[2]))
        return ops.concatenate([token, x], axis=1)

    def compute_output_shape(self, input_shape):
        tokens = None if input_shape[1] is None else input_shape[1] + 1
        return (input_shape[0], tokens, input_shape[2])


@keras.saving.register_keras_serializable(package="pvr_keras")
class PositionEmbedding(keras.layers.Layer):
    """Adds a learnable embedding per position: ``tokens * dim`` parameters.

    Args:
        stddev: standard deviation of the normal initialiser (ViT uses 0.02).

    Example:
        >>> PositionEmbedding()(np.zeros((2, 12, 8), "float32")).shape
        (2, 12, 8)
    """

    def __init__(self, stddev=0.02, **kwargs):
        super().__init__(**kwargs)
        self.stddev = stddev

    def build(self, input_shape):
        if input_shape[1] is None:
            raise ValueError(
                f"PositionEmbedding needs a fixed number of tokens; received shape {input_shape}"
            )
        self.embedding = self.add_weight(
            shape=(1, input_shape[1], input_shape[2]),
            initializer=keras.initializers.RandomNormal(stddev=self.stddev),
            name="embedding",
        )

    def call(self, x):
        return x + ops.cast(self.embedding, x.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev}


@keras.saving.register_keras_serializable(package="pvr_keras")
class AddBias(keras.layers.Layer):
    """Adds a learnable vector along the last axis: ``dim`` parameters, initialised to zero
    (a projection's bias where Keras's layer cannot have it alone, e.g. the output bias of an
    attention without query/key/value biases).

    Example:
        >>> AddBias()(np.zeros((2, 12, 8), "float32")).shape
        (2, 12, 8)
    """

    def build(self, input_shape):
        self.bias = self.add_weight(shape=(input_shape[-1],), initializer="zeros", name="bias")

    def call(self, x):
        return x + ops.cast(self.bias, x.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape


def adaptive_pool_matrix(in_size, out_size):
    """(out_size, in_size) averaging matrix of torch's ``AdaptiveAvgPool`` along one axis.

    Output ``i`` averages inputs ``floor(i * in / out)`` up to ``ceil((i + 1) * in / out)``
    (exclusive), torch's bin rule; bins overlap when ``in`` is not a multiple of ``out`` and
    repeat inputs when ``in < out``.
    """
    matrix = np.zeros((out_size, in_size), dtype="float32")
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = math.ceil((i + 1) * in_size / out_size)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix


@keras.saving.register_keras_serializable(package="pvr_keras")
class AdaptiveAveragePooling2D(keras.layers.Layer):
    """torch's ``AdaptiveAvgPool2d`` for channels-last inputs of a static spatial size.

    Written as two fixed averaging matrices applied with one einsum, exact for every input
    size (``keras.layers.AdaptiveAveragePooling2D`` on JAX in Keras 3.15 gets some sizes
    wrong, e.g. a 2x3 map pooled to 7x7). No parameters.

    Args:
        output_size: (height, width) of the output.

    Example:
        >>> AdaptiveAveragePooling2D((7, 7))(np.zeros((2, 1, 1, 4), "float32")).shape
        (2, 7, 7, 4)
    """

    def __init__(self, output_size=(7, 7), **kwargs):
        super().__init__(**kwargs)
        self.output_size = tuple(int(s) for s in output_size)

    def build(self, input_shape):
        height, width = input_shape[1], input_shape[2]
        if height is None or width is None:
            raise ValueError(
                "AdaptiveAveragePooling2D needs a static height and width; "
                f"received shape {input_shape}"
            )
        self._rows = adaptive_pool_matrix(height, self.output_size[0])  # (out_h, h)
        self._cols = adaptive_pool_matrix(width, self.output_size[1])  # (out_w, w)

    def call(self, x):
        rows = ops.convert_to_tensor(self._rows, dtype=x.dtype)
        cols = ops.convert_to_tensor(self._cols, dtype=x.dtype)
        return ops.einsum("bhwc,ih,jw->bijc", x, rows, cols)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *self.output_size, input_shape[3])

    def get_config(self):
        return {**super().get_config(), "output_size": self.output_size}


@keras.saving.register_keras_serializable(package="pvr_keras")
class ReadBits(keras.layers.Layer):
    """Bits in {+1, -1} (any integer or float dtype) as the Boolean models read them:
    ``as_tokens=False``: float32 +1.0 / -1.0; ``as_tokens=True``: int32 tokens 0 for +1 and
    1 for -1 (the cube's row bits, for the token models' embeddings). No parameters.
    """

    def __init__(self, as_tokens=False, **kwargs):
        super().__init__(**kwargs)
        self.as_tokens = bool(as_tokens)

    def call(self, bits):
        x = ops.cast(bits, "float32")
        if self.as_tokens:
            return ops.cast((1.0 - x) / 2.0, "int32")
        return x

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "as_tokens": self.as_tokens}
