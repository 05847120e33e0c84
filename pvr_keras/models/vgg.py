"""VGG11 with batch norm for visual PVR (Appendix A), layer for layer torchvision's ``vgg11_bn``."""

import keras

from pvr_keras.models.common import CheckedModel, check_positive, image_input
from pvr_keras.models.layers import AdaptiveAveragePooling2D
from pvr_keras.registry import register_model

# torchvision's configuration "A": conv widths in units of ``width``, "M" a 2x2 max pool.
VGG11 = (1, "M", 2, "M", 4, 4, "M", 8, 8, "M", 8, 8, "M")
# torchvision: convolutions kaiming_normal_(fan_out, relu) with zero bias, linears N(0, 0.01).
CONV_INIT = keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal")
DENSE_INIT = keras.initializers.RandomNormal(stddev=0.01)
BN = {"epsilon": 1e-5, "momentum": 0.9}  # torch BatchNorm2d defaults


# --width sets the base channels (torchvision: 64); parameters: torchvision's, 10 classes.
@register_model("vgg11_bn", kind="image", params=128_812_810, width_arg="width")
def vgg11_bn(input_shape, num_classes=10, *, width=64, dropout=0.5, name="vgg11_bn"):
    """torchvision's VGG11-BN: 128,812,810 trainable parameters for 3 channels, 10 classes.

    Eight 3x3 conv-BN-ReLU layers (``block0`` ... ``block7``) with ``width`` x (1, 2, 4, 4,
    8, 8, 8, 8) channels and five 2x2 max pools, torch's ``AdaptiveAvgPool2d((7, 7))``
    reproduced exactly, then the classifier 49 * 8 * ``width`` -> 64 * ``width`` ->
    64 * ``width`` -> ``num_classes`` with ReLU and dropout. The input to the last linear
    layer is ``pre_logits``. ``width=64`` is torchvision's model (25088 -> 4096 -> 4096);
    smaller widths give narrow copies of the same architecture for CPU runs.

    Args:
        input_shape: (height, width, channels) of the float images in [0, 1]; height and
            width at least 32, 1 or 3 channels.
        num_classes: number of output logits.
        width: channels of the first convolution.
        dropout: dropout rate of the classifier (torchvision: 0.5).
        name: model name.

    Returns:
        A ``keras.Model`` from images (batch, *input_shape) to logits (batch, num_classes).

    Example:
        >>> model = vgg11_bn((32, 32, 3), width=8)
        >>> model.get_layer("pre_logits").output.shape
        (None, 512)
    """
    check_positive(num_classes=num_classes, width=width)
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0 <= dropout < 1:
        raise ValueError(f"dropout must be a number in [0, 1); received {dropout!r}")
    images = image_input(input_shape)
    x = images
    block = 0
    for item in VGG11:
        if item == "M":
            x = keras.layers.MaxPooling2D(2, name=f"pool{block - 1}")(x)
            continue
        prefix = f"block{block}"
        x = keras.layers.ZeroPadding2D(1, name=f"{prefix}_pad")(x)
        x = keras.layers.Conv2D(
            item * width, 3, kernel_initializer=CONV_INIT, name=f"{prefix}_conv"
        )(x)
        x = keras.layers.BatchNormalization(**BN, name=f"{prefix}_bn")(x)
        x = keras.layers.ReLU(name=prefix)(x)
        block += 1
    x = AdaptiveAveragePooling2D((7, 7), name="adaptive_pool")(x)  # (batch, 7, 7, 8 * width)
    x = keras.layers.Flatten(name="flatten")(x)
    hidden = 64 * width
    for i in range(2):
        x = keras.layers.Dense(
            hidden, activation="relu", kernel_initializer=DENSE_INIT, name=f"classifier{i}"
        )(x)
        x = keras.layers.Dropout(dropout, name="pre_logits" if i else "classifier0_dropout")(x)
    logits = keras.layers.Dense(num_classes, kernel_initializer=DENSE_INIT, name="logits")(x)
    return CheckedModel(images, logits, name=name)
