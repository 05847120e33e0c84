"""The models of "Generalization on the Unseen" (Abbe, Bengio, Lotfi, Rizk, ICML 2023).

Their PyTorch code (github.com/aryol/GOTU, ``models.py``, ``token_transformer.py``) trains
four architectures on Boolean functions of d bits (d = 15 for most of their functions, the
default here); like the Boolean PVR models (``bits.py``) each takes int8 bits
(batch, num_bits) of +1 / -1 and returns (batch, 1), trained with the mean squared error:

- ``gotu_mlp``: their MLP, d -> 512 -> 1024 -> 512 -> 64 -> 1 with ReLU, initialised as
  PyTorch's ``nn.Linear`` is (their recipe: SGD, learning rate 0.003, batch 64);
- ``random_features``: 2**13 random ReLU or (1 + z)**6 / 1000 features and a linear readout
  from zero (their ``RandomFeaturesReLU`` / ``RandomFeaturesPoly``);
- ``mean_field``: one hidden ReLU layer of width 2**16 in the mean-field scaling, the output
  divided by the width (their ``MeanField``, trained with SGD at learning rate 1000);
- ``gotu_transformer``: their token Transformer on the bits as 0/1 tokens (dim 256, depth 12,
  6 heads of 64 dimensions without query/key/value biases, MLP width 256; Adam 1e-5 or 2e-5).

Every layer is initialised through a Keras initialiser (no seed of its own), so
``keras.utils.set_random_seed`` fixes the initial weights.

Example:
    >>> random_features().count_params()
    139264
"""

import math

import keras
from keras import ops

from pvr_keras.models.common import CheckedModel, bits_input, check_positive
from pvr_keras.models.layers import ReadBits
from pvr_keras.models.transformer import transformer_outputs
from pvr_keras.registry import register_model

RANDOM_FEATURES_ACTIVATIONS = ("relu", "poly")
FIRST_LAYERS = ("faithful", "frozen")


@keras.saving.register_keras_serializable(package="pvr_keras")
class ShiftedPower(keras.layers.Layer):
    """``(1 + z) ** degree / scale``, elementwise: their random features' "poly" activation
    (degree 6, scale 1000). No parameters.

    Example:
        >>> round(float(ShiftedPower()(keras.ops.ones((1, 1)))[0, 0]), 6)
        0.064
    """

    def __init__(self, degree=6, scale=1000.0, **kwargs):
        super().__init__(**kwargs)
        self.degree = int(degree)
        self.scale = float(scale)

    def call(self, z):
        return ops.power(1.0 + z, self.degree) / self.scale

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "degree": self.degree, "scale": self.scale}


def _uniform(bound):
    return keras.initializers.RandomUniform(-bound, bound)


def _torch_dense(units, fan_in, name, activation=None):
    """Dense initialised as PyTorch's ``nn.Linear``: weights and bias U(+-1/sqrt(fan_in))."""
    bound = 1.0 / math.sqrt(fan_in)
    return keras.layers.Dense(
        units,
        activation=activation,
        kernel_initializer=_uniform(bound),
        bias_initializer=_uniform(bound),
        name=name,
    )


@register_model("gotu_mlp", kind="bits", params=1_091_201, widths={"widths": (512, 1024, 512, 64)})
def gotu_mlp(*, num_bits=15, widths=(512, 1024, 512, 64), name="gotu_mlp"):
    """Their MLP: Dense+ReLU layers of ``widths`` on the bits as floats, then one linear
    output; 1,091,201 parameters at d = 15.

    The layers are ``bits_mlp``'s (``block0`` ... , the last hidden one ``pre_logits``, then
    ``logits``); the initialisation is PyTorch's ``nn.Linear`` default, which their code keeps
    (its own ``_init_weights`` is commented out): every weight and bias U(-1/sqrt(fan_in),
    +1/sqrt(fan_in)). ``bits_mlp`` has Keras's defaults, Glorot-uniform weights
    (U(+-sqrt(6/(fan_in + fan_out)))) and zero biases; their learning rates (SGD 0.003,
    batch 64) assume PyTorch's scale.

    Args:
        num_bits: d, the input bits.
        widths: output sizes of the hidden layers.
        name: model name.
    """
    check_positive(**{f"widths[{i}]": w for i, w in enumerate(widths)})
    bits = bits_input(num_bits)
    x = ReadBits(name="read_bits")(bits)
    fan_in = num_bits
    for i, width in enumerate(widths):
        layer_name = "pre_logits" if i == len(widths) - 1 else f"block{i}"
        x = _torch_dense(width, fan_in, layer_name, activation="relu")(x)
        fan_in = width
    out = _torch_dense(1, fan_in, "logits")(x)
    return CheckedModel(bits, out, name=name)


@register_model("random_features", kind="bits", params=139_264)
def random_features(
    *,
    num_bits=15,
    width=2**13,
    activation="relu",
    first_layer="faithful",
    name="random_features",
):
    """Their random-features model: ``width`` features act(W x + b) with W and b drawn
    N(0, 1/d), and a linear readout without bias that starts at zero (so the model outputs 0
    at initialisation); 139,264 parameters at d = 15 (15 * 8192 + 8192 + 8192).

    ``first_layer="faithful"`` (the default) trains the features too, as their code does:
    it means to freeze them but sets ``param.required_grad = False``, a misspelt attribute
    that PyTorch ignores, so every parameter is trained. ``"frozen"`` makes the features
    non-trainable: a true random-features model, only the readout learns. Either way the
    readout starting at zero gives the features a zero gradient at the first step.

    Layers: ``block0`` (the features before the activation), ``pre_logits`` (after it),
    ``logits`` (the readout).

    Args:
        num_bits: d, the input bits.
        width: the number of features (their 2**13).
        activation: ``"relu"`` (their ``RandomFeaturesReLU``) or ``"poly"``, (1 + z)**6 / 1000
            (their ``RandomFeaturesPoly``).
        first_layer: ``"faithful"`` (trained) or ``"frozen"``.
        name: model name.
    """
    check_positive(width=width)
    if activation not in RANDOM_FEATURES_ACTIVATIONS:
        raise ValueError(f"activation must be 'relu' or 'poly'; received {activation!r}")
    if first_layer not in FIRST_LAYERS:
        raise ValueError(
            f"first_layer must be 'faithful' (trained, as their code does) or 'frozen'; "
            f"received {first_layer!r}"
        )
    bits = bits_input(num_bits)
    x = ReadBits(name="read_bits")(bits)
    stddev = 1.0 / math.sqrt(num_bits)
    features = keras.layers.Dense(
        width,
        kernel_initializer=keras.initializers.RandomNormal(stddev=stddev),
        bias_initializer=keras.initializers.RandomNormal(stddev=stddev),
        trainable=first_layer == "faithful",
        name="block0",
    )
    x = features(x)
    if activation == "relu":
        x = keras.layers.Activation("relu", name="pre_logits")(x)
    else:
        x = ShiftedPower(degree=6, scale=1000.0, name="pre_logits")(x)
    out = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="logits")(x)
    return CheckedModel(bits, out, name=name)


@register_model("mean_field", kind="bits", params=1_114_113)
def mean_field(*, num_bits=15, width=2**16, name="mean_field"):
    """Their mean-field network (after Abbe, Boix-Adsera, Misiakiewicz 2022): one hidden
    ReLU layer of ``width`` units, layer2(relu(layer1(x))) / width; 1,114,113 parameters at
    d = 15 (15 * 65536 + 65536 + 65536 + 1).

    layer1's weights and bias are U(+-1/sqrt(d)) (their fan_in**-0.5), layer2's U(+-1)
    (their fan_in**0); the division by the width makes the output O(1/sqrt(width)) at
    initialisation and is why their recipe trains it with SGD at learning rate 1000.

    Layers: ``block0`` (layer1), ``pre_logits`` (its ReLU), ``readout`` (layer2), ``logits``
    (the division by the width).

    Args:
        num_bits: d, the input bits.
        width: the hidden units (their 2**16).
        name: model name.
    """
    check_positive(width=width)
    bits = bits_input(num_bits)
    x = ReadBits(name="read_bits")(bits)
    bound = 1.0 / math.sqrt(num_bits)
    x = keras.layers.Dense(
        width, kernel_initializer=_uniform(bound), bias_initializer=_uniform(bound), name="block0"
    )(x)
    x = keras.layers.Activation("relu", name="pre_logits")(x)
    x = keras.layers.Dense(
        1, kernel_initializer=_uniform(1.0), bias_initializer=_uniform(1.0), name="readout"
    )(x)
    out = keras.layers.Rescaling(1.0 / width, name="logits")(x)
    return CheckedModel(bits, out, name=name)


@register_model(
    "gotu_transformer", kind="bits", params=6_318_593,
    widths={"dim": 256, "mlp_dim": 256, "dim_head": 64},
)  # fmt: skip
def gotu_transformer(
    *,
    num_bits=15,
    dim=256,
    depth=12,
    heads=6,
    dim_head=64,
    mlp_dim=256,
    name="gotu_transformer",
):
    """Their token Transformer (after lucidrains' vit-pytorch) on the bits as 0/1 tokens;
    6,318,593 parameters at d = 15.

    The body is ``transformer``'s: token embedding, a class token and learned position
    embeddings, ``depth`` pre-LayerNorm blocks (attention, then a GELU MLP of width
    ``mlp_dim``), and the class token through LayerNorm (``pre_logits``) and a linear output
    (``logits``). As in their code each block's attention has ``heads`` heads of ``dim_head``
    dimensions whatever ``dim`` is (inner width heads * dim_head = 384 at the defaults, against
    dim 256) and no query/key/value biases; its output projection has a bias. ``--width``
    scales ``dim``, ``mlp_dim`` and ``dim_head`` (the 6 heads stay): at 1/8, 32, 32 and 8.

    Differences from their code: the tokens are the cube's row bits (0 for +1, 1 for -1;
    theirs are (x + 1) / 2, 1 for +1), which only swaps the two embedding rows; the
    initialisation is Keras's and the library's (uniform +-0.05 token embedding, zero class
    token, N(0, 0.02) position embedding, Glorot-uniform projections with zero biases) where
    theirs draws the embeddings, class token and position embedding N(0, 1) and the
    projections from PyTorch's ``nn.Linear`` default; their attention drops its output
    projection when heads == 1 and dim_head == dim, ours keeps it.

    Args:
        num_bits: d, the input bits (the tokens).
        dim: embedding width.
        depth: number of blocks.
        heads: attention heads per block.
        dim_head: each head's width.
        mlp_dim: hidden width of each block's MLP.
        name: model name.
    """
    check_positive(dim=dim, depth=depth, heads=heads, dim_head=dim_head, mlp_dim=mlp_dim)
    bits = bits_input(num_bits)
    tokens = ReadBits(as_tokens=True, name="read_bits")(bits)
    out = transformer_outputs(tokens, vocab=2, num_classes=1, dim=dim, depth=depth, heads=heads,
                              mlp_dim=mlp_dim, head_dim=dim_head, qkv_bias=False)  # fmt: skip
    return CheckedModel(bits, out, name=name)
