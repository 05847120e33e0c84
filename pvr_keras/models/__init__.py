"""One builder per architecture of the paper; ``get(name, **kwargs)`` picks one by name."""

from pvr_keras.models.mlp import mlp, mlp2x

BUILDERS = {
    "mlp": mlp,
    "mlp2x": mlp2x,
}
TOKEN_MODELS = ("mlp", "mlp2x")


def get(name, **kwargs):
    """Builds the model called ``name`` with ``kwargs``.

    Example:
        >>> get("mlp").count_params()
        1445194
    """
    if name not in BUILDERS:
        raise ValueError(f"model must be one of {', '.join(BUILDERS)}; received {name!r}")
    return BUILDERS[name](**kwargs)


__all__ = ["BUILDERS", "TOKEN_MODELS", "get", "mlp", "mlp2x"]
