import numpy as np
import pytest

from pvr_keras.models import mlp, mlp2x
from pvr_keras.testing import run_model_test


def tokens(batch=4, seq_len=11, vocab=10):
    return np.random.default_rng(0).integers(0, vocab, (batch, seq_len)).astype("int32")


def test_package_attributes_are_builders_not_modules():
    import pvr_keras.models

    assert callable(mlp) and mlp.__name__ == "mlp"
    assert pvr_keras.models.mlp is mlp


def test_mlp_model(tmp_path):
    run_model_test(mlp, {"embed_dim": 4, "widths": (16, 8)}, tokens(), tmp_path=tmp_path)


def test_parameter_counts_match_paper():
    assert mlp().count_params() == 1_445_194
    assert mlp2x().count_params() == 5_052_426


def test_other_task_sizes():
    model = mlp(seq_len=7, vocab=5, num_classes=3, embed_dim=4, widths=(8,))
    assert model(tokens(2, 7, 5)).shape == (2, 3)


@pytest.mark.parametrize(
    "bad, message",
    [
        (tokens().astype("float32"), "received dtype float32"),
        (tokens() > 3, "received dtype bool"),
        (tokens()[:, :, None], r"received shape \(4, 11, 1\)"),
        (tokens()[:, :5], r"received shape \(4, 5\)"),
    ],
)
def test_bad_inputs(bad, message):
    model = mlp(embed_dim=4, widths=(8,))
    with pytest.raises(ValueError, match=r"integer inputs of shape \(batch, 11\); " + message):
        model(bad)


def test_any_integer_dtype_is_accepted():
    model = mlp(embed_dim=4, widths=(8,))
    out = [np.asarray(model(tokens().astype(d))) for d in ("int64", "int32", "uint8")]
    np.testing.assert_allclose(out[0], out[1])
    np.testing.assert_allclose(out[0], out[2])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seq_len": 0}, "seq_len must be a positive integer; received 0"),
        ({"embed_dim": -1}, "embed_dim must be a positive integer; received -1"),
        ({"widths": (8, 0)}, r"widths\[1\] must be a positive integer; received 0"),
        ({"num_classes": 2.5}, "num_classes must be a positive integer; received 2.5"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mlp(**kwargs)
