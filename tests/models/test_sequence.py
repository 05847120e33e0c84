import keras
import numpy as np
import pytest

from pvr_keras import models
from pvr_keras.models import image_sequence
from pvr_keras.models.sequence import FoldSequence, UnfoldSequence
from pvr_keras.testing import run_model_test

TINY = {"conv_widths": (4,), "dim": 8, "widths": (16, 12), "depth": 1, "heads": 2, "mlp_dim": 8}
# Three 16x16 images per sequence: small, for fast compiles.
SMALL = {**TINY, "seq_len": 3, "image_shape": (16, 16, 1)}


def sequences(batch=4, seq_len=11, side=28):
    return np.random.default_rng(0).random((batch, seq_len, side, side, 1)).astype("float32")


@pytest.mark.parametrize(
    "head",
    [
        "mlp",
        pytest.param("transformer", marks=pytest.mark.slow),
        pytest.param("mixer", marks=pytest.mark.slow),
    ],
)
def test_image_sequence_model(head, tmp_path):
    x = sequences(seq_len=3, side=16)
    model = run_model_test(image_sequence, {**SMALL, "head": head}, x, tmp_path=tmp_path)
    assert model.get_layer("embedding").output.shape == (None, 3, 8)


def test_encoder_is_shared_across_positions():
    """Each image is embedded on its own, by the same weights at every position."""
    model = image_sequence(**{**SMALL, "seq_len": 5})
    tap = keras.Model(model.input, model.get_layer("embedding").output)
    x = sequences(2, seq_len=5, side=16)
    order = np.random.default_rng(1).permutation(5)
    embedded = keras.ops.convert_to_numpy(tap(x))
    permuted = keras.ops.convert_to_numpy(tap(x[:, order]))
    np.testing.assert_allclose(permuted, embedded[:, order], rtol=1e-5, atol=1e-6)


def test_fold_and_unfold_sequence_layers():
    x = sequences(2, seq_len=3, side=4)
    folded = keras.ops.convert_to_numpy(FoldSequence()(x))
    np.testing.assert_array_equal(folded, x.reshape(6, 4, 4, 1))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(UnfoldSequence(3)(folded)), x)
    assert UnfoldSequence.from_config(UnfoldSequence(3).get_config()).seq_len == 3


def test_registered_and_other_sizes():
    model = models.get("image_sequence", **{**SMALL, "num_classes": 3, "image_shape": (16, 16, 3)})
    x = np.zeros((2, 3, 16, 16, 3), "float32")
    assert model(x).shape == (2, 3)


def test_bad_inputs():
    model = image_sequence(**TINY)
    with pytest.raises(ValueError, match=r"shape \(batch, 11, 28, 28, 1\); received shape"):
        model(sequences(seq_len=7))
    with pytest.raises(ValueError, match="received dtype uint8"):
        model((sequences() * 255).astype("uint8"))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"head": "cnn"}, "head must be one of mlp, transformer, mixer; received 'cnn'"),
        ({"image_shape": (28, 28)}, "image_shape must be"),
        ({"conv_widths": (4, 0)}, r"conv_widths\[1\] must be a positive integer"),
        ({"head": "transformer", "dim": 6, "heads": 4}, "dim must be divisible by heads"),
        ({"widths": ()}, "widths must not be empty"),
        ({"seq_len": 0}, "seq_len must be a positive integer"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        image_sequence(**{**TINY, **kwargs})
