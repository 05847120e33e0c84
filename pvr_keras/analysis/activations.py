"""Intermediate activations of a functional Keras model, tapped by layer name (for CKA)."""

import numpy as np

from pvr_keras.checks import check_positive


def _check_names(layer_name):
    if isinstance(layer_name, str):
        return [layer_name]
    if isinstance(layer_name, list | tuple) and layer_name:
        if all(isinstance(name, str) for name in layer_name):
            return list(layer_name)
    raise ValueError(
        f"layer_name must be a layer name or a non-empty list of layer names; "
        f"received {layer_name!r}"
    )


def activations(model, layer_name, x, *, batch_size=1024):
    """Outputs of the named layer(s) of ``model`` on ``x``, flattened per example.

    Builds a model from ``model``'s inputs to the named layer outputs and runs it over ``x`` in
    batches of ``batch_size`` (``Model.predict``), so memory stays O(batch) on the device.
    The builders of ``pvr_keras.models`` name their layers deterministically (``block0``,
    ``pre_logits``, ``logits``, ...) so that this works on every one of them.

    Args:
        model: a built functional ``keras.Model``.
        layer_name: a layer name, or a list of them to tap several layers in one pass.
        x: the model input, an array (or whatever ``model.predict`` takes) of N examples.
        batch_size: examples per forward pass.

    Returns:
        A NumPy array (N, features) for one name; a dict ``{name: array}`` for a list.

    Example:
        >>> from pvr_keras import models
        >>> model = models.mlp(embed_dim=4, widths=(8, 6))
        >>> tokens = np.zeros((5, 11), "int32")
        >>> activations(model, "pre_logits", tokens).shape
        (5, 6)
    """
    # keras is imported here, not at module level: the caller already holds a Keras model, and
    # the NumPy-only analyses (noise sensitivity, CKA) stay importable without a backend.
    import keras

    if not isinstance(model, keras.Model):
        raise ValueError(f"model must be a keras.Model; received {type(model).__name__}")
    names = _check_names(layer_name)
    check_positive("batch_size", batch_size)
    known = [layer.name for layer in model.layers]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"layer_name must name layers of model {model.name!r}, which has "
            f"{', '.join(known)}; received {', '.join(map(repr, unknown))}"
        )
    from pvr_keras.models.common import CheckedModel

    # A CheckedModel's tap keeps its input checks (no silent casting of float tokens).
    builder = CheckedModel if isinstance(model, CheckedModel) else keras.Model
    outputs = [model.get_layer(name).output for name in names]
    tap = builder(model.inputs, outputs, name=f"{model.name}_activations")
    values = tap.predict(x, batch_size=batch_size, verbose=0)
    if len(names) == 1:
        values = [values] if not isinstance(values, list | tuple) else values
    flat = [np.asarray(v).reshape(len(v), -1) for v in values]
    if isinstance(layer_name, str):
        return flat[0]
    return dict(zip(names, flat, strict=True))
