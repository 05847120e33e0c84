"""The model test every builder passes: the library's and yours (after keras-hub's
``run_backbone_test``).

In a test file of your own, beside the builder (``pytest test_my_nets.py``)::

    import numpy as np
    from my_nets import tiny_net
    from pvr_keras.testing import run_model_test

    def test_tiny_net(tmp_path):
        tokens = np.random.default_rng(0).integers(0, 10, size=(4, 11), dtype="int32")
        run_model_test(tiny_net, {"hidden": 16}, tokens, tmp_path=tmp_path)

A builder that breaks a rule fails with an ``AssertionError`` that names the builder, the
step and what to change (e.g. a custom layer that does not reload from ``.keras``).
"""

import pathlib
import re
import tempfile

import keras
import numpy as np

from pvr_keras import files, registry

__all__ = ["count_trainable", "run_model_test"]


class ModelTestError(AssertionError):
    """A builder broke one of the rules ``run_model_test`` checks."""


def run_model_test(builder, kwargs=None, inputs=None, *, tmp_path=None, num_classes=None):
    """Builds ``builder(**kwargs)`` and checks what every PVR model must do.

    In order: it returns a ``keras.Model``; calling it on ``inputs`` gives finite raw logits
    of shape ``(len(inputs), num_classes)`` from a linear layer named ``logits``; ``predict``
    gives the same on the array and on a tf.data dataset; the layers ``block0`` and
    ``pre_logits`` (the analyses tap them by name) give batch-major features; it saves to
    ``.keras`` and reloads with ``safe_mode=True`` to the same layers and outputs; and one
    epoch of ``fit`` (SGD, cross-entropy on the logits) changes its weights.

    Args:
        builder: a builder function, or a model name or reference (``"my_nets.py:tiny_net"``).
        kwargs: the builder's keyword arguments (``{}`` if None).
        inputs: a small batch of the model's input (e.g. (4, seq_len) int32 tokens).
        tmp_path: a folder for the saved model (a temporary one if None).
        num_classes: the logits per example (``kwargs["num_classes"]``, else 10).

    Returns:
        The built model.

    Raises:
        ModelTestError (an AssertionError): the step that failed and what to change.
    """
    if isinstance(builder, str):
        builder = registry.builder(builder)
    kwargs = dict(kwargs or {})
    if inputs is None:
        raise ValueError("inputs must be a small batch of the model's input; received None")
    num_classes = kwargs.get("num_classes", 10) if num_classes is None else num_classes
    name = f"{getattr(builder, '__name__', builder)}(**{kwargs})"

    def check(ok, what):
        if not ok:
            raise ModelTestError(f"{name}: {what}")

    model = builder(**kwargs)
    check(isinstance(model, keras.Model), f"returns {type(model).__name__}, not a keras.Model")
    batch = len(inputs)

    logits = keras.ops.convert_to_numpy(model(inputs, training=False))
    check(
        logits.shape == (batch, num_classes),
        f"outputs shape {logits.shape}; a PVR model gives one logit per class, "
        f"(batch, num_classes) = {(batch, num_classes)}",
    )
    check(np.all(np.isfinite(logits)), "outputs NaN or infinite logits")
    names = [layer.name for layer in model.layers]
    check(
        "logits" in names and model.get_layer("logits").get_config().get("activation") == "linear",
        "needs its classifier named 'logits', with no activation (the losses take raw logits)",
    )

    predicted = model.predict(inputs, batch_size=2, verbose=0)
    check(np.allclose(predicted, logits, rtol=1e-4, atol=1e-4), "predict differs from a call")
    _predicts_from_tf_data(model, inputs, logits, check)

    # Analysis code taps blocks by name: the names must exist and give batch-major features.
    missing = [n for n in ("block0", "pre_logits") if n not in names]
    check(not missing, f"has no layer named {missing} (CKA and the logit analyses tap them)")
    tap = keras.Model(model.input, [model.get_layer(n).output for n in ("block0", "pre_logits")])
    block0, pre_logits = (keras.ops.convert_to_numpy(t) for t in tap(inputs, training=False))
    check(block0.shape[0] == batch, f"block0 is not batch-major: shape {block0.shape}")
    check(
        pre_logits.shape[0] == batch and pre_logits.ndim == 2,
        f"pre_logits must be (batch, features); received shape {pre_logits.shape}",
    )

    _reloads(model, inputs, logits, names, tmp_path, check)
    _fits(model, inputs, num_classes, check)
    return model


def _predicts_from_tf_data(model, inputs, logits, check):
    import tensorflow as tf

    dataset = tf.data.Dataset.from_tensor_slices(inputs).batch(2)
    predicted = model.predict(dataset, verbose=0)
    check(np.allclose(predicted, logits, rtol=1e-4, atol=1e-4), "predict on tf.data differs")


def _reloads(model, inputs, logits, names, tmp_path, check):
    """Save to ``.keras`` and reload with ``safe_mode=True``: how a run's model comes back."""
    with tempfile.TemporaryDirectory() as scratch:
        path = pathlib.Path(tmp_path or scratch) / f"{model.name}.keras"
        model.save(path)
        try:
            with files.private_copy(path) as copy:
                restored = keras.saving.load_model(copy, safe_mode=True)
        except Exception as err:  # what Keras raises depends on the layer
            check(
                False,
                f"does not reload from .keras with safe_mode=True ({type(err).__name__}: "
                f"{_cause(err)}); decorate each custom layer with "
                f"@keras.saving.register_keras_serializable(package=...) and give it a "
                f"get_config() returning its constructor arguments",
            )
    check(type(restored) is type(model), f"reloads as a {type(restored).__name__}")
    check(
        [layer.name for layer in restored.layers] == names,
        "reloads with other layer names",
    )
    restored_logits = keras.ops.convert_to_numpy(restored(inputs, training=False))
    check(
        np.allclose(restored_logits, logits, rtol=1e-5, atol=1e-5),
        "reloads to other outputs (a custom layer's get_config() loses a setting, or a "
        "weight is not tracked)",
    )


def _cause(err):
    """The innermost reason of a Keras loading error (it wraps the one that says which class
    it could not locate), in one line."""
    found = re.findall(r"Exception encountered: (.+?\.)(?:\s|$)", str(err))
    return found[-1] if found else str(err).strip().splitlines()[0]


def _fits(model, inputs, num_classes, check):
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    before = [np.array(w) for w in model.trainable_weights]
    check(before, "has no trainable weights")
    labels = np.arange(len(inputs)) % num_classes
    history = model.fit(inputs, labels, batch_size=len(inputs), epochs=1, verbose=0)
    check(np.isfinite(history.history["loss"][-1]), "fit gives a NaN or infinite loss")
    changed = any(
        not np.array_equal(b, np.array(w))
        for b, w in zip(before, model.trainable_weights, strict=True)
    )
    check(changed, "one epoch of fit changes no weight (is the output connected?)")


def count_trainable(model):
    """Number of trainable parameters (torchvision counts these, not BN running stats)."""
    return int(sum(np.prod(w.shape) for w in model.trainable_weights))
