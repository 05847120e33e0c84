import math

import keras
import numpy as np
import pytest

from pvr_keras.models.layers import (
    AdaptiveAveragePooling2D,
    ClassToken,
    PositionEmbedding,
    adaptive_pool_matrix,
)


def torch_adaptive_avg_pool(x, out_h, out_w):
    """Slow reference: torch's AdaptiveAvgPool2d bins, one output cell at a time."""
    n, h, w, c = x.shape
    y = np.zeros((n, out_h, out_w, c))
    for i in range(out_h):
        for j in range(out_w):
            rows = slice((i * h) // out_h, math.ceil((i + 1) * h / out_h))
            cols = slice((j * w) // out_w, math.ceil((j + 1) * w / out_w))
            y[:, i, j] = x[:, rows, cols].mean(axis=(1, 2))
    return y


@pytest.mark.parametrize("h, w", [(1, 1), (2, 3), (5, 5), (7, 7), (8, 13), (14, 14), (20, 9)])
def test_adaptive_pooling_matches_torch_bins(h, w):
    x = np.random.default_rng(h * w).normal(size=(2, h, w, 3)).astype("float32")
    y = keras.ops.convert_to_numpy(AdaptiveAveragePooling2D((7, 7))(x))
    np.testing.assert_allclose(y, torch_adaptive_avg_pool(x, 7, 7), rtol=1e-5, atol=1e-6)


def test_adaptive_pool_matrix_rows_are_averages():
    m = adaptive_pool_matrix(10, 7)
    np.testing.assert_allclose(m.sum(axis=1), 1.0)
    assert (m[0] > 0).tolist() == [True, True] + [False] * 8  # bin [0, 2)
    assert (m[1] > 0).tolist() == [False, True, True] + [False] * 7  # bin [1, 3): overlaps


def test_class_token_is_prepended():
    x = np.random.default_rng(0).normal(size=(3, 4, 5)).astype("float32")
    layer = ClassToken()
    layer.build(x.shape)
    layer.token.assign(np.arange(5, dtype="float32").reshape(1, 1, 5))
    y = keras.ops.convert_to_numpy(layer(x))
    assert y.shape == (3, 5, 5)
    np.testing.assert_allclose(y[:, 0], np.tile(np.arange(5.0), (3, 1)))
    np.testing.assert_allclose(y[:, 1:], x)


def test_position_embedding_adds_one_vector_per_position():
    x = np.zeros((2, 4, 3), "float32")
    layer = PositionEmbedding()
    y = keras.ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(y[0], keras.ops.convert_to_numpy(layer.embedding)[0])
    np.testing.assert_allclose(y[0], y[1])
    assert layer.count_params() == 12


def test_layers_need_static_sizes():
    with pytest.raises(ValueError, match="static height and width; received shape"):
        AdaptiveAveragePooling2D()(keras.Input((None, 8, 3)))
    with pytest.raises(ValueError, match="fixed number of tokens; received shape"):
        PositionEmbedding()(keras.Input((None, 8)))


def test_configs_round_trip():
    for layer in (
        ClassToken(name="c"),
        PositionEmbedding(stddev=0.1),
        AdaptiveAveragePooling2D((3, 4)),
    ):
        clone = layer.__class__.from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
