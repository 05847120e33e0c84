"""The token models (MLP, Transformer, MLP-Mixer) and the image-sequence model compute the
equations of ``reference.py`` (NumPy, float64), at small widths with random weights: a wrong
attention axis, a dropped residual or the wrong readout token changes the logits."""

import numpy as np
import pytest

from pvr_keras import models

from . import reference


def randomise(model, seed=0):
    """Sets every weight to a random value (LN scales near 1, the rest centred): zero-initialised
    biases, class tokens and LN offsets get tested too."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        shape = tuple(variable.shape)
        unit = rng.uniform(-1, 1, shape)
        if variable.path.endswith("gamma"):
            value = 1 + 0.3 * unit
        elif len(shape) >= 2:
            value = unit * np.sqrt(3 / np.prod(shape[:-1]))  # ~unit output variance
        else:
            value = 0.3 * unit
        variable.assign(value.astype(variable.dtype))
    return model


def _compare(model, inputs, expected):
    got = model.predict(inputs, batch_size=len(inputs), verbose=0)  # one compiled call
    assert got.shape == expected.shape
    scale = np.abs(expected).max()
    assert scale > 0.1 and expected.std(axis=0).min() > 1e-3  # logits vary over the batch
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * scale)


def _tokens(batch, seq_len, vocab, seed=1):
    return np.random.default_rng(seed).integers(0, vocab, (batch, seq_len)).astype("int32")


def test_mlp_matches_reference():
    model = randomise(models.mlp(seq_len=6, vocab=7, num_classes=5, embed_dim=3, widths=(16, 8)))
    x = _tokens(5, 6, 7)
    _compare(model, x, reference.mlp(x, reference.weights(model), num_layers=2))


@pytest.mark.parametrize("heads", [1, 3])
def test_transformer_matches_reference(heads):
    model = models.transformer(
        seq_len=7, vocab=10, num_classes=5, dim=12, depth=2, heads=heads, mlp_dim=20
    )
    randomise(model)
    x = _tokens(4, 7, 10)
    _compare(model, x, reference.transformer(x, reference.weights(model), depth=2))


def test_mixer_matches_reference():
    model = models.mixer(
        seq_len=7, vocab=10, num_classes=5, dim=12, depth=2, token_dim=10, channel_dim=24
    )
    randomise(model)
    x = _tokens(4, 7, 10)
    _compare(model, x, reference.mixer(x, reference.weights(model), depth=2))


@pytest.mark.parametrize("head", ["mlp", "transformer", "mixer"])
def test_image_sequence_matches_reference(head):
    model = models.image_sequence(
        seq_len=4,
        num_classes=5,
        image_shape=(9, 8, 1),  # odd height: the pools drop the last row
        conv_widths=(3, 2),
        head=head,
        dim=6,
        widths=(10, 7),
        depth=2,
        heads=2,
        mlp_dim=9,
    )
    randomise(model)
    images = np.random.default_rng(2).uniform(0, 1, (3, 4, 9, 8, 1)).astype("float32")
    expected = reference.image_sequence(
        images.astype(np.float64),
        reference.weights(model),
        num_convs=2,
        head=head,
        depth=2,
        num_layers=2,
    )
    _compare(model, images, expected)
