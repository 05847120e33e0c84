"""Compiling a model for a run: the loss and metric of its task kind, the recipe's optimizer,
and how many training steps one compiled call takes.

Every model the library trains is compiled here: a run (``training.train``), a tuning trial
(``tuning.PVRHyperModel``) and the benchmarks of the training loop (``tools/``).
"""

import keras

from pvr_keras import engines
from pvr_keras.training.optimizers import optimizer_for

METRICS = ("accuracy", "mse")


@keras.saving.register_keras_serializable(package="pvr_keras")
def within_half(y_true, y_pred):
    """1 where the prediction is within 0.5 of the label (a regression's "accuracy": for
    labels in {-1, 0, +1}, the nearest of them is the label)."""
    y_pred = keras.ops.reshape(y_pred, keras.ops.shape(y_true))
    return keras.ops.cast(keras.ops.abs(y_pred - y_true) < 0.5, "float32")


# Steps per compiled call unless a run says otherwise, at most an epoch's. Measured on a
# 2-core CPU (tools/probes/bench_train.py --part execution): 1/16-width MLP at batch 128, 0.63 ms a
# step one step per call, 0.25 ms 32 per call on JAX; 2.09 and 0.91 ms on TensorFlow; no
# change for the paper's MLP at batch 1024 (its step is compute). On an accelerator it also
# lets the device run 32 steps before the host looks at them (callbacks, progress bar).
STEPS_PER_EXECUTION = 32


def resolve_steps_per_execution(asked, steps_per_epoch, limit=None):
    """The steps per compiled call of a run: the largest divisor of the epoch's steps up to
    ``asked`` (a run's ``system.steps_per_execution``, else ``STEPS_PER_EXECUTION``) and up
    to ``limit`` (the engine's ``Placement.max_steps_per_execution``; None: no limit).

    A divisor, because Keras runs whole calls on an endless stream: 8 steps per call on a
    20-step epoch would train 24 steps in it. So every epoch trains exactly its steps (and
    callbacks see every epoch's end); an epoch of a prime number of steps above the cap runs
    one step per call."""
    if asked is None:
        asked = STEPS_PER_EXECUTION
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ValueError(f"steps_per_execution must be a positive integer; received {asked!r}")
    cap = min(asked, steps_per_epoch, limit or asked)
    return max(k for k in range(1, cap + 1) if steps_per_epoch % k == 0)


def loss_and_metric(metric):
    """The loss and the (weighted) ``accuracy`` metric of a kind's ``metric``: cross-entropy
    on logits and accuracy (``"accuracy"``), or the mean squared error and ``within_half``
    (``"mse"``)."""
    if metric == "mse":
        return keras.losses.MeanSquaredError(), keras.metrics.MeanMetricWrapper(
            within_half, name="accuracy"
        )
    if metric == "accuracy":
        return (
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
        )
    raise ValueError(f"metric must be one of {', '.join(METRICS)}; received {metric!r}")


def compile_model(model, recipe, num_examples, metric="accuracy", steps_per_execution=1):
    """Compiles ``model`` with the recipe's optimizer and, for ``metric="accuracy"``,
    cross-entropy on logits and accuracy; for ``"mse"`` the mean squared error and, as its
    "accuracy", the fraction of predictions within 0.5 of the label (``within_half``).
    ``steps_per_execution``: training steps per compiled call (the same steps, the same
    results; callbacks see the model once per call). XLA is the engine's measured-fastest
    setting (``engines.jit_compile``)."""
    loss, accuracy = loss_and_metric(metric)
    model.compile(
        optimizer=optimizer_for(recipe, num_examples),
        loss=loss,
        # Weighted: the zero-weight rows that pad a batch over several devices must not count
        # (without sample weights this is plain accuracy).
        weighted_metrics=[accuracy],
        steps_per_execution=steps_per_execution,
    )
    jit = engines.jit_compile(model)
    if jit is not None:
        model.jit_compile = jit
    return model
