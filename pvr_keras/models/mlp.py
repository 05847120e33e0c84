"""MLP and MLP 2x for token PVR (Appendix A): embedding, four dense+ReLU layers, classifier."""

import keras

from pvr_keras.models.common import CheckedModel, check_positive, token_input
from pvr_keras.registry import register_model


@register_model(
    "mlp", kind="token", params=1_445_194,
    widths={"embed_dim": 64, "widths": (512, 1024, 512, 64)},
)  # fmt: skip
def mlp(
    *, seq_len=11, vocab=10, num_classes=10, embed_dim=64, widths=(512, 1024, 512, 64), name="mlp"
):
    """The paper's MLP: 1,445,194 parameters at the defaults.

    Each token is embedded (``vocab`` x ``embed_dim``), the embeddings are concatenated and
    passed through dense layers of ``widths`` with ReLU; the last of them is ``pre_logits``.

    Args:
        seq_len: tokens per input sequence.
        vocab: number of token values.
        num_classes: number of output logits.
        embed_dim: token embedding size.
        widths: output sizes of the hidden dense layers.
        name: model name.

    Returns:
        A ``keras.Model`` from int tokens (batch, seq_len) to logits (batch, num_classes).

    Example:
        >>> model = mlp()
        >>> model.count_params()
        1445194
    """
    check_positive(seq_len=seq_len, vocab=vocab, num_classes=num_classes, embed_dim=embed_dim)
    check_positive(**{f"widths[{i}]": w for i, w in enumerate(widths)})
    tokens = token_input(seq_len)
    x = keras.layers.Embedding(vocab, embed_dim, name="embedding")(tokens)  # (batch, seq, dim)
    x = dense_stack(keras.layers.Flatten(name="flatten")(x), widths)
    logits = keras.layers.Dense(num_classes, name="logits")(x)
    return CheckedModel(tokens, logits, name=name)


def dense_stack(x, widths):
    """Dense+ReLU layers of ``widths``, named ``block0``, ``block1``, ... and, the last,
    ``pre_logits``: the MLP's body, also the image-sequence model's MLP head."""
    for i, width in enumerate(widths):
        last = i == len(widths) - 1
        x = keras.layers.Dense(
            width, activation="relu", name="pre_logits" if last else f"block{i}"
        )(x)
    return x


@register_model(
    "mlp2x", kind="token", params=5_052_426,
    widths={"embed_dim": 64, "widths": (1024, 2048, 1024, 128)},
)  # fmt: skip
def mlp2x(
    *,
    seq_len=11,
    vocab=10,
    num_classes=10,
    embed_dim=64,
    widths=(1024, 2048, 1024, 128),
    name="mlp2x",
):
    """The paper's MLP 2x: hidden widths doubled (1024, 2048, 1024, 128); 5,052,426 params."""
    return mlp(
        seq_len=seq_len,
        vocab=vocab,
        num_classes=num_classes,
        embed_dim=embed_dim,
        widths=widths,
        name=name,
    )
