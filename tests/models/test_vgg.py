import numpy as np
import pytest

from pvr_keras.models import vgg11_bn
from pvr_keras.testing import run_model_test

from .helpers import count_at_width
from .test_resnet import images


def test_vgg11_bn_model(tmp_path):
    run_model_test(
        vgg11_bn, {"input_shape": (32, 32, 1), "width": 1}, images(channels=1), tmp_path=tmp_path
    )


def test_trainable_parameter_count_matches_torchvision():
    # From builds at widths 1-4 (see count_at_width): the full model is 128.8M weights.
    assert count_at_width(vgg11_bn, {"input_shape": (32, 32, 3)}, 64) == 128_812_810


def test_narrow_copy_scales_every_stage_and_the_classifier():
    model = vgg11_bn((32, 32, 1), width=2)
    widths = [model.get_layer(f"block{i}").output.shape[-1] for i in range(8)]
    assert widths == [2, 4, 8, 8, 16, 16, 16, 16]
    assert model.get_layer("flatten").output.shape[-1] == 7 * 7 * 16
    assert model.get_layer("pre_logits").output.shape[-1] == 128


@pytest.mark.parametrize(
    "size, pooled", [((32, 32), (1, 1)), ((80, 80), (2, 2)), ((64, 100), (2, 3))]
)
def test_classifier_input_is_7x7_for_any_size(size, pooled):
    model = vgg11_bn((*size, 3), width=1)
    assert tuple(model.get_layer("pool7").output.shape[1:3]) == pooled
    assert tuple(model.get_layer("adaptive_pool").output.shape) == (None, 7, 7, 8)


def test_dropout_is_active_only_in_training():
    model = vgg11_bn((32, 32, 1), width=1)
    x = images(channels=1)
    np.testing.assert_allclose(model(x, training=False), model(x, training=False))
    assert not np.allclose(model(x, training=True), model(x, training=True))


def test_bad_inputs():
    model = vgg11_bn((32, 32, 1), width=1)
    with pytest.raises(ValueError, match=r"\(batch, 32, 32, 1\); received shape \(32, 32, 1\)"):
        model(images(channels=1)[0])
    with pytest.raises(ValueError, match="received dtype int64"):
        model(np.zeros((2, 32, 32, 1), "int64"))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"input_shape": (28, 28, 1)}, "at least 32; received 28x28"),
        ({"input_shape": (32, 32, 4)}, "channels must be 1 or 3; received 4"),
        ({"input_shape": (32, 32, 3), "width": -8}, "width must be a positive integer"),
        ({"input_shape": (32, 32, 3), "dropout": 1.0}, r"dropout must be a number in \[0, 1\)"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        vgg11_bn(**kwargs)
