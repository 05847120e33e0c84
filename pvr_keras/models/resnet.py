"""ResNet18 for visual PVR (Appendix A), layer for layer torchvision's ``resnet18``."""

import keras

from pvr_keras.models.common import CheckedModel, check_positive, image_input
from pvr_keras.registry import register_model

# torchvision initialises convolutions with kaiming_normal_(mode="fan_out", nonlinearity="relu").
CONV_INIT = keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal")
# torch BatchNorm2d: eps 1e-5, running-average momentum 0.1 (Keras counts it the other way).
BN = {"epsilon": 1e-5, "momentum": 0.9}


def _conv(x, filters, kernel, stride, *, name):
    """torch ``Conv2d(kernel, stride, padding=kernel // 2, bias=False)``: symmetric padding."""
    if kernel > 1:
        x = keras.layers.ZeroPadding2D(kernel // 2, name=f"{name}_pad")(x)
    return keras.layers.Conv2D(
        filters, kernel, stride, use_bias=False, kernel_initializer=CONV_INIT, name=name
    )(x)


def _basic_block(x, filters, stride, *, name):
    """torchvision ``BasicBlock``: two 3x3 conv-BN, 1x1 conv-BN shortcut when shapes change."""
    y = _conv(x, filters, 3, stride, name=f"{name}_conv1")
    y = keras.layers.BatchNormalization(**BN, name=f"{name}_bn1")(y)
    y = keras.layers.ReLU(name=f"{name}_relu1")(y)
    y = _conv(y, filters, 3, 1, name=f"{name}_conv2")
    y = keras.layers.BatchNormalization(**BN, name=f"{name}_bn2")(y)
    if stride != 1 or x.shape[-1] != filters:
        x = _conv(x, filters, 1, stride, name=f"{name}_downsample_conv")
        x = keras.layers.BatchNormalization(**BN, name=f"{name}_downsample_bn")(x)
    y = keras.layers.Add(name=f"{name}_add")([x, y])
    return keras.layers.ReLU(name=name)(y)


# --width sets the base channels (torchvision: 64); parameters: torchvision's, 10 classes.
@register_model("resnet18", kind="image", params=11_181_642, width_arg="width")
def resnet18(input_shape, num_classes=10, *, width=64, name="resnet18"):
    """torchvision's ResNet18: 11,181,642 trainable parameters for 3 channels, 10 classes.

    Stem (7x7/2 conv, BN, ReLU, 3x3/2 max pool), four stages of two basic blocks with
    ``width``, 2x, 4x, 8x ``width`` channels (``block0`` ... ``block7``), global average
    pooling (``pre_logits``) and a linear head. Padding is symmetric as in torch, so the
    feature maps match torchvision's for any input size. ``width=64`` is torchvision's model;
    smaller widths give narrow copies of the same architecture for CPU runs.

    Args:
        input_shape: (height, width, channels) of the float images in [0, 1]; height and
            width at least 32, 1 or 3 channels.
        num_classes: number of output logits.
        width: channels of the first stage.
        name: model name.

    Returns:
        A ``keras.Model`` from images (batch, *input_shape) to logits (batch, num_classes).

    Example:
        >>> import math
        >>> model = resnet18((32, 32, 3))
        >>> sum(math.prod(w.shape) for w in model.trainable_weights)
        11181642
    """
    check_positive(num_classes=num_classes, width=width)
    images = image_input(input_shape)
    x = _conv(images, width, 7, 2, name="stem_conv")
    x = keras.layers.BatchNormalization(**BN, name="stem_bn")(x)
    x = keras.layers.ReLU(name="stem_relu")(x)
    # Zero padding equals torch's -inf padding here: the inputs are >= 0 after the ReLU.
    x = keras.layers.ZeroPadding2D(1, name="stem_pool_pad")(x)
    x = keras.layers.MaxPooling2D(3, 2, name="stem_pool")(x)
    for stage in range(4):
        for j in range(2):
            stride = 2 if stage > 0 and j == 0 else 1
            x = _basic_block(x, width * 2**stage, stride, name=f"block{2 * stage + j}")
    x = keras.layers.GlobalAveragePooling2D(name="pre_logits")(x)  # (batch, 8 * width)
    logits = keras.layers.Dense(num_classes, name="logits")(x)
    return CheckedModel(images, logits, name=name)
