"""Golden logits of torchvision's ResNet18 and VGG11-BN, for ``tests/models/test_golden.py``.

Run once, in a virtualenv of its own (torch is no dependency of pvr-keras and CI has none):

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.14.1 torchvision==0.29.1 numpy
    PYTHONPATH=. /tmp/torchenv/bin/python tools/generate/make_golden.py  # -> tests/models/golden/

Narrow copies (``width`` channels in the first stage instead of 64) are built from
torchvision's own pieces: ``ResNet`` with its ``_make_layer``, ``BasicBlock`` and ``forward``;
``VGG`` with ``make_layers`` of configuration "A" with batch norm, its adaptive pool and
``forward``, and its classifier's layout at 64 x ``width`` units. At ``width=64`` both are
torchvision's ``resnet18``/``vgg11_bn`` (the parameter counts are checked below). Every
parameter and BatchNorm buffer is set from ``tests/models/golden_weights.py`` by its name, the
model runs in eval mode on inputs made there too, and one JSON per case records the logits,
a digest of every array and the versions used.
"""

import json
import math
import pathlib

import numpy as np
import torch
import torchvision
from torch import nn
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.models.vgg import VGG, cfgs, make_layers

from tests.models import golden_weights

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "models" / "golden"
NUM_CLASSES = 10
BATCH = 2
# (model, width, input (height, width, channels)): odd and non-square sizes exercise torch's
# padding and pooling rules; (64, 100) pools VGG's features to 2x3, then 7x7 with overlapping
# adaptive-pool bins.
CASES = [
    ("resnet18", 4, (45, 61, 3)),
    ("resnet18", 2, (32, 32, 1)),
    ("vgg11_bn", 2, (64, 100, 1)),
    ("vgg11_bn", 1, (32, 32, 3)),
]


def resnet18(width, channels):
    model = ResNet(BasicBlock, [2, 2, 2, 2], num_classes=NUM_CLASSES)
    model.inplanes = width  # rebuilt at this width (at 64 the same layers again)
    model.conv1 = nn.Conv2d(channels, width, kernel_size=7, stride=2, padding=3, bias=False)
    model.bn1 = nn.BatchNorm2d(width)
    model.layer1 = model._make_layer(BasicBlock, width, 2)
    model.layer2 = model._make_layer(BasicBlock, 2 * width, 2, stride=2)
    model.layer3 = model._make_layer(BasicBlock, 4 * width, 2, stride=2)
    model.layer4 = model._make_layer(BasicBlock, 8 * width, 2, stride=2)
    model.fc = nn.Linear(8 * width, NUM_CLASSES)
    return model


def vgg11_bn(width, channels):
    config = [v if v == "M" else v * width // 64 for v in cfgs["A"]]
    features = make_layers(config, batch_norm=True)
    features[0] = nn.Conv2d(channels, config[0], kernel_size=3, padding=1)
    model = VGG(features, num_classes=NUM_CLASSES, init_weights=False)
    hidden = 64 * width
    model.classifier = nn.Sequential(  # torchvision's classifier, 4096 -> 64 * width
        nn.Linear(8 * width * 7 * 7, hidden),
        nn.ReLU(True),
        nn.Dropout(0.5),
        nn.Linear(hidden, hidden),
        nn.ReLU(True),
        nn.Dropout(0.5),
        nn.Linear(hidden, NUM_CLASSES),
    )
    return model


BUILDERS = {"resnet18": resnet18, "vgg11_bn": vgg11_bn}


def _trainable(model):
    return sum(p.numel() for p in model.parameters())


def check_full_width():
    """At width 64 the narrow builders are torchvision's models, parameter for parameter."""
    expected = {
        "resnet18": torchvision.models.resnet18(num_classes=NUM_CLASSES),
        "vgg11_bn": torchvision.models.vgg11_bn(num_classes=NUM_CLASSES),
    }
    for name, reference in expected.items():
        ours = BUILDERS[name](64, 3)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
            (k, tuple(v.shape)) for k, v in reference.state_dict().items()
        ], name
        print(f"{name} at width 64: {_trainable(ours):,} parameters, as torchvision's")


def make_case(name, width, input_shape, seed=0):
    model = BUILDERS[name](width, input_shape[-1])
    tensors = {}
    with torch.no_grad():
        for key, value in model.state_dict().items():
            if key.endswith("num_batches_tracked"):
                continue
            array = golden_weights.tensor(key, value.shape, seed)
            value.copy_(torch.from_numpy(array))
            tensors[key] = [list(value.shape), golden_weights.digest(array)]
    model.eval()
    x = golden_weights.inputs((BATCH, *input_shape), seed)
    with torch.no_grad():
        logits = model(torch.from_numpy(x.transpose(0, 3, 1, 2).copy())).numpy()
    assert np.isfinite(logits).all() and logits.std(axis=0).min() > 1e-3
    return {
        "model": name,
        "width": width,
        "input_shape": list(input_shape),
        "seed": seed,
        "num_classes": NUM_CLASSES,
        "made_by": "tools/generate/make_golden.py",
        "versions": {
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "numpy": np.__version__,
        },
        "trainable_parameters": _trainable(model),
        "input_digest": golden_weights.digest(x),
        "tensors": tensors,
        "logits": [[float(v) for v in row] for row in logits],
    }


def main():
    torch.set_num_threads(1)  # deterministic reductions
    check_full_width()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, width, input_shape in CASES:
        case = make_case(name, width, input_shape)
        path = OUT / f"{name}_w{width}_{'x'.join(map(str, input_shape))}.json"
        path.write_text(json.dumps(case, indent=1) + "\n")
        scale = max(abs(v) for row in case["logits"] for v in row)
        print(f"{path.name}: {case['trainable_parameters']:,} parameters, |logit| <= {scale:.3g}")
    assert math.isfinite(scale)


if __name__ == "__main__":
    main()
