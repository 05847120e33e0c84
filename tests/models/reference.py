"""NumPy forward passes of the token models, written from their equations (float64).

Each takes the weights of a built Keras model by layer name (``weights(model)``), so a test
can set random weights, run both and compare logits. Nothing here imports Keras: the
reference shares no code with ``pvr_keras.models``.

    LN(x)          = gamma * (x - mean(x)) / sqrt(var(x) + eps) + beta      over features
    MHA(x)         = concat_h softmax(Q_h K_h^T / sqrt(d)) V_h  W_o + b_o   over tokens
    encoder layer  = x + MHA(LN1(x)), then x + W2 gelu(W1 LN2(x))           (pre-LN, ViT)
    mixer block    = x + (W2 gelu(W1 LN1(x)^T))^T, then x + W2' gelu(W1' LN2(x))
    readout        = head(LN(class token)), the class token prepended at position 0
"""

import math

import numpy as np

EPS = 1e-5


def weights(model):
    """{layer name: [arrays]} of every layer of a built Keras model, as float64."""
    return {
        layer.name: [np.asarray(w, np.float64) for w in layer.get_weights()]
        for layer in model.layers
    }


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + EPS) + beta


_erf = np.vectorize(math.erf)


def gelu(x):
    """The exact GELU, x * Phi(x)."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def relu(x):
    return np.maximum(x, 0.0)


def dense(x, kernel, bias):
    return x @ kernel + bias


def attention(x, q_kernel, q_bias, k_kernel, k_bias, v_kernel, v_bias, o_kernel, o_bias):
    """Multi-head self-attention across the token axis. x (B, T, D); kernels (D, H, d)."""
    q = np.einsum("btd,dhk->bthk", x, q_kernel) + q_bias  # (B, T, H, d)
    k = np.einsum("btd,dhk->bthk", x, k_kernel) + k_bias
    v = np.einsum("btd,dhk->bthk", x, v_kernel) + v_bias
    scores = np.einsum("bthk,bshk->bhts", q, k) / math.sqrt(q.shape[-1])  # (B, H, T, S)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probs = scores / scores.sum(-1, keepdims=True)
    out = np.einsum("bhts,bshk->bthk", probs, v)
    return np.einsum("bthk,hkd->btd", out, o_kernel) + o_bias


def encoder_layer(x, w, name):
    y = layer_norm(x, *w[f"{name}_norm1"])
    x = x + attention(y, *w[f"{name}_attention"])
    y = layer_norm(x, *w[f"{name}_norm2"])
    y = dense(gelu(dense(y, *w[f"{name}_mlp1"])), *w[f"{name}_mlp2"])
    return x + y


def mixer_block(x, w, name):
    y = layer_norm(x, *w[f"{name}_norm1"]).transpose(0, 2, 1)  # (B, D, T): mix tokens
    y = dense(gelu(dense(y, *w[f"{name}_token_mlp1"])), *w[f"{name}_token_mlp2"])
    x = x + y.transpose(0, 2, 1)
    y = layer_norm(x, *w[f"{name}_norm2"])
    y = dense(gelu(dense(y, *w[f"{name}_channel_mlp1"])), *w[f"{name}_channel_mlp2"])
    return x + y


def _class_token_head(x, w, depth, block):
    """Class token, ``depth`` blocks, LN of the class token, linear head."""
    (token,) = w["class_token"]
    x = np.concatenate([np.broadcast_to(token, (len(x), 1, x.shape[-1])), x], axis=1)
    if "position_embedding" in w:
        x = x + w["position_embedding"][0]
    for i in range(depth):
        x = block(x, w, f"block{i}")
    return dense(layer_norm(x[:, 0], *w["pre_logits"]), *w["logits"])


def transformer(tokens, w, depth):
    """tokens (B, T) int -> logits (B, classes)."""
    return _class_token_head(w["embedding"][0][tokens], w, depth, encoder_layer)


def mixer(tokens, w, depth):
    return _class_token_head(w["embedding"][0][tokens], w, depth, mixer_block)


def mlp_stack(x, w, num_layers):
    """Dense+ReLU ``block0`` ... ``pre_logits`` then the linear head. x (B, features)."""
    names = [f"block{i}" for i in range(num_layers - 1)] + ["pre_logits"]
    for name in names:
        x = relu(dense(x, *w[name]))
    return dense(x, *w["logits"])


def mlp(tokens, w, num_layers):
    embedded = w["embedding"][0][tokens]  # (B, T, E), concatenated token by token
    return mlp_stack(embedded.reshape(len(tokens), -1), w, num_layers)


def conv3x3_same(x, kernel, bias):
    """Cross-correlation, stride 1, zero padding 1. x (N, H, W, C), kernel (3, 3, C, F)."""
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = x.shape[1:3]
    out = sum(padded[:, i : i + h, j : j + w] @ kernel[i, j] for i in range(3) for j in range(3))
    return out + bias


def max_pool2(x):
    n, h, w, c = x.shape
    x = x[:, : h // 2 * 2, : w // 2 * 2]
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def image_sequence(images, w, *, num_convs, head, depth=0, num_layers=0):
    """images (B, T, H, W, C) -> logits: each image encoded alone (conv-ReLU-pool stages,
    channels-last flatten, dense ReLU), then the token head on the sequence of embeddings."""
    b, t = images.shape[:2]
    x = images.reshape(b * t, *images.shape[2:])
    for i in range(num_convs):
        x = max_pool2(relu(conv3x3_same(x, *w[f"encoder_conv{i}"])))
    x = relu(dense(x.reshape(b * t, -1), *w["encoder_dense"])).reshape(b, t, -1)
    if head == "mlp":
        return mlp_stack(x.reshape(b, -1), w, num_layers)
    block = encoder_layer if head == "transformer" else mixer_block
    return _class_token_head(x, w, depth, block)
