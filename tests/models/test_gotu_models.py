"""The models of "Generalization on the Unseen" (Abbe et al. 2023): sizes by hand, their
initialisations, the random features' frozen or trained first layer, the token Transformer's
heads, and bad arguments."""

import keras
import numpy as np
import pytest

from pvr_keras import models, registry
from pvr_keras.models.gotu import ShiftedPower
from pvr_keras.testing import count_trainable

SMALL_TRANSFORMER = {"dim": 16, "depth": 2, "heads": 3, "dim_head": 8, "mlp_dim": 12}


def _bits(n, d, seed=0):
    return np.random.default_rng(seed).choice(np.array([-1, 1], np.int8), size=(n, d))


def _weights(model, layer):
    return [np.asarray(w) for w in model.get_layer(layer).weights]


# Parameter counts by hand ------------------------------------------------------------------


def _mlp_params(d, widths=(512, 1024, 512, 64)):
    total, fan_in = 0, d
    for width in (*widths, 1):
        total += fan_in * width + width
        fan_in = width
    return total


def _random_features_params(d, width=2**13):
    return d * width + width + width  # features' weights and bias, the readout (no bias)


def _mean_field_params(d, width=2**16):
    return d * width + width + width + 1


def _transformer_params(d, dim=256, depth=12, heads=6, dim_head=64, mlp_dim=256):
    inner = heads * dim_head
    block = (
        2 * dim  # LayerNorm before the attention
        + 3 * dim * inner  # query, key, value: no bias
        + inner * dim + dim  # output projection, with its bias
        + 2 * dim  # LayerNorm before the MLP
        + dim * mlp_dim + mlp_dim + mlp_dim * dim + dim
    )  # fmt: skip
    embeddings = 2 * dim + dim + (d + 1) * dim  # tokens 0/1, class token, positions
    return embeddings + depth * block + 2 * dim + dim + 1  # head: LayerNorm, Dense(1)


def test_parameter_counts_by_hand():
    """At d = 15 (the default, their dimension: also the registered counts) and d = 7."""
    assert _random_features_params(15) == 15 * 8192 + 8192 + 8192 == 139_264
    expected = {
        "gotu_mlp": _mlp_params,
        "random_features": _random_features_params,
        "mean_field": _mean_field_params,
        "gotu_transformer": _transformer_params,
    }
    for name, formula in expected.items():
        model = models.get(name)
        assert model.count_params() == formula(15) == registry.model_spec(name).params
        assert model.input.shape == (None, 15)
        small = SMALL_TRANSFORMER if name == "gotu_transformer" else {}
        small = {"width": 64} if name in ("random_features", "mean_field") else small
        assert models.get(name, num_bits=7, **small).count_params() == formula(7, **small)


# Initialisations ---------------------------------------------------------------------------


def _check_uniform(values, bound):
    """Samples of U(-bound, bound): inside it, reaching near its ends, of std bound/sqrt(3)
    (within 5 standard errors of the sample std, about 0.45 / sqrt(n) relative)."""
    assert np.abs(values).max() <= bound * (1 + 1e-6)
    assert np.abs(values).max() > 0.9 * bound
    assert values.std() == pytest.approx(bound / np.sqrt(3), rel=2.25 / np.sqrt(values.size))
    assert abs(values.mean()) < 5 * bound / np.sqrt(3 * values.size)


def test_gotu_mlp_has_pytorch_linear_initialisation():
    keras.utils.set_random_seed(0)
    model = models.get("gotu_mlp")
    fan_in = 15
    for layer, width in zip(("block0", "block1", "block2", "pre_logits", "logits"),
                            (512, 1024, 512, 64, 1), strict=True):  # fmt: skip
        kernel, bias = _weights(model, layer)
        assert kernel.shape == (fan_in, width)
        bound = 1 / np.sqrt(fan_in)
        _check_uniform(kernel.ravel(), bound)
        if width >= 512:
            _check_uniform(bias, bound)
        else:  # 64 and 1 samples: only their bounds, and not all zero
            assert np.abs(bias).max() <= bound and np.any(bias != 0)
        fan_in = width


def test_random_features_initialisation_and_zero_readout():
    keras.utils.set_random_seed(1)
    model = models.get("random_features")
    kernel, bias = _weights(model, "block0")
    std = 1 / np.sqrt(15)
    for values, rel in ((kernel.ravel(), 0.02), (bias, 0.05)):
        assert values.std() == pytest.approx(std, rel=rel)
        assert abs(values.mean()) < 0.05 * std
        # Normal, not uniform: about 4.55% beyond two standard deviations (0% for a uniform).
        assert np.mean(np.abs(values) > 2 * std) == pytest.approx(0.0455, abs=0.01)
    (readout,) = _weights(model, "logits")
    assert readout.shape == (8192, 1) and np.all(readout == 0)
    assert np.all(np.asarray(model(_bits(9, 15))) == 0)


def test_mean_field_initialisation_and_forward():
    keras.utils.set_random_seed(2)
    model = models.get("mean_field")
    w1, b1 = _weights(model, "block0")
    w2, b2 = _weights(model, "readout")
    assert w1.shape == (15, 2**16) and w2.shape == (2**16, 1) and b2.shape == (1,)
    _check_uniform(w1.ravel(), 1 / np.sqrt(15))
    _check_uniform(b1, 1 / np.sqrt(15))
    _check_uniform(w2.ravel(), 1.0)
    assert 0 < abs(b2[0]) <= 1
    x = _bits(16, 15, seed=3)
    expected = (np.maximum(x @ w1 + b1, 0) @ w2 + b2) / 2**16
    np.testing.assert_allclose(np.asarray(model(x)), expected, rtol=1e-4, atol=1e-7)


def test_poly_activation_is_one_plus_z_to_the_sixth_over_a_thousand():
    z = np.linspace(-4, 3, 29, dtype="float32").reshape(1, -1)
    np.testing.assert_allclose(np.asarray(ShiftedPower()(z)), (1 + z) ** 6 / 1000, rtol=1e-5)
    keras.utils.set_random_seed(4)
    model = models.get("random_features", num_bits=6, width=32, activation="poly")
    readout = np.random.default_rng(5).normal(size=(32, 1)).astype("float32")
    model.get_layer("logits").set_weights([readout])
    kernel, bias = _weights(model, "block0")
    x = _bits(8, 6, seed=6)
    expected = (1 + x @ kernel + bias) ** 6 / 1000 @ readout
    np.testing.assert_allclose(np.asarray(model(x)), expected, rtol=1e-4, atol=1e-5)


def test_the_random_seed_fixes_the_initial_weights():
    def weights(name, seed, **kwargs):
        keras.utils.set_random_seed(seed)
        return [np.asarray(w) for w in models.get(name, num_bits=5, **kwargs).weights]

    for name, kwargs in (("gotu_mlp", {"widths": (8, 4)}), ("random_features", {"width": 16}),
                         ("mean_field", {"width": 16}),
                         ("gotu_transformer", SMALL_TRANSFORMER)):  # fmt: skip
        same = zip(weights(name, 7, **kwargs), weights(name, 7, **kwargs), strict=True)
        assert all(np.array_equal(a, b) for a, b in same), name
        other = zip(weights(name, 7, **kwargs), weights(name, 8, **kwargs), strict=True)
        assert not all(np.array_equal(a, b) for a, b in other), name


# The random features' first layer ----------------------------------------------------------


@pytest.mark.parametrize("first_layer", ["faithful", "frozen"])
def test_frozen_trains_only_the_readout_and_faithful_everything(first_layer):
    d, width = 6, 32
    keras.utils.set_random_seed(9)
    model = models.get("random_features", num_bits=d, width=width, first_layer=first_layer)
    frozen = first_layer == "frozen"
    assert count_trainable(model) == (width if frozen else d * width + 2 * width)
    assert model.count_params() == d * width + 2 * width
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    x, y = _bits(16, d, seed=10), np.random.default_rng(11).normal(size=(16, 1))
    features = _weights(model, "block0")
    model.train_on_batch(x, y)
    # The readout starts at zero, so the features get no gradient at the first step ...
    unchanged = zip(features, _weights(model, "block0"), strict=True)
    assert all(np.array_equal(a, b) for a, b in unchanged)
    assert np.any(_weights(model, "logits")[0] != 0)
    model.train_on_batch(x, y)
    # ... and at the second only "faithful" moves them.
    after = _weights(model, "block0")
    changed = [not np.array_equal(a, b) for a, b in zip(features, after, strict=True)]
    assert changed == ([False, False] if frozen else [True, True])


# The token Transformer ---------------------------------------------------------------------


def test_gotu_transformer_heads_and_head_width():
    model = models.get("gotu_transformer", num_bits=9, **SMALL_TRANSFORMER)
    assert model.output.shape == (None, 1)
    assert np.asarray(model.predict_on_batch(_bits(5, 9))).shape == (5, 1)
    attention = model.get_layer("block1_attention")
    assert attention.num_heads == 3 and attention.key_dim == 8
    shapes = sorted(tuple(w.shape) for w in attention.weights)
    # Query, key and value (16, 3, 8), output (3, 8, 16): heads * dim_head = 24 != dim = 16,
    # and no bias in the attention itself; the output's bias is its own layer.
    assert shapes == [(3, 8, 16), (16, 3, 8), (16, 3, 8), (16, 3, 8)]
    assert [tuple(w.shape) for w in model.get_layer("block1_attention_bias").weights] == [(16,)]
    heads_only = dict(SMALL_TRANSFORMER, heads=4, dim_head=6)  # the same inner width, 24
    other = models.get("gotu_transformer", num_bits=9, **heads_only).get_layer("block0_attention")
    assert other.num_heads == 4 and other.key_dim == 6


def test_gotu_transformer_width_scaling():
    scaled = registry.width_kwargs("gotu_transformer", 0.125)
    assert scaled == {"dim": 32, "mlp_dim": 32, "dim_head": 8}
    model = models.get("gotu_transformer", depth=1, **scaled)
    assert model.count_params() == _transformer_params(15, dim=32, depth=1, dim_head=8,
                                                       mlp_dim=32)  # fmt: skip
    assert model.get_layer("block0_attention").key_dim == 8  # the heads stay 6
    assert model.get_layer("block0_attention").num_heads == 6


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("gotu_mlp", {"widths": (8, 4)}),
        ("random_features", {"width": 16, "activation": "poly", "first_layer": "frozen"}),
        ("mean_field", {"width": 16}),
        ("gotu_transformer", SMALL_TRANSFORMER),
    ],
)
def test_a_saved_model_reloads_safely_with_the_same_outputs(name, kwargs, tmp_path):
    model = models.get(name, num_bits=6, **kwargs)
    if name == "random_features":  # a non-zero output to compare
        model.get_layer("logits").set_weights([np.ones((16, 1), "float32")])
    x = _bits(7, 6, seed=12)
    model.save(tmp_path / "m.keras")
    again = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    assert count_trainable(again) == count_trainable(model)
    np.testing.assert_allclose(again.predict_on_batch(x), model.predict_on_batch(x), rtol=1e-6)


# Bad arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("random_features", {"width": 0}, "width must be a positive integer"),
        ("mean_field", {"width": 0}, "width must be a positive integer"),
        ("random_features", {"activation": "tanh"}, "activation must be 'relu' or 'poly'"),
        ("random_features", {"first_layer": "trained"}, "first_layer must be 'faithful'"),
        ("gotu_mlp", {"widths": (8, 0)}, r"widths\[1\] must be a positive integer"),
        ("gotu_transformer", {"dim_head": 0}, "dim_head must be a positive integer"),
        ("gotu_transformer", {"heads": 0}, "heads must be a positive integer"),
        ("mean_field", {"num_bits": 0}, "num_bits must be a positive integer"),
    ],
)
def test_bad_arguments_are_refused(name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        models.get(name, **kwargs)
