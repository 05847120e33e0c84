"""Interchange interventions on functional Keras models, on every backend.

An ``Interchange`` runs a base and its source through one model in one batch (the bases
first, then the sources) and, at the output of one layer, gives the bases the sources' values
at the chosen positions; everything after that layer is recomputed. The model's own layers are
reused (no copy of a weight, no retraining): ``keras.models.clone_model`` with the identity
as its ``clone_function`` and a ``call_function`` that adds a patch after the named layer.
Which positions are patched is a mask held in a non-trainable variable, so one compiled
program serves every choice of positions.

Positions index axis 1 of the layer's output: the token positions of the Transformer and the
Mixer (0 the class token, 1 the pointer, 2.. the values), the units of a dense layer; for a
convolution's (batch, height, width, channels) output they are the quadrants by name
(``TL, TR, BL, BR``: rows and columns split at half the size rounded down, as iit's MNIST-PVR
alignment does; an odd size's last row and column belong to no quadrant).
"""

import weakref

import numpy as np

from pvr_keras.checks import check_positive, is_integer

QUADRANTS = ("TL", "TR", "BL", "BR")
_BUILT = weakref.WeakKeyDictionary()  # model -> {layer name: Interchange}: compiled once


def _keras():
    # keras is imported on use: the NumPy high-level model stays importable without a backend.
    import keras

    return keras


def check_model(model, task):
    """One line, before any work, unless ``model`` is a one-input functional Keras model whose
    input fits the task's examples and whose output is (batch, task.num_classes)."""
    keras = _keras()
    if not isinstance(model, keras.Model) or not hasattr(model, "inputs") or not model.inputs:
        raise ValueError(
            f"model must be a functional keras.Model (the paper's six, or one of yours built with "
            f"keras.Input); received {type(model).__name__}"
        )
    if len(model.inputs) != 1 or len(model.outputs) != 1:
        raise ValueError(
            f"interventions take a model with one input and one output; model {model.name!r} "
            f"has {len(model.inputs)} and {len(model.outputs)}"
        )
    shape = tuple(model.outputs[0].shape)
    if len(shape) != 2 or shape[-1] != task.num_classes:
        raise ValueError(
            f"model {model.name!r} must output (batch, {task.num_classes}) class scores for "
            f"{type(task).__name__}; its output has shape {_shape(shape)}"
        )
    expected = tuple(model.inputs[0].shape[1:])
    given = (task.seq_len,) if hasattr(task, "seq_len") else tuple(task.image_shape)
    if len(expected) != len(given) or any(
        e is not None and e != g for e, g in zip(expected, given, strict=True)
    ):
        raise ValueError(
            f"model {model.name!r} takes inputs of shape {_shape((None, *expected))}; the "
            f"task's examples have shape {_shape((None, *given))}"
        )
    return model


def _shape(shape):
    return "(" + ", ".join("batch" if s is None else str(s) for s in shape) + ")"


def check_layer(model, layer):
    """The named layer of ``model``, called once, with one tensor output of rank >= 2."""
    if not isinstance(layer, str):
        raise ValueError(f"layer must be a layer name; received {layer!r}")
    names = [each.name for each in model.layers]
    if layer not in names:
        raise ValueError(
            f"model {model.name!r} has no layer {layer!r}; its layers: {', '.join(names)}"
        )
    found = model.get_layer(layer)
    if isinstance(found, _keras().layers.InputLayer):
        raise ValueError(f"layer {layer!r} is the model's input: intervene on a later layer")
    try:
        output = found.output
    except (AttributeError, ValueError) as error:  # a layer called several times
        raise ValueError(
            f"layer {layer!r} of model {model.name!r} has no single output ({error}); choose a "
            f"layer called once"
        ) from None
    if isinstance(output, list | tuple | dict) or len(output.shape) < 2:
        raise ValueError(
            f"layer {layer!r} must output one tensor of shape (batch, ...); it outputs "
            f"{output!r:.120}"
        )
    return found


def mask_shape(output_shape):
    """The positions a mask covers: axis 1 and, for a (batch, h, w, c) output, the spatial
    grid (h, w)."""
    return tuple(output_shape[1:3]) if len(output_shape) == 4 else (output_shape[1],)


def position_mask(output_shape, positions, layer="layer"):
    """The 0/1 mask of ``positions`` over a layer output of ``output_shape`` (batch first).

    ``None`` is every position. A rank-4 output takes quadrant names; any other, integers
    ``0 .. shape[1]-1`` on axis 1.
    """
    shape = mask_shape(output_shape)
    if positions is None:
        return np.ones(shape, "float32")
    given = [positions] if isinstance(positions, str) or is_integer(positions) else positions
    if not isinstance(given, list | tuple | np.ndarray) or not len(given):
        raise ValueError(
            f"positions must be a non-empty list (or None: all of them); received {positions!r}"
        )
    mask = np.zeros(shape, "float32")
    if len(output_shape) == 4:
        height, width = shape
        if height < 2 or width < 2:
            raise ValueError(f"{layer}'s output is {height}x{width}: too small for quadrants")
        half_h, half_w = height // 2, width // 2
        for name in given:
            if name not in QUADRANTS:
                raise ValueError(
                    f"positions of {layer}'s (batch, height, width, channels) output are "
                    f"quadrants {', '.join(QUADRANTS)}; received {name!r}"
                )
            row, col = divmod(QUADRANTS.index(name), 2)
            mask[row * half_h : (row + 1) * half_h, col * half_w : (col + 1) * half_w] = 1
        return mask
    size = shape[0]
    for position in given:
        if not is_integer(position) or not 0 <= position < size:
            raise ValueError(
                f"positions of {layer}'s output {_shape(output_shape)} are 0..{size - 1} on "
                f"axis 1; received {position!r}"
            )
        mask[int(position)] = 1
    return mask


def _patch_layer():
    keras = _keras()
    from keras import ops

    class InterchangePatch(keras.layers.Layer):
        """Bases (first half of the batch) take the sources' values (second half) where
        ``mask`` is 1; the sources pass unchanged."""

        def __init__(self, shape, **kwargs):
            super().__init__(**kwargs)
            self.mask = self.add_weight(
                shape=shape, initializer="zeros", trainable=False, name="mask"
            )

        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, x):
            base, source = ops.split(x, 2, axis=0)
            mask = self.mask
            for _ in range(len(x.shape) - 1 - len(mask.shape)):
                mask = ops.expand_dims(mask, -1)
            return ops.concatenate([ops.where(mask > 0.5, source, base), source], axis=0)

    return InterchangePatch


def paired_model(model, layer, patch, name):
    """A model of (batch, 2, *input) pairs -> the bases' outputs with ``patch`` applied to the
    output of ``layer`` (``patch`` maps the stacked (bases; sources) output to the same)."""
    keras = _keras()
    from keras import ops

    calls = []

    def call(each, *args, **kwargs):
        out = each(*args, **kwargs)
        if each is layer:
            calls.append(each)
            out = patch(out)
        return out

    spec = model.inputs[0]
    fresh = keras.Input(batch_shape=spec.shape, dtype=spec.dtype, name=spec.name)
    inputs = keras.tree.map_structure(lambda _: fresh, model.input)
    patched = keras.models.clone_model(
        model, input_tensors=inputs, clone_function=lambda each: each, call_function=call
    )
    if len(calls) != 1:
        raise ValueError(
            f"layer {layer.name!r} is called {len(calls)} times in model {model.name!r}: choose "
            f"a layer called once"
        )
    pairs_in = keras.Input(shape=(2, *spec.shape[1:]), dtype=spec.dtype, name="pairs")
    stacked = ops.concatenate([pairs_in[:, 0], pairs_in[:, 1]], axis=0)  # (2 batch, ...)
    bases = ops.split(patched(stacked), 2, axis=0)[0]
    return keras.Model(pairs_in, bases, name=name)


class Interchange:
    """Interchange interventions at one layer of a model: ``predict(base, source, positions)``.

    Args:
        model: a functional Keras model with one input and one output.
        layer: the name of the layer whose output is patched.

    Example:
        >>> from pvr_keras import models
        >>> model = models.transformer(dim=8, depth=1, heads=2, mlp_dim=8)
        >>> x = np.zeros((3, 11), "int32")
        >>> Interchange(model, "block0").predict(x, x, [1]).shape
        (3, 10)
    """

    def __init__(self, model, layer):
        self.model = model
        self.layer = check_layer(model, layer)
        self.output_shape = tuple(self.layer.output.shape)
        self.patch = _patch_layer()(mask_shape(self.output_shape), name=f"{layer}_interchange")
        self.paired = paired_model(model, self.layer, self.patch, f"{model.name}_{layer}_iia")

    @classmethod
    def of(cls, model, layer):
        """The Interchange of (model, layer), built once per model (its program compiled once)."""
        built = _BUILT.setdefault(model, {})
        if layer not in built:
            built[layer] = cls(model, layer)
        return built[layer]

    def mask(self, positions):
        return position_mask(self.output_shape, positions, repr(self.layer.name))

    def predict(self, base, source, positions=None, *, batch_size=256):
        """The model's outputs on each base with ``layer``'s output at ``positions`` taken from
        its source: (n, num_classes) NumPy."""
        check_positive("batch_size", batch_size)
        base, source = np.asarray(base), np.asarray(source)
        if base.shape != source.shape:
            raise ValueError(
                f"base and source must have the same shape; received {base.shape} and "
                f"{source.shape}"
            )
        self.patch.mask.assign(self.mask(positions))
        dtype = self.model.inputs[0].dtype
        stacked = np.stack([base, source], axis=1).astype(dtype)
        return np.asarray(self.paired.predict(stacked, batch_size=batch_size, verbose=0))


__all__ = ["QUADRANTS", "Interchange", "check_layer", "check_model", "position_mask"]
