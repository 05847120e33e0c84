"""ResNet18 and VGG11-BN against torchvision's logits, without torch: golden fixtures.

Each ``golden/*.json`` holds the logits torchvision's model (a narrow copy built from its own
pieces, see ``tools/generate/make_golden.py``) gave for weights and inputs that
``golden_weights.py``
makes from names alone. Here our model gets the same arrays, mapped from torch's layout and
names to our layers, and must give the same logits (float32 on both sides).
"""

import json
import pathlib

import numpy as np
import pytest

from pvr_keras import models
from pvr_keras.models.vgg import VGG11

from . import golden_weights

GOLDEN = sorted((pathlib.Path(__file__).parent / "golden").glob("*.json"))


def _resnet_layers(name):
    """torch module name -> (our layer, kind) for ResNet18."""
    table = {"conv1": ("stem_conv", "conv"), "bn1": ("stem_bn", "bn"), "fc": ("logits", "linear")}
    for stage in range(4):
        for j in range(2):
            ours, theirs = f"block{2 * stage + j}", f"layer{stage + 1}.{j}"
            for part in ("1", "2"):
                table[f"{theirs}.conv{part}"] = (f"{ours}_conv{part}", "conv")
                table[f"{theirs}.bn{part}"] = (f"{ours}_bn{part}", "bn")
            table[f"{theirs}.downsample.0"] = (f"{ours}_downsample_conv", "conv")
            table[f"{theirs}.downsample.1"] = (f"{ours}_downsample_bn", "bn")
    return table[name]


def _vgg_layers(name):
    """torch module name -> (our layer, kind) for VGG11-BN (make_layers: conv, BN, ReLU per
    convolution, one module per max pool; the classifier's linears at 0, 3 and 6)."""
    table = {
        "classifier.0": ("classifier0", "flat_linear"),
        "classifier.3": ("classifier1", "linear"),
    }
    table["classifier.6"] = ("logits", "linear")
    index, conv = 0, 0
    for item in VGG11:
        if item == "M":
            index += 1
            continue
        table[f"features.{index}"] = (f"block{conv}_conv", "conv")
        table[f"features.{index + 1}"] = (f"block{conv}_bn", "bn")
        index, conv = index + 3, conv + 1
    return table[name]


LAYERS = {"resnet18": _resnet_layers, "vgg11_bn": _vgg_layers}


def _keras_weights(kind, torch_arrays, layer):
    """Our layer's weights from torch's arrays {leaf: array} of one module."""
    if kind == "bn":
        return [torch_arrays[k] for k in ("weight", "bias", "running_mean", "running_var")]
    kernel = torch_arrays["weight"]
    if kind == "conv":
        kernel = kernel.transpose(2, 3, 1, 0)  # (out, in, kh, kw) -> (kh, kw, in, out)
    else:
        if kind == "flat_linear":  # torch flattens (C, 7, 7), we flatten (7, 7, C)
            channels = layer.input.shape[-1] // 49
            kernel = (
                kernel.reshape(-1, channels, 7, 7).transpose(0, 2, 3, 1).reshape(len(kernel), -1)
            )
        kernel = kernel.T
    return [kernel] + ([torch_arrays["bias"]] if "bias" in torch_arrays else [])


def _load(model, case):
    modules = {}
    for name, (shape, digest) in case["tensors"].items():
        array = golden_weights.tensor(name, shape, case["seed"])
        assert golden_weights.digest(array) == digest, f"{name}: golden_weights changed"
        module, leaf = name.rsplit(".", 1)
        modules.setdefault(module, {})[leaf] = array
    used = set()
    for module, arrays in modules.items():
        layer_name, kind = LAYERS[case["model"]](module)
        layer = model.get_layer(layer_name)
        layer.set_weights(_keras_weights(kind, arrays, layer))
        used.add(layer_name)
    # Every layer with weights got torch's: nothing of ours was left at its initial values.
    assert used == {layer.name for layer in model.layers if layer.weights}


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_logits_match_torchvision(path):
    case = json.loads(path.read_text())
    shape = tuple(case["input_shape"])
    model = models.get(case["model"], input_shape=shape, width=case["width"])
    assert (
        sum(int(np.prod(w.shape)) for w in model.trainable_weights) == case["trainable_parameters"]
    )
    _load(model, case)
    x = golden_weights.inputs((len(case["logits"]), *shape), case["seed"])
    assert golden_weights.digest(x) == case["input_digest"]
    got = model.predict(x, batch_size=len(x), verbose=0)  # one compiled call (fast on JAX)
    expected = np.array(case["logits"], np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_every_model_has_golden_logits():
    assert {json.loads(p.read_text())["model"] for p in GOLDEN} == set(models.IMAGE_MODELS)
