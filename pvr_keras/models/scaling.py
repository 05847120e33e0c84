"""Narrower (or wider) copies of the token architectures from one width scale factor.

``scale=1`` is the paper's model; CPU presets train e.g. ``scale=0.25`` copies of the
Transformer and MLP-Mixer, whose full width needs ~20 GB of activations at batch 1024 (the
Mixer's token-mixing hidden layer alone is batch x 512 x 768 floats per block).
"""

PAPER_WIDTHS = {
    "mlp": {"embed_dim": 64, "widths": (512, 1024, 512, 64)},
    "mlp2x": {"embed_dim": 64, "widths": (1024, 2048, 1024, 128)},
    "transformer": {"dim": 512, "mlp_dim": 1024},
    "mixer": {"dim": 512, "token_dim": 768, "channel_dim": 2048},
}
TRANSFORMER_HEADS = 4


def width_kwargs(name, scale):
    """Builder keyword arguments that scale every width of token model ``name`` by ``scale``.

    Example:
        >>> width_kwargs("mixer", 0.25)
        {'dim': 128, 'token_dim': 192, 'channel_dim': 512}
    """
    if name not in PAPER_WIDTHS:
        raise ValueError(
            f"width scaling is defined for {', '.join(PAPER_WIDTHS)}; received {name!r}"
        )
    if not isinstance(scale, int | float) or isinstance(scale, bool) or scale <= 0:
        raise ValueError(f"width scale must be a number > 0; received {scale!r}")
    if scale == 1:
        return {}
    multiple = TRANSFORMER_HEADS if name == "transformer" else 1
    kwargs = {}
    for key, value in PAPER_WIDTHS[name].items():
        if isinstance(value, tuple):
            kwargs[key] = tuple(max(1, round(v * scale)) for v in value)
        else:
            kwargs[key] = max(multiple, round(value * scale / multiple) * multiple)
    return kwargs
