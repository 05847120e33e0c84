import numpy as np
import pytest

from pvr_keras.models import resnet18
from pvr_keras.testing import count_trainable, run_model_test

from .helpers import count_at_width


def images(batch=2, size=(32, 32), channels=3):
    rng = np.random.default_rng(0)
    return rng.uniform(0, 1, (batch, *size, channels)).astype("float32")


def torch_out(n, kernel, stride, padding):
    """Output length of a torch conv or pool (floor mode)."""
    return (n + 2 * padding - kernel) // stride + 1


@pytest.mark.slow  # 20-40 s on JAX on 2 shared cores (per-shape compiles)
def test_resnet18_model(tmp_path):
    # Width 2 everywhere: JAX compiles each initialiser per weight shape, so shared shapes
    # keep the file fast.
    run_model_test(resnet18, {"input_shape": (32, 32, 3), "width": 2}, images(), tmp_path=tmp_path)


def test_trainable_parameter_count_matches_torchvision():
    # From builds at widths 1-4 (see count_at_width), not the 11.2M-weight model.
    assert count_at_width(resnet18, {"input_shape": (32, 32, 3)}, 64) == 11_181_642


def test_one_channel_only_changes_the_stem():
    difference = count_trainable(resnet18((32, 32, 3), width=2)) - count_trainable(
        resnet18((32, 32, 1), width=2)
    )
    assert difference == 2 * 7 * 7 * 2


@pytest.mark.parametrize("size", [(32, 32), (33, 47), (80, 80)])
def test_feature_map_sizes_follow_torch_padding(size):
    model = resnet18((*size, 1), width=2)
    expected = []
    h, w = (torch_out(n, 7, 2, 3) for n in size)  # stem conv
    h, w = torch_out(h, 3, 2, 1), torch_out(w, 3, 2, 1)  # stem max pool
    for stage in range(4):
        if stage:
            h, w = torch_out(h, 3, 2, 1), torch_out(w, 3, 2, 1)
        expected += [(None, h, w, 2 * 2**stage)] * 2
    got = [tuple(model.get_layer(f"block{i}").output.shape) for i in range(8)]
    assert got == expected
    assert tuple(model.get_layer("pre_logits").output.shape) == (None, 16)


@pytest.mark.parametrize(
    "bad, message",
    [
        (images()[0], r"received shape \(32, 32, 3\)"),
        (images(size=(32, 33)), r"received shape \(2, 32, 33, 3\)"),
        (images(channels=1), r"received shape \(2, 32, 32, 1\)"),
        ((images() * 255).astype("uint8"), "received dtype uint8"),
    ],
)
def test_bad_inputs(bad, message):
    model = resnet18((32, 32, 3), width=2)
    with pytest.raises(
        ValueError, match=r"floating-point inputs of shape \(batch, 32, 32, 3\); " + message
    ):
        model(bad)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"input_shape": (31, 32, 3)}, "at least 32; received 31x32"),
        ({"input_shape": (32, 16, 1)}, "at least 32; received 32x16"),
        ({"input_shape": (32, 32, 2)}, "channels must be 1 or 3; received 2"),
        (
            {"input_shape": (32, 32)},
            r"\(height, width, channels\) of integers; received \(32, 32\)",
        ),
        ({"input_shape": (32, 32, 3), "width": 0}, "width must be a positive integer; received 0"),
        ({"input_shape": (32, 32, 3), "num_classes": -1}, "num_classes must be a positive"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        resnet18(**kwargs)
