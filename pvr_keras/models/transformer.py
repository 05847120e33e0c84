"""Transformer encoder for token PVR (Appendix A): ViT-style class token, pre-LN blocks."""

import keras

from pvr_keras.models.common import CheckedModel, check_positive, token_input
from pvr_keras.models.layers import AddBias, ClassToken, PositionEmbedding
from pvr_keras.registry import register_model

LAYER_NORM_EPSILON = 1e-5  # torch.nn.LayerNorm default


def _encoder_block(x, *, heads, mlp_dim, name, head_dim=None, qkv_bias=True):
    """Pre-LN encoder layer: x + MHA(LN(x)), then + MLP(LN(x)). (batch, tokens, dim).

    ``head_dim``: each head's width (None: dim // heads). ``qkv_bias=False``: no query, key
    and value biases; the output projection keeps its bias (``{name}_attention_bias``)."""
    dim = x.shape[-1]
    head_dim = dim // heads if head_dim is None else head_dim
    y = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name=f"{name}_norm1")(x)
    y = keras.layers.MultiHeadAttention(
        heads, head_dim, use_bias=qkv_bias, name=f"{name}_attention"
    )(y, y)
    if not qkv_bias:  # Keras's attention has one switch for all four projections' biases
        y = AddBias(name=f"{name}_attention_bias")(y)
    x = keras.layers.Add(name=f"{name}_residual1")([x, y])
    y = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name=f"{name}_norm2")(x)
    y = keras.layers.Dense(mlp_dim, activation="gelu", name=f"{name}_mlp1")(y)
    y = keras.layers.Dense(dim, name=f"{name}_mlp2")(y)
    return keras.layers.Add(name=name)([x, y])


@register_model(
    "transformer", kind="token", params=8_429_066,
    widths={"dim": 512, "mlp_dim": 1024}, width_multiple=4,  # dim: a multiple of the heads
)  # fmt: skip
def transformer(
    *,
    seq_len=11,
    vocab=10,
    num_classes=10,
    dim=512,
    depth=4,
    heads=4,
    mlp_dim=1024,
    name="transformer",
):
    """The paper's Transformer: 8,429,066 parameters at the defaults.

    Tokens are embedded (``vocab`` x ``dim``), a learnable class token is prepended and a
    learnable position embedding added; ``depth`` pre-LN encoder layers (``heads``-head
    self-attention and a GELU MLP of width ``mlp_dim``, all with biases) follow, named
    ``block0`` ... ``block{depth-1}``. The final LayerNorm of the class token is ``pre_logits``
    and a linear head gives the logits.

    Args:
        seq_len: tokens per input sequence.
        vocab: number of token values.
        num_classes: number of output logits.
        dim: embedding width; must be divisible by ``heads``.
        depth: number of encoder layers.
        heads: attention heads per layer.
        mlp_dim: hidden width of each layer's MLP.
        name: model name.

    Returns:
        A ``keras.Model`` from int tokens (batch, seq_len) to logits (batch, num_classes).

    Example:
        >>> transformer().count_params()
        8429066
    """
    check_positive(
        seq_len=seq_len,
        vocab=vocab,
        num_classes=num_classes,
        dim=dim,
        depth=depth,
        heads=heads,
        mlp_dim=mlp_dim,
    )
    if dim % heads:
        raise ValueError(f"dim must be divisible by heads ({heads}); received dim={dim}")
    tokens = token_input(seq_len)
    logits = transformer_outputs(tokens, vocab=vocab, num_classes=num_classes, dim=dim,
                                 depth=depth, heads=heads, mlp_dim=mlp_dim)  # fmt: skip
    return CheckedModel(tokens, logits, name=name)


def transformer_outputs(
    tokens, *, vocab, num_classes, dim, depth, heads, mlp_dim, head_dim=None, qkv_bias=True
):
    """The Transformer's layers on int tokens (batch, seq_len) (checked arguments): its
    outputs (batch, num_classes). ``transformer``, the Boolean ``bits_transformer`` and
    ``gotu_transformer`` (which sets ``head_dim``, each head's width, None: dim // heads, and
    ``qkv_bias=False``: no query/key/value biases)."""
    seq_len = tokens.shape[1]
    x = keras.layers.Embedding(vocab, dim, name="embedding")(tokens)  # (batch, seq, dim)
    x = ClassToken(name="class_token")(x)  # (batch, seq + 1, dim)
    x = PositionEmbedding(name="position_embedding")(x)
    for i in range(depth):
        x = _encoder_block(x, heads=heads, mlp_dim=mlp_dim, name=f"block{i}",
                           head_dim=head_dim, qkv_bias=qkv_bias)  # fmt: skip
    # LayerNorm acts per token, so normalising only the class token gives the same features.
    x = keras.layers.Cropping1D((0, seq_len), name="class_token_output")(x)  # (batch, 1, dim)
    x = keras.layers.Flatten(name="flatten")(x)
    x = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="pre_logits")(x)
    return keras.layers.Dense(num_classes, name="logits")(x)
