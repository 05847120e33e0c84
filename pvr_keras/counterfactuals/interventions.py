"""Interchange intervention accuracy (IIA), positional and by distributed alignment search.

``iia``: the share of counterfactual pairs on which the model, run on the base with the output
of ``layer`` at ``positions`` taken from the source, predicts the counterfactual label of the
high-level model's interchange of ``variables`` (Geiger et al. 2022). 1.0: the positions hold
the variables as the high-level model uses them; near the share of unchanged labels: they do
not.

``das``: where no position aligns (an MLP's hidden layer mixes every input), distributed
alignment search (Geiger et al. 2024; pyvene's ``RotatedSpaceIntervention``) learns an
orthogonal rotation of the layer's output, with the model frozen, such that interchanging the
first ``dims`` rotated coordinates realises the interchange of ``variables``; its IIA is
measured on test pairs the rotation never saw.
"""

import dataclasses

import numpy as np

from pvr_keras.checks import check_count, check_number, check_seed
from pvr_keras.counterfactuals import causal, patching
from pvr_keras.counterfactuals.pairs import Pairs
from pvr_keras.counterfactuals.pairs import pairs as make_pairs


def _check_given_pairs(task, given, names):
    if not isinstance(given, Pairs):
        raise ValueError(f"pairs must be what cf.pairs returns; received {type(given).__name__}")
    if names is not None and names != given.variables:
        raise ValueError(
            f"pairs were drawn for {', '.join(given.variables)}; received variables "
            f"{', '.join(names)}"
        )
    return given


def iia(model, task, layer, positions=None, variables=None, n=2048, seed=0, *, split="test",
        changing=False, holdout=0, pairs=None, batch_size=256, data_dir=None):  # fmt: skip
    """Interchange intervention accuracy of ``model`` at ``layer`` / ``positions`` for
    ``variables``.

    Args:
        model: a functional Keras model of the task (the paper's six, or yours).
        task: a ``TokenTask`` or a 2x2 ``BlockTask``.
        layer: the name of the layer whose output is patched (``"block0"``, ``"pre_logits"``).
        positions: on axis 1 of that output (Transformer and Mixer: 0 the class token, 1 the
            pointer, 2 + i the value V_i); quadrant names ``TL, TR, BL, BR`` for a
            convolution's output; None: the whole output.
        variables: a high-level variable or a list (``variables(task)``).
        n: number of pairs.
        seed: the pairs' seed.
        split: the split of the pairs.
        changing: score only pairs whose counterfactual label differs from the base's
            (with all pairs, unchanged labels make IIA high by default: report both).
        holdout: the split's holdout.
        pairs: pairs already drawn (``cf.pairs``) instead of ``n, seed, split, changing``.
        batch_size: pairs per forward pass (each pass runs 2 x batch_size examples).
        data_dir: the TFDS data dir of a block task's images.

    Returns:
        A float in [0, 1].

    Example:
        >>> from pvr_keras import models
        >>> from pvr_keras.tasks import TokenTask
        >>> model = models.transformer(dim=8, depth=1, heads=2, mlp_dim=8)
        >>> score = iia(model, TokenTask(), "block0", positions=[1], variables="P", n=64)
        >>> 0.0 <= score <= 1.0
        True
    """
    task = causal.check_task(task)
    names = (
        None if variables is None and pairs is not None else causal.check_variables(task, variables)
    )
    patching.check_model(model, task)
    found = patching.check_layer(model, layer)
    patching.position_mask(tuple(found.output.shape), positions, repr(layer))  # before any work
    interchange = patching.Interchange.of(model, layer)
    if pairs is None:
        pairs = make_pairs(task, n, names, seed, split, changing, holdout=holdout,
                           data_dir=data_dir)  # fmt: skip
    else:
        pairs = _check_given_pairs(task, pairs, names)
    logits = interchange.predict(pairs.base, pairs.source, positions, batch_size=batch_size)
    return score(logits, pairs.counterfactual_label)


def score(predictions, counterfactual_label):
    """IIA from any framework's outputs: the share of rows whose argmax (or given class) is
    the counterfactual label. ``predictions``: (n, classes) scores or (n,) classes."""
    predictions = np.asarray(predictions)
    labels = np.asarray(counterfactual_label)
    if predictions.ndim == 2:
        predictions = predictions.argmax(axis=1)
    if predictions.shape != labels.shape or not len(labels):
        raise ValueError(
            f"predictions must be (n, classes) scores or (n,) classes for the n = {len(labels)} "
            f"pairs; received shape {np.asarray(predictions).shape}"
        )
    return float(np.mean(predictions == labels))


def _rotation_layer():
    import keras
    from keras import ops

    class RotatedInterchange(keras.layers.Layer):
        """DAS: rotate the flattened output by an orthogonal R (the Cayley transform of a
        learned skew-symmetric matrix, R = I at the start) and give the bases the sources'
        first ``dims`` rotated coordinates."""

        def __init__(self, size, dims, **kwargs):
            super().__init__(**kwargs)
            self.size, self.dims = size, dims
            self.skew = self.add_weight(shape=(size, size), initializer="zeros", name="skew")

        def rotation(self):
            a = self.skew - ops.transpose(self.skew)
            eye = ops.eye(self.size, dtype=a.dtype)
            return ops.solve(eye + a, eye - a)  # orthogonal for every skew-symmetric a

        def compute_output_shape(self, input_shape):
            return input_shape

        def call(self, x):
            flat = ops.reshape(x, (-1, self.size))  # (2 batch, size)
            rotation = ops.cast(self.rotation(), flat.dtype)
            base, source = ops.split(ops.matmul(flat, rotation), 2, axis=0)
            chosen = ops.arange(self.size) < self.dims  # (size,) the interchanged coordinates
            mixed = ops.where(chosen, source, base)
            bases = ops.matmul(mixed, ops.transpose(rotation))
            sources = ops.split(flat, 2, axis=0)[1]
            return ops.reshape(ops.concatenate([bases, sources], axis=0), ops.shape(x))

    return RotatedInterchange


@dataclasses.dataclass(frozen=True)
class DASResult:
    """What ``das`` found: IIA on held-out test pairs and on its training pairs, and the
    rotation (``rotation[:, :dims]`` spans the aligned subspace)."""

    iia: float
    train_iia: float
    dims: int
    layer: str
    variables: tuple
    rotation: np.ndarray
    loss: tuple


def das(model, task, layer, variables, *, dims=None, n=8192, test_n=2048, epochs=5,
        batch_size=256, learning_rate=0.01, seed=0, changing=False, holdout=0,
        data_dir=None):  # fmt: skip
    """Distributed alignment search: a learned rotation of ``layer``'s output in which
    ``dims`` coordinates hold ``variables``; its IIA on test pairs.

    The model's weights are frozen (their ``trainable`` flags restored after); only the
    rotation is trained, with Adam on the cross-entropy of the intervened outputs (logits)
    against the counterfactual labels of ``n`` training pairs (the train split), for
    ``epochs`` epochs. IIA is then measured on ``test_n`` test pairs.

    Args:
        model, task, layer, variables: as for ``iia``.
        dims: interchanged dimensions (default: the task's number of classes).
        n, test_n: training and test pairs.
        epochs, batch_size, learning_rate: the rotation's training.
        seed: the pairs' seed and the order of the training pairs.
        changing: draw only pairs whose counterfactual label differs from the base's.

    Returns:
        ``DASResult`` (``.iia`` the test IIA).
    """
    import keras

    task = causal.check_task(task)
    names = causal.check_variables(task, variables)
    patching.check_model(model, task)
    found = patching.check_layer(model, layer)
    size = int(np.prod(found.output.shape[1:]))
    dims = task.num_classes if dims is None else dims
    check_count("dims", dims)
    if dims >= size:
        raise ValueError(
            f"dims must be below the size of {layer!r}'s output ({size}); received {dims}"
        )
    if size > 4096:
        raise ValueError(
            f"das learns a {size}x{size} rotation of {layer!r}'s output: choose a layer of at "
            f"most 4096 values"
        )
    check_count("epochs", epochs)
    check_count("batch_size", batch_size)
    check_number("learning_rate", learning_rate, 0, above=True)
    seed = check_seed(seed)
    train = make_pairs(task, n, names, seed, "train", changing, holdout=0, data_dir=data_dir)
    test = make_pairs(task, test_n, names, seed, "test", changing, holdout=holdout,
                      data_dir=data_dir)  # fmt: skip
    rotation = _rotation_layer()(size, dims, name=f"{layer}_das")
    paired = patching.paired_model(model, found, rotation, f"{model.name}_{layer}_das")
    dtype = model.inputs[0].dtype
    order = np.random.default_rng(seed).permutation(train.n)
    x_train = np.stack([train.base, train.source], axis=1)[order].astype(dtype)
    y_train = train.counterfactual_label[order]
    flags = [(each, each.trainable) for each in model.layers]
    try:
        for each, _ in flags:
            each.trainable = False
        paired.compile(
            optimizer=keras.optimizers.Adam(learning_rate),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        history = paired.fit(x_train, y_train, epochs=epochs, batch_size=batch_size,
                             shuffle=False, verbose=0)  # fmt: skip
    finally:
        for each, trainable in flags:
            each.trainable = trainable

    def measured(pairs):
        stacked = np.stack([pairs.base, pairs.source], axis=1).astype(dtype)
        logits = paired.predict(stacked, batch_size=batch_size, verbose=0)
        return score(logits, pairs.counterfactual_label)

    return DASResult(
        iia=measured(test),
        train_iia=measured(train),
        dims=int(dims),
        layer=layer,
        variables=names,
        rotation=np.asarray(keras.ops.convert_to_numpy(rotation.rotation())),
        loss=tuple(float(v) for v in history.history["loss"]),
    )


def iia_grid(model, task, layers, variables, *, positions=None, n=1024, seed=0,
             changing=True, holdout=0, batch_size=256, data_dir=None, progress=None):  # fmt: skip
    """IIA of every variable at every layer x single position: where each variable lives.

    Args:
        model, task: as for ``iia``.
        layers: layer names (rows of each variable's grid), in order.
        variables: high-level variable names; each is interchanged alone, on its own pairs
            (drawn once, the same bases and sources for every variable of one seed).
        positions: the single positions tried (default: every index of axis 1 of the first
            layer's output, or its quadrants for a convolution).
        n, seed, changing, holdout, data_dir: the pairs (``pairs``); changing pairs by
            default.
        progress: called with a line after each variable, or None.

    Returns:
        ``{"layers": [...], "positions": [...], "iia": {variable: [[float, per position] per
        layer]}, "changed": {variable: share of random pairs whose label it changes}}``.
    """
    task = causal.check_task(task)
    patching.check_model(model, task)
    found = [patching.check_layer(model, layer) for layer in layers]
    if positions is None:
        shape = tuple(found[0].output.shape)
        positions = list(patching.QUADRANTS) if len(shape) == 4 else list(range(shape[1]))
    for layer in found:
        for position in positions:
            patching.position_mask(tuple(layer.output.shape), [position], repr(layer.name))
    names = [causal.check_variables(task, v)[0] for v in variables]
    result = {"layers": list(layers), "positions": list(positions), "iia": {}, "changed": {}}
    for name in names:
        drawn = make_pairs(task, n, name, seed, "test", changing, holdout=holdout,
                           data_dir=data_dir)  # fmt: skip
        every = make_pairs(task, n, name, seed, "test", False, holdout=holdout,
                           data_dir=data_dir)  # fmt: skip
        result["changed"][name] = every.changed
        rows = []
        for layer in layers:
            interchange = patching.Interchange.of(model, layer)
            rows.append([
                score(interchange.predict(drawn.base, drawn.source, [position],
                                          batch_size=batch_size), drawn.counterfactual_label)
                for position in positions
            ])  # fmt: skip
        result["iia"][name] = rows
        if progress:
            best = max((v, layer, p) for layer, row in zip(layers, rows, strict=True)
                       for v, p in zip(row, positions, strict=True))  # fmt: skip
            progress(f"{name}: best IIA {best[0]:.3f} at {best[1]} position {best[2]}")
    return result


__all__ = ["DASResult", "das", "iia", "iia_grid", "score"]
