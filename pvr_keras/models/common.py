"""Small pieces every builder shares: argument checks and the token input."""

import keras


def check_positive(**values):
    """Raises ValueError unless every keyword value is a positive integer."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer; received {value!r}")


def token_input(seq_len):
    """Integer token input, shape (batch, seq_len)."""
    return keras.Input(shape=(seq_len,), dtype="int32", name="tokens")
