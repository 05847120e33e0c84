"""The Boolean PVR models: their inputs, outputs, sizes, and a save/load round trip."""

import keras
import numpy as np
import pytest

from pvr_keras import models
from pvr_keras.models.layers import ReadBits


@pytest.mark.parametrize(
    "name, kwargs, params",
    [
        ("bits_mlp", {}, 1_089_153),  # their code's MLP at d = 11
        ("bits_mlp", {"num_bits": 20}, 1_093_761),
        ("bits_transformer", {}, 4_753_921),
        ("bits_mixer", {}, 819_409),
        ("bits_transformer", {"dim": 16, "depth": 1, "heads": 2, "mlp_dim": 8}, None),
        ("bits_mixer", {"dim": 8, "depth": 1, "channel_dim": 4}, None),
    ],
)
def test_outputs_one_number_per_input(name, kwargs, params):
    model = models.get(name, **kwargs)
    d = kwargs.get("num_bits", 11)
    assert model.input.shape == (None, d) and model.input.dtype == "int8"
    assert model.output.shape == (None, 1)
    if params is not None:
        assert model.count_params() == params
    x = np.random.default_rng(0).choice(np.array([-1, 1], np.int8), size=(5, d))
    assert np.asarray(model.predict_on_batch(x)).shape == (5, 1)


def test_the_mlp_reads_bits_as_signed_floats_and_token_models_as_row_bits():
    bits = np.array([[1, -1, 1]], np.int8)
    assert np.asarray(ReadBits()(bits)).tolist() == [[1.0, -1.0, 1.0]]
    tokens = np.asarray(ReadBits(as_tokens=True)(bits))
    assert tokens.tolist() == [[0, 1, 0]] and "int" in str(tokens.dtype)


def test_what_is_not_bits_is_refused():
    model = models.get("bits_mlp", num_bits=4, widths=(3,))
    with pytest.raises(ValueError, match=r"takes bits \+1 / -1; received values in 0\.\.1"):
        model(np.array([[0, 1, 1, 1]], np.int8))
    with pytest.raises(ValueError, match=r"received shape \(1, 5\)"):
        model(np.ones((1, 5), np.int8))
    with pytest.raises(ValueError, match="takes integer inputs"):
        model(np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match="num_bits must be a positive integer"):
        models.get("bits_mlp", num_bits=0)
    with pytest.raises(ValueError, match="dim must be divisible by heads"):
        models.get("bits_transformer", dim=10, heads=4)


@pytest.mark.parametrize("name", ["bits_mlp", "bits_transformer", "bits_mixer"])
def test_a_saved_model_reloads_safely_with_the_same_outputs(name, tmp_path):
    small = {"bits_mlp": {"widths": (8, 4)}, "bits_transformer": {"dim": 8, "depth": 1, "heads": 2,
             "mlp_dim": 8}, "bits_mixer": {"dim": 8, "depth": 1, "channel_dim": 4}}  # fmt: skip
    model = models.get(name, num_bits=6, **small[name])
    x = np.random.default_rng(1).choice(np.array([-1, 1], np.int8), size=(7, 6))
    model.save(tmp_path / "m.keras")
    again = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    np.testing.assert_allclose(again.predict_on_batch(x), model.predict_on_batch(x), rtol=1e-6)
