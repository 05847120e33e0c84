"""activations(): named layer outputs of a package model, checked against a NumPy forward pass."""

import keras
import numpy as np
import pytest

from pvr_keras import models
from pvr_keras.analysis import activations


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    return models.mlp(embed_dim=4, widths=(8, 6))


@pytest.fixture(scope="module")
def tokens():
    return np.random.default_rng(0).integers(0, 10, size=(10, 11)).astype("int32")


def numpy_forward(model, tokens):
    """The MLP written out in NumPy from its weights: every tapped layer by name."""
    out = {"embedding": model.get_layer("embedding").get_weights()[0][tokens]}  # (N, 11, 4)
    h = out["embedding"].reshape(len(tokens), -1)
    for name in ("block0", "pre_logits"):
        kernel, bias = model.get_layer(name).get_weights()
        h = out[name] = np.maximum(h @ kernel + bias, 0)
    kernel, bias = model.get_layer("logits").get_weights()
    out["logits"] = h @ kernel + bias
    return out


def test_taps_named_layers_flattened_per_example(model, tokens):
    expected = numpy_forward(model, tokens)
    for name, shape in [("embedding", (10, 44)), ("block0", (10, 8)), ("pre_logits", (10, 6))]:
        got = activations(model, name, tokens, batch_size=4)
        assert isinstance(got, np.ndarray) and got.shape == shape
        np.testing.assert_allclose(got, expected[name].reshape(10, -1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        activations(model, "logits", tokens), model.predict(tokens, verbose=0), rtol=1e-5
    )


def test_batch_size_does_not_change_the_result(model, tokens):
    whole = activations(model, "pre_logits", tokens, batch_size=1024)
    for batch_size in (1, 3, 7):
        np.testing.assert_allclose(
            activations(model, "pre_logits", tokens, batch_size=batch_size), whole, atol=1e-6
        )


def test_several_layers_in_one_pass(model, tokens):
    got = activations(model, ["block0", "pre_logits"], tokens, batch_size=4)
    assert list(got) == ["block0", "pre_logits"]
    expected = numpy_forward(model, tokens)
    for name, value in got.items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6)


def test_bad_arguments_raise(model, tokens):
    with pytest.raises(
        ValueError,
        match=r"layer_name must name layers of model 'mlp', which has "
        r"tokens, embedding, flatten, block0, pre_logits, logits; received 'block9'",
    ):
        activations(model, "block9", tokens)
    with pytest.raises(ValueError, match="received 'nope'"):
        activations(model, ["block0", "nope"], tokens)
    with pytest.raises(ValueError, match="layer_name must be a layer name or a non-empty list"):
        activations(model, [], tokens)
    with pytest.raises(ValueError, match="layer_name must be a layer name.*received 3"):
        activations(model, 3, tokens)
    with pytest.raises(ValueError, match="batch_size must be a positive integer; received 0"):
        activations(model, "block0", tokens, batch_size=0)
    with pytest.raises(ValueError, match="model must be a keras.Model; received str"):
        activations("mlp", "block0", tokens)
    # The tap keeps the package model's input checks: float tokens are refused, not cast.
    with pytest.raises(ValueError, match="integer inputs"):
        activations(model, "block0", tokens.astype("float32"))
