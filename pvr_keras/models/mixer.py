"""MLP-Mixer for token PVR (Appendix A; Tolstikhin et al. 2021) with a class token."""

import keras

from pvr_keras.models.common import CheckedModel, check_positive, token_input
from pvr_keras.models.layers import ClassToken
from pvr_keras.registry import register_model

LAYER_NORM_EPSILON = 1e-5  # torch.nn.LayerNorm default


def _mlp(x, hidden, *, name):
    """Dense(hidden) -> GELU -> Dense(back to the input width), along the last axis."""
    width = x.shape[-1]
    x = keras.layers.Dense(hidden, activation="gelu", name=f"{name}1")(x)
    return keras.layers.Dense(width, name=f"{name}2")(x)


def _mixer_block(x, *, token_dim, channel_dim, name):
    """Token mixing then channel mixing, each pre-LN with a residual. (batch, tokens, dim)."""
    y = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name=f"{name}_norm1")(x)
    y = keras.layers.Permute((2, 1), name=f"{name}_to_tokens_last")(y)  # (batch, dim, tokens)
    y = _mlp(y, token_dim, name=f"{name}_token_mlp")
    y = keras.layers.Permute((2, 1), name=f"{name}_to_channels_last")(y)
    x = keras.layers.Add(name=f"{name}_residual1")([x, y])
    y = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name=f"{name}_norm2")(x)
    y = _mlp(y, channel_dim, name=f"{name}_channel_mlp")
    return keras.layers.Add(name=name)([x, y])


@register_model(
    "mixer", kind="token", params=8_495_674,
    widths={"dim": 512, "token_dim": 768, "channel_dim": 2048},
)  # fmt: skip
def mixer(
    *,
    seq_len=11,
    vocab=10,
    num_classes=10,
    dim=512,
    depth=4,
    token_dim=768,
    channel_dim=2048,
    name="mixer",
):
    """The paper's MLP-Mixer: 8,495,674 parameters at the defaults.

    Tokens are embedded (``vocab`` x ``dim``) and a learnable class token is prepended (no
    position embedding: token mixing already knows positions). ``depth`` mixer blocks follow,
    named ``block0`` ... ``block{depth-1}``: a token-mixing MLP (width ``token_dim``) across
    the ``seq_len + 1`` tokens and a channel-mixing MLP (width ``channel_dim``), GELU, biases,
    pre-LN and residuals. The final LayerNorm of the class token is ``pre_logits``.

    Args:
        seq_len: tokens per input sequence.
        vocab: number of token values.
        num_classes: number of output logits.
        dim: embedding (channel) width.
        depth: number of mixer blocks.
        token_dim: hidden width of the token-mixing MLPs.
        channel_dim: hidden width of the channel-mixing MLPs.
        name: model name.

    Returns:
        A ``keras.Model`` from int tokens (batch, seq_len) to logits (batch, num_classes).

    Example:
        >>> mixer().count_params()
        8495674
    """
    check_positive(
        seq_len=seq_len,
        vocab=vocab,
        num_classes=num_classes,
        dim=dim,
        depth=depth,
        token_dim=token_dim,
        channel_dim=channel_dim,
    )
    tokens = token_input(seq_len)
    logits = mixer_outputs(tokens, vocab=vocab, num_classes=num_classes, dim=dim, depth=depth,
                           token_dim=token_dim, channel_dim=channel_dim)  # fmt: skip
    return CheckedModel(tokens, logits, name=name)


def mixer_outputs(tokens, *, vocab, num_classes, dim, depth, token_dim, channel_dim):
    """The Mixer's layers on int tokens (batch, seq_len) (checked arguments): its outputs
    (batch, num_classes). ``mixer`` and the Boolean ``bits_mixer``."""
    seq_len = tokens.shape[1]
    x = keras.layers.Embedding(vocab, dim, name="embedding")(tokens)  # (batch, seq, dim)
    x = ClassToken(name="class_token")(x)  # (batch, seq + 1, dim)
    for i in range(depth):
        x = _mixer_block(x, token_dim=token_dim, channel_dim=channel_dim, name=f"block{i}")
    # LayerNorm acts per token, so normalising only the class token gives the same features.
    x = keras.layers.Cropping1D((0, seq_len), name="class_token_output")(x)  # (batch, 1, dim)
    x = keras.layers.Flatten(name="flatten")(x)
    x = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="pre_logits")(x)
    return keras.layers.Dense(num_classes, name="logits")(x)
