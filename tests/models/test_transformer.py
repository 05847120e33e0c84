import keras
import numpy as np
import pytest

from pvr_keras.models import transformer
from pvr_keras.testing import run_model_test

from .test_mlp import tokens

TINY = {"dim": 8, "depth": 2, "heads": 2, "mlp_dim": 16}


def test_package_attribute_is_the_builder():
    import pvr_keras.models

    assert callable(transformer) and transformer.__name__ == "transformer"
    assert pvr_keras.models.transformer is transformer


def test_transformer_model(tmp_path):
    model = run_model_test(transformer, TINY, tokens(), tmp_path=tmp_path)
    assert [f"block{i}" for i in range(2)] == [
        layer.name
        for layer in model.layers
        if layer.name.startswith("block") and "_" not in layer.name
    ]


def test_parameter_count_matches_paper():
    assert transformer().count_params() == 8_429_066


def test_parameter_count_formula():
    # embedding + class token + positions + depth * (attention + MLP + 2 LN) + LN + head.
    seq_len, vocab, classes, dim, depth, mlp_dim = 5, 7, 3, 8, 3, 12
    model = transformer(
        seq_len=seq_len,
        vocab=vocab,
        num_classes=classes,
        dim=dim,
        depth=depth,
        heads=2,
        mlp_dim=mlp_dim,
    )
    layer = 4 * (dim * dim + dim) + (2 * dim * mlp_dim + mlp_dim + dim) + 4 * dim
    expected = vocab * dim + dim + (seq_len + 1) * dim + depth * layer + 2 * dim
    assert model.count_params() == expected + dim * classes + classes


def test_output_depends_on_every_position():
    model = transformer(**TINY)
    x = tokens(1)
    base = keras.ops.convert_to_numpy(model(x))
    for position in range(11):
        changed = x.copy()
        changed[0, position] = (changed[0, position] + 1) % 10
        assert not np.allclose(keras.ops.convert_to_numpy(model(changed)), base)


def test_bad_inputs():
    model = transformer(**TINY)
    with pytest.raises(ValueError, match="integer inputs .* received dtype float32"):
        model(tokens().astype("float32"))
    with pytest.raises(ValueError, match=r"received shape \(11,\)"):
        model(tokens()[0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dim": 10, "heads": 4}, "dim must be divisible by heads \\(4\\); received dim=10"),
        ({"depth": 0}, "depth must be a positive integer; received 0"),
        ({"heads": -2}, "heads must be a positive integer; received -2"),
        ({"mlp_dim": None}, "mlp_dim must be a positive integer; received None"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        transformer(**kwargs)
