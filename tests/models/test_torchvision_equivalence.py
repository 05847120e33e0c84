"""ResNet18 and VGG11-BN against torchvision itself, weight for weight.

Skipped where torch and torchvision are not installed (they are no dependency of
pvr-keras). Run it where they are, e.g. ``pip install torch torchvision`` then
``python -m pytest tests/models/test_torchvision_equivalence.py``.
"""

import keras
import numpy as np
import pytest

from pvr_keras.models import resnet18, vgg11_bn

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")


def _np(tensor):
    return tensor.detach().cpu().numpy()


def _copy_conv(layer, conv):
    kernel = _np(conv.weight).transpose(2, 3, 1, 0)  # (out, in, kh, kw) -> (kh, kw, in, out)
    layer.set_weights([kernel] if conv.bias is None else [kernel, _np(conv.bias)])


def _copy_bn(layer, bn):
    layer.set_weights([_np(bn.weight), _np(bn.bias), _np(bn.running_mean), _np(bn.running_var)])


def _copy_linear(layer, linear, *, channels_last_from=None):
    kernel = _np(linear.weight)  # (out, in)
    if channels_last_from is not None:
        # torch flattens (C, 7, 7); Keras flattens (7, 7, C).
        c, h, w = channels_last_from
        kernel = kernel.reshape(-1, c, h, w).transpose(0, 2, 3, 1).reshape(len(kernel), -1)
    layer.set_weights([kernel.T, _np(linear.bias)])


def _randomise_batch_norms(module):
    # Non-trivial running statistics, so that eps and the affine parts are tested too.
    generator = torch.Generator().manual_seed(0)
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.copy_(torch.rand(m.weight.shape, generator=generator) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=generator) - 0.5)
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=generator) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=generator) + 0.5)


def _compare(model, reference, x_nhwc):
    reference.eval()
    with torch.no_grad():
        expected = _np(reference(torch.from_numpy(x_nhwc.transpose(0, 3, 1, 2).copy())))
    got = keras.ops.convert_to_numpy(model(x_nhwc, training=False))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(32, 32, 3), (45, 61, 3), (80, 80, 1)])
def test_resnet18_matches_torchvision(shape):
    torch.manual_seed(0)
    reference = torchvision.models.resnet18(num_classes=10)
    if shape[-1] == 1:
        reference.conv1 = torch.nn.Conv2d(1, 64, 7, 2, 3, bias=False)
    _randomise_batch_norms(reference)
    model = resnet18(shape)
    _copy_conv(model.get_layer("stem_conv"), reference.conv1)
    _copy_bn(model.get_layer("stem_bn"), reference.bn1)
    for stage in range(4):
        for j, block in enumerate(getattr(reference, f"layer{stage + 1}")):
            name = f"block{2 * stage + j}"
            _copy_conv(model.get_layer(f"{name}_conv1"), block.conv1)
            _copy_bn(model.get_layer(f"{name}_bn1"), block.bn1)
            _copy_conv(model.get_layer(f"{name}_conv2"), block.conv2)
            _copy_bn(model.get_layer(f"{name}_bn2"), block.bn2)
            if block.downsample is not None:
                _copy_conv(model.get_layer(f"{name}_downsample_conv"), block.downsample[0])
                _copy_bn(model.get_layer(f"{name}_downsample_bn"), block.downsample[1])
    _copy_linear(model.get_layer("logits"), reference.fc)
    x = np.random.default_rng(0).uniform(0, 1, (2, *shape)).astype("float32")
    _compare(model, reference, x)


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(32, 32, 3), (80, 80, 3), (64, 100, 1)])
def test_vgg11_bn_matches_torchvision(shape):
    torch.manual_seed(0)
    reference = torchvision.models.vgg11_bn(num_classes=10)
    if shape[-1] == 1:
        reference.features[0] = torch.nn.Conv2d(1, 64, 3, padding=1)
    _randomise_batch_norms(reference)
    model = vgg11_bn(shape)
    convs = [m for m in reference.features if isinstance(m, torch.nn.Conv2d)]
    norms = [m for m in reference.features if isinstance(m, torch.nn.BatchNorm2d)]
    for i, (conv, norm) in enumerate(zip(convs, norms, strict=True)):
        _copy_conv(model.get_layer(f"block{i}_conv"), conv)
        _copy_bn(model.get_layer(f"block{i}_bn"), norm)
    _copy_linear(
        model.get_layer("classifier0"), reference.classifier[0], channels_last_from=(512, 7, 7)
    )
    _copy_linear(model.get_layer("classifier1"), reference.classifier[3])
    _copy_linear(model.get_layer("logits"), reference.classifier[6])
    x = np.random.default_rng(0).uniform(0, 1, (2, *shape)).astype("float32")
    _compare(model, reference, x)
