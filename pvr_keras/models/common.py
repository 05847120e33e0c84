"""Small pieces every builder shares: argument checks, the inputs, and the checked model."""

import keras
import numpy as np

from pvr_keras import checks

MIN_IMAGE_SIZE = 32
IMAGE_CHANNELS = (1, 3)


def check_positive(**values):
    """Raises ValueError unless every keyword value is a positive integer."""
    for name, value in values.items():
        checks.check_positive(name, value)


def token_input(seq_len):
    """Integer token input, shape (batch, seq_len): the pointer and at least one value."""
    if not checks.is_integer(seq_len) or seq_len < 2:
        raise ValueError(
            f"seq_len must be an integer >= 2 (the pointer and at least one value); received "
            f"{seq_len!r}"
        )
    return keras.Input(shape=(seq_len,), dtype="int32", name="tokens")


def bits_input(num_bits):
    """Bits in {+1, -1} as int8, shape (batch, num_bits): the Boolean models' input."""
    checks.check_positive("num_bits", num_bits)
    return keras.Input(shape=(num_bits,), dtype="int8", name="bits")


def image_input(input_shape):
    """Float image input, shape (batch, height, width, channels), values in [0, 1].

    Raises:
        ValueError: unless ``input_shape`` is (height, width, channels) with height and width
            at least 32 and 1 or 3 channels.
    """
    if (
        not isinstance(input_shape, tuple | list)
        or len(input_shape) != 3
        or not all(checks.is_integer(s) for s in input_shape)
    ):
        raise ValueError(
            f"input_shape must be (height, width, channels) of integers; received {input_shape!r}"
        )
    height, width, channels = (int(s) for s in input_shape)
    if height < MIN_IMAGE_SIZE or width < MIN_IMAGE_SIZE:
        raise ValueError(
            f"input_shape height and width must be at least {MIN_IMAGE_SIZE}; "
            f"received {height}x{width}"
        )
    if channels not in IMAGE_CHANNELS:
        raise ValueError(f"input_shape channels must be 1 or 3; received {channels}")
    return keras.Input(shape=(height, width, channels), dtype="float32", name="images")


def _describe(shape):
    return "(" + ", ".join("batch" if s is None else str(s) for s in shape) + ")"


@keras.saving.register_keras_serializable(package="pvr_keras")
class CheckedModel(keras.Model):
    """A functional ``keras.Model`` that checks the rank, dtype and shape of what it is given.

    Plain functional models cast float tokens to int silently and add or drop a trailing axis
    of size 1; this one raises a ValueError that says what it takes and what it received,
    whether called directly or through ``fit``, ``predict`` or ``evaluate``. Token values are
    checked where they are on the host: a NumPy array given to the model (``model(x)``) must
    hold tokens in ``0..vocab-1``. A compiled call (``fit``, ``predict``, a jitted step) does
    not look at values (that would stop the device for the host): there an out-of-range token
    raises on some backends and devices and reads a clipped embedding row on others, so check
    data made elsewhere first (``TokenTask.label`` does).
    Build it like ``keras.Model``: ``CheckedModel(inputs, outputs, name=...)``.
    """

    def __call__(self, *args, **kwargs):
        # Checked here too so that a direct call fails before Keras wraps the message.
        self._check_input(args[0] if args else kwargs.get("inputs"))
        return super().__call__(*args, **kwargs)

    def call(self, inputs, training=None, mask=None, **kwargs):
        # JAX fit/predict reach call through stateless_call, never through __call__; the
        # inputs are still unconverted here (Functional casts them later).
        self._check_input(inputs)
        return super().call(inputs, training=training, mask=mask, **kwargs)

    def _check_input(self, x):
        if x is None:
            return
        spec = self.inputs[0]
        if isinstance(x, dict) and spec.name in x:
            x = x[spec.name]
        elif isinstance(x, list | tuple) and len(x) == 1 and hasattr(x[0], "shape"):
            x = x[0]  # [tensor], as Keras allows for a one-input model
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            x = np.asarray(x)
        dtype = keras.backend.standardize_dtype(x.dtype)
        expected = tuple(spec.shape)
        integer = "int" in spec.dtype
        kind = "integer" if integer else "floating-point"
        takes = f"model {self.name!r} takes {kind} inputs of shape {_describe(expected)}"
        if ("int" in dtype) != integer or (not integer and "float" not in dtype):
            raise ValueError(f"{takes}; received dtype {dtype}")
        shape = tuple(None if s is None else int(s) for s in x.shape)
        if len(shape) != len(expected) or any(
            e is not None and s is not None and e != s for s, e in zip(shape, expected, strict=True)
        ):
            raise ValueError(f"{takes}; received shape {shape}")
        if integer and isinstance(x, np.ndarray) and x.size and spec.name == "bits":
            if not np.isin(x, (-1, 1)).all():
                raise ValueError(
                    f"model {self.name!r} takes bits +1 / -1; received values in "
                    f"{x.min()}..{x.max()}"
                )
        elif integer and isinstance(x, np.ndarray) and x.size:
            vocab = self._vocab()
            if vocab is not None and (x.min() < 0 or x.max() >= vocab):
                raise ValueError(
                    f"model {self.name!r} takes tokens in 0..{vocab - 1}; received values in "
                    f"{x.min()}..{x.max()}"
                )

    def _vocab(self):
        """The token vocabulary: the input size of the ``embedding`` layer, if there is one."""
        try:
            return int(self.get_layer("embedding").input_dim)
        except (ValueError, AttributeError):
            return None
