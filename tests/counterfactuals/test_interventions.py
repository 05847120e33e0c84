"""Interchange interventions on Keras models: exact on a model that is the rule, equal to a
NumPy patch on a small one, and every bad request refused before any work."""

import keras
import numpy as np
import pytest
from keras import ops

from pvr_keras import counterfactuals as cf
from pvr_keras import models
from pvr_keras.counterfactuals import patching
from pvr_keras.tasks import BlockTask, TokenTask


def rule_model():
    """Window-1 token PVR written as a network: one-hot tokens (layer ``onehot``, (batch, 11,
    10): position 0 the pointer, 1 + i the value V_i), and logits 10 x the one-hot of the
    value the pointer names."""
    tokens = keras.Input((11,), dtype="int32", name="tokens")
    onehot = keras.layers.Embedding(10, 10, embeddings_initializer="identity", name="onehot")(
        tokens
    )
    pointed = ops.einsum("bp,bpv->bv", onehot[:, 0, :], onehot[:, 1:, :])
    return keras.Model(tokens, keras.layers.Rescaling(10.0, name="logits")(pointed))


def test_a_model_that_is_the_rule_has_iia_one_where_the_variable_lives():
    model, task = rule_model(), TokenTask(window=1)
    kwargs = dict(n=512, seed=0, changing=True)
    assert cf.iia(model, task, "onehot", positions=[0], variables="P", **kwargs) == 1.0
    assert cf.iia(model, task, "onehot", positions=[4], variables="V3", **kwargs) == 1.0
    # The pointer is not at a value position, nor V3 at V4's: on changing pairs, a miss.
    assert cf.iia(model, task, "onehot", positions=[5], variables="P", **kwargs) < 0.05
    assert cf.iia(model, task, "onehot", positions=[5], variables="V3", **kwargs) < 0.05
    # S0 lives at a different position in every example: all value positions together hold it.
    assert cf.iia(model, task, "onehot", positions=list(range(1, 11)), variables="S0",
                  **kwargs) < 0.2  # fmt: skip
    assert cf.iia(model, task, "onehot", positions=None, variables=["P", *[f"V{i}" for i in
                  range(10)]], **kwargs) == 1.0  # fmt: skip
    # On all pairs the unchanged labels count too. V4's position for V3: right where neither
    # the interchange (9%) nor the patch (9%) changes the label, about 0.91 ** 2 = 0.83.
    random_pairs = cf.iia(model, task, "onehot", positions=[5], variables="V3", n=4000)
    assert 0.79 < random_pairs < 0.86


def _small_token_model():
    tokens = keras.Input((11,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(10, 6, name="embedding")(tokens)
    x = keras.layers.Dense(5, activation="tanh", name="hidden")(x)  # (batch, 11, 5)
    x = keras.layers.Flatten(name="flatten")(x)
    return keras.Model(tokens, keras.layers.Dense(10, name="logits")(x))


def test_the_patch_equals_the_same_patch_done_by_hand():
    model, task = _small_token_model(), TokenTask(window=2)
    base, source, _, _ = cf.pairs(task, 64, "S0", seed=3)
    tap = keras.Model(model.inputs, model.get_layer("hidden").output)
    hidden_base, hidden_source = np.asarray(tap(base)), np.asarray(tap(source))
    kernel, bias = (np.asarray(w) for w in model.get_layer("logits").weights)
    for positions in ([1], [0, 4, 10], None):
        patched = hidden_base.copy()
        chosen = list(range(11)) if positions is None else positions
        patched[:, chosen] = hidden_source[:, chosen]
        expected = patched.reshape(len(base), -1) @ kernel + bias
        got = patching.Interchange(model, "hidden").predict(base, source, positions,
                                                            batch_size=16)  # fmt: skip
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_no_weight_is_copied_and_the_model_is_unchanged():
    model = models.transformer(dim=8, depth=2, heads=2, mlp_dim=8)
    x = np.random.default_rng(0).integers(0, 10, (32, 11)).astype("int32")
    before = np.asarray(model.predict(x, verbose=0))
    interchange = patching.Interchange(model, "block0")
    assert all(any(w is v for v in interchange.paired.weights) for w in model.weights)
    # The base run with its own activations is the model; the last layer patched everywhere
    # gives the source's outputs.
    source = x[::-1].copy()
    np.testing.assert_allclose(interchange.predict(x, x, [1, 3]), before, atol=1e-5)
    np.testing.assert_allclose(
        patching.Interchange(model, "block1").predict(x, source, None),
        before[::-1], atol=1e-5,
    )  # fmt: skip
    np.testing.assert_allclose(model.predict(x, verbose=0), before)


def test_positions_are_checked_against_the_layers_axis_and_quadrants_split_like_iit():
    with pytest.raises(ValueError, match=r"0\.\.11 on axis 1; received 12"):
        patching.position_mask((None, 12, 8), [12], "'block0'")
    with pytest.raises(ValueError, match="quadrants TL, TR, BL, BR; received 'top'"):
        patching.position_mask((None, 5, 5, 4), ["top"])
    with pytest.raises(ValueError, match="non-empty list"):
        patching.position_mask((None, 12, 8), [])
    mask = patching.position_mask((None, 5, 5, 4), ["TR"])
    expected = np.zeros((5, 5))
    expected[:2, 2:4] = 1  # half of 5 rounded down: the last row and column in no quadrant
    np.testing.assert_array_equal(mask, expected)
    np.testing.assert_array_equal(patching.position_mask((None, 6, 6, 1), QUAD).sum(), 36)


QUAD = ["TL", "TR", "BL", "BR"]


def _two_inputs():
    a, b = keras.Input((11,), dtype="int32"), keras.Input((11,), dtype="int32")
    y = keras.layers.Dense(10)(keras.layers.Concatenate()([a, b]))
    return keras.Model([a, b], y)


def _five_classes():
    tokens = keras.Input((11,), dtype="int32")
    return keras.Model(tokens, keras.layers.Dense(5)(tokens))


BAD = [
    (
        lambda: models.transformer(dim=8, depth=1, heads=2, mlp_dim=8),
        dict(layer="block7"),
        "has no layer 'block7'; its layers: tokens, embedding",
    ),
    (
        lambda: models.transformer(dim=8, depth=1, heads=2, mlp_dim=8),
        dict(positions=[12]),
        r"0\.\.11 on axis 1; received 12",
    ),
    (
        lambda: models.transformer(dim=8, depth=1, heads=2, mlp_dim=8),
        dict(variables="Q"),
        "variables of TokenTask are",
    ),
    (_five_classes, {}, r"must output \(batch, 10\) class scores"),
    (_two_inputs, {}, "one input and one output"),
    (lambda: "model", {}, "model must be a functional keras.Model"),
    (
        lambda: models.mlp(seq_len=7, embed_dim=2, widths=(4,)),
        dict(layer="pre_logits"),
        r"takes inputs of shape \(batch, 7\)",
    ),
]


@pytest.mark.parametrize("make, kwargs, message", BAD, ids=[m for _, _, m in BAD])
def test_bad_requests_fail_in_one_line_before_any_pair_is_drawn(make, kwargs, message,
                                                                monkeypatch):  # fmt: skip
    drawn = []
    monkeypatch.setattr("pvr_keras.counterfactuals.interventions.make_pairs",
                        lambda *a, **k: drawn.append(a))  # fmt: skip
    kwargs = {"layer": "block0", "positions": [1], "variables": "P", **kwargs}
    with pytest.raises(ValueError, match=message):
        cf.iia(make(), TokenTask(window=1), n=8, **kwargs)
    assert not drawn


def _tiny_conv():
    images = keras.Input((80, 80, 1), name="images")
    x = keras.layers.Conv2D(2, 3, strides=16, name="conv")(images)  # (batch, 5, 5, 2)
    x = keras.layers.Flatten(name="flatten")(x)
    return keras.Model(images, keras.layers.Dense(10, name="logits")(x))


def test_a_block_model_is_refused_a_token_task_and_a_block_task_takes_quadrants():
    model = _tiny_conv()
    with pytest.raises(ValueError, match=r"takes inputs of shape \(batch, 80, 80, 1\)"):
        cf.iia(model, TokenTask(), "conv", variables="P")
    with pytest.raises(ValueError, match="quadrants TL, TR, BL, BR; received 1"):
        cf.iia(model, BlockTask(), "conv", positions=[1], variables="TR")


def test_das_learns_the_rotation_that_holds_a_variable():
    model, task = rule_model(), TokenTask(window=1)
    # At the start the rotation is the identity: the first 10 coordinates of the flattened
    # one-hot layer are the pointer's, so the interchange of P is exact already.
    start = cf.das(model, task, "onehot", "P", dims=10, n=512, test_n=512, epochs=1,
                   learning_rate=1e-9, changing=True)  # fmt: skip
    assert start.iia == 1.0
    # V0's coordinates are 10..19: the rotation must be learned.
    untrained = cf.das(model, task, "onehot", "V0", dims=10, n=512, test_n=512, epochs=1,
                       learning_rate=1e-9, changing=True)  # fmt: skip
    assert untrained.iia < 0.2
    learned = cf.das(model, task, "onehot", "V0", dims=10, n=4096, test_n=1024, epochs=8,
                     learning_rate=0.02, changing=True)  # fmt: skip
    assert learned.iia > 0.9, learned
    rotation = learned.rotation
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(110), atol=1e-4)
    assert [w.trainable for w in model.weights] == [True]  # the flags restored


def test_das_refuses_what_it_cannot_learn():
    model = rule_model()
    with pytest.raises(ValueError, match="dims must be below the size of 'onehot'"):
        cf.das(model, TokenTask(window=1), "onehot", "P", dims=110)
    with pytest.raises(ValueError, match="variables of TokenTask"):
        cf.das(model, TokenTask(window=1), "onehot", "X")


def test_a_model_outside_keras_gets_iia_from_the_numpy_pairs():
    """A model of another framework (here plain NumPy, as a PyTorch user's would be) patches
    its own activations on ``cf.pairs`` and scores with ``cf.score``."""
    task = TokenTask(window=2, aggregation="mod_sum")

    def hidden(x):  # (n, 11) -> the model's "hidden layer": the pointer and the values
        return x.astype(np.int64)

    def head(h):
        n = h.shape[1] - 1
        positions = (h[:, :1] + np.arange(2)) % n + 1
        return np.take_along_axis(h, positions, axis=1).sum(axis=1) % 10

    base, source, _, y_cf = cf.pairs(task, 1000, "P", seed=0, changing=True)
    patched = hidden(base)
    patched[:, 0] = hidden(source)[:, 0]
    assert cf.score(head(patched), y_cf) == 1.0
    patched = hidden(base)
    patched[:, 5] = hidden(source)[:, 5]
    assert cf.score(head(patched), y_cf) < 0.1
