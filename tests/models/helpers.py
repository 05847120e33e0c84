"""One shared test for every model builder (after keras-hub's ``run_backbone_test``)."""

import keras
import numpy as np
import tensorflow as tf


def run_model_test(builder, kwargs, inputs, *, tmp_path, num_classes=10):
    """Builds ``builder(**kwargs)`` and checks what every PVR model must do.

    Calls it, predicts on the array and on a tf.data dataset, taps the named ``block0`` and
    ``pre_logits`` layers, saves to ``.keras`` and reloads with ``safe_mode=True`` to the same
    outputs, and takes one ``train_on_batch`` step. Returns the model.
    """
    model = builder(**kwargs)
    batch = len(inputs)

    logits = keras.ops.convert_to_numpy(model(inputs, training=False))
    assert logits.shape == (batch, num_classes)
    assert np.all(np.isfinite(logits))
    # Raw logits: the head is linear and the outputs are not probabilities.
    assert model.get_layer("logits").get_config()["activation"] == "linear"
    assert not np.allclose(logits.sum(axis=1), 1.0)

    predicted = model.predict(inputs, batch_size=2, verbose=0)
    np.testing.assert_allclose(predicted, logits, rtol=1e-4, atol=1e-4)
    dataset = tf.data.Dataset.from_tensor_slices(inputs).batch(2)
    np.testing.assert_allclose(model.predict(dataset, verbose=0), logits, rtol=1e-4, atol=1e-4)

    # Analysis code taps blocks by name: the names must exist and give batch-major features.
    names = [layer.name for layer in model.layers]
    assert "block0" in names and "pre_logits" in names
    tap = keras.Model(model.input, [model.get_layer(n).output for n in ("block0", "pre_logits")])
    block0, pre_logits = (keras.ops.convert_to_numpy(t) for t in tap(inputs, training=False))
    assert block0.shape[0] == batch and pre_logits.shape[0] == batch and pre_logits.ndim == 2

    path = tmp_path / f"{model.name}.keras"
    model.save(path)
    restored = keras.saving.load_model(path, safe_mode=True)
    assert type(restored) is type(model)
    assert [layer.name for layer in restored.layers] == names
    restored_logits = keras.ops.convert_to_numpy(restored(inputs, training=False))
    np.testing.assert_allclose(restored_logits, logits, rtol=1e-5, atol=1e-5)

    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    before = [np.array(w) for w in model.trainable_weights]
    labels = np.arange(batch) % num_classes
    loss = model.train_on_batch(inputs, labels)
    assert np.isfinite(loss)
    assert any(
        not np.array_equal(b, np.array(w))
        for b, w in zip(before, model.trainable_weights, strict=True)
    )
    return model


def count_trainable(model):
    """Number of trainable parameters (torchvision counts these, not BN running stats)."""
    return int(sum(np.prod(w.shape) for w in model.trainable_weights))


def count_at_width(builder, kwargs, width):
    """Trainable parameters of ``builder(**kwargs, width=width)``, from narrow builds only.

    Every weight of a width-scaled CNN has (a constant, or one or two widths) elements, so the
    count is a quadratic in ``width``: the builds at widths 1, 2 and 3 fix it (Lagrange
    interpolation, in integers), and a fourth build (width 4) checks that it is one. The
    full-width VGG11-BN alone holds 128.8M weights, 10-20 s to build on two shared cores.
    """
    counts = {w: count_trainable(builder(**kwargs, width=w)) for w in (1, 2, 3, 4)}

    def quadratic(x):
        total = 0
        for a in (1, 2, 3):
            b, c = (w for w in (1, 2, 3) if w != a)
            numerator, denominator = (x - b) * (x - c), (a - b) * (a - c)
            assert (counts[a] * numerator) % denominator == 0
            total += counts[a] * numerator // denominator
        return total

    assert quadratic(4) == counts[4], "the parameter count is not a quadratic in width"
    return quadratic(width)
