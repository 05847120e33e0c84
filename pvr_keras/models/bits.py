"""The Boolean PVR models (Abbe et al. 2022): regressors from bits in {+1, -1} to one number.

Every model takes int8 bits (batch, num_bits) and returns (batch, 1), trained with the mean
squared error. ``bits_mlp`` reads the bits as floats +1.0 / -1.0 (their code's MLP);
``bits_transformer`` and ``bits_mixer`` read them as tokens (0 for +1, 1 for -1, the cube's
row bits) into the paper's Transformer and MLP-Mixer bodies with one output. Their code's
sizes are the defaults: the Transformer has dim 256, depth 12 and MLP width 256 (their
attention uses 6 heads of 64 dimensions and no query/key/value bias; ours splits the width
over 8 heads of 32, with biases, as the token Transformer does); the Mixer has dim 256, depth
12, a token-mixing width of four times the tokens and a channel-mixing width of half the dim
(with the token Mixer's class token instead of their mean pooling).

Example:
    >>> bits_mlp(num_bits=11).count_params()
    1089153
"""

import keras

from pvr_keras.models.common import CheckedModel, bits_input, check_positive
from pvr_keras.models.layers import ReadBits
from pvr_keras.models.mixer import mixer_outputs
from pvr_keras.models.mlp import dense_stack
from pvr_keras.models.transformer import transformer_outputs
from pvr_keras.registry import register_model


@register_model("bits_mlp", kind="bits", params=1_089_153, widths={"widths": (512, 1024, 512, 64)})
def bits_mlp(*, num_bits=11, widths=(512, 1024, 512, 64), name="bits_mlp"):
    """Dense+ReLU layers of ``widths`` on the bits as floats, then one linear output
    (1,089,153 parameters at d = 11: their code's MLP). The last hidden layer is
    ``pre_logits``."""
    check_positive(**{f"widths[{i}]": w for i, w in enumerate(widths)})
    bits = bits_input(num_bits)
    x = dense_stack(ReadBits(name="read_bits")(bits), widths)
    return CheckedModel(bits, keras.layers.Dense(1, name="logits")(x), name=name)


@register_model(
    "bits_transformer", kind="bits", params=4_753_921,
    widths={"dim": 256, "mlp_dim": 256}, width_multiple=8,
)  # fmt: skip
def bits_transformer(
    *, num_bits=11, dim=256, depth=12, heads=8, mlp_dim=256, name="bits_transformer"
):
    """The token Transformer on the bits as 0/1 tokens, one output."""
    check_positive(dim=dim, depth=depth, heads=heads, mlp_dim=mlp_dim)
    if dim % heads:
        raise ValueError(f"dim must be divisible by heads ({heads}); received dim={dim}")
    bits = bits_input(num_bits)
    tokens = ReadBits(as_tokens=True, name="read_bits")(bits)
    out = transformer_outputs(tokens, vocab=2, num_classes=1, dim=dim, depth=depth,
                              heads=heads, mlp_dim=mlp_dim)  # fmt: skip
    return CheckedModel(bits, out, name=name)


@register_model(
    "bits_mixer", kind="bits", params=819_409,
    widths={"dim": 256, "channel_dim": 128},
)  # fmt: skip
def bits_mixer(
    *, num_bits=11, dim=256, depth=12, token_dim=None, channel_dim=128, name="bits_mixer"
):
    """The token MLP-Mixer on the bits as 0/1 tokens, one output; ``token_dim`` defaults to
    four times the tokens (bits and the class token)."""
    token_dim = 4 * (num_bits + 1) if token_dim is None else token_dim
    check_positive(dim=dim, depth=depth, token_dim=token_dim, channel_dim=channel_dim)
    bits = bits_input(num_bits)
    tokens = ReadBits(as_tokens=True, name="read_bits")(bits)
    out = mixer_outputs(tokens, vocab=2, num_classes=1, dim=dim, depth=depth,
                        token_dim=token_dim, channel_dim=channel_dim)  # fmt: skip
    return CheckedModel(bits, out, name=name)
