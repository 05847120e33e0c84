"""A training step timed in a worker process: what ``calibration`` measures each backend
with (``python -m pvr_keras.training.timing BACKEND``, ``KERAS_BACKEND`` set by the parent),
and ``tools/probes/bench_engines.py`` its engines; on JAX also a population's step per member
(a command with ``population``: ``population_stepper``)."""

import json
import sys
import time

from pvr_keras import calibration


def random_batch(model, batch_size, metric="accuracy", seed=0):
    """``(x, y, metric)``: a batch of random inputs of the shape and type ``model`` takes
    (tokens below its first embedding's vocabulary; numbers in [-1, 1)), and labels of its
    classes (numbers for ``"mse"``). Values do not change a step's time."""
    import keras
    import numpy as np

    rng = np.random.default_rng(seed)
    spec = model.inputs[0]
    shape = (batch_size, *spec.shape[1:])
    if None in shape:
        raise ValueError(f"the model takes inputs of shape {tuple(spec.shape)}: not timed")
    if "int" in str(spec.dtype):
        embeddings = [
            la for la in model._flatten_layers() if isinstance(la, keras.layers.Embedding)
        ]
        vocab = embeddings[0].input_dim if embeddings else 2
        x = rng.integers(0, vocab, shape).astype(str(spec.dtype))
    else:
        x = rng.uniform(-1, 1, shape).astype("float32")
    if metric == "mse":
        return x, rng.uniform(-1, 1, (batch_size, 1)).astype("float32"), metric
    classes = model.outputs[0].shape[-1]
    return x, rng.integers(0, classes, batch_size).astype("int32"), metric


def _tuples(value):
    """JSON's lists as the tuples builders take."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


CALLS = 2  # timed compiled calls per ``fit`` (after its first, which pays the start-up)


def _call_clock():
    """A Keras callback noting when each compiled call of a ``fit`` ends, the device waited
    for (its loss read; a callback with batch-end hooks also keeps Keras's logs on this
    thread): ``clock.ends``."""
    import keras

    class CallClock(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.ends = []

        def on_train_batch_end(self, batch, logs=None):
            float((logs or {}).get("loss", 0.0))
            self.ends.append(time.perf_counter())

    return CallClock()


def keras_stepper(model, batch_size, steps, *, jit=None, batch=None, recipe=None,
                  metric="accuracy"):  # fmt: skip
    """``() -> seconds`` of one compiled call of ``steps`` training steps of ``model``
    (compiled by ``training.compile_model`` with ``recipe``, default the token recipe's
    optimizer, so XLA as ``engines.jit_compile`` sets it unless ``jit`` is given), on
    ``batch`` (default ``random_batch``).

    The time of a compiled call within a ``fit`` of ``CALLS`` + 1 calls, from one call's end
    to the next (each end waits for the device: the loss is read), the median: so that what
    a ``fit`` costs to start (its data adapter, iterator and callbacks: tens of milliseconds
    on TensorFlow, once per run in a recipe, and most of a small model's step when timed
    alone) is not counted; the dispatch of each compiled call, as a recipe pays it, is."""
    import keras
    import numpy as np

    from pvr_keras.hyperparams import TOKEN
    from pvr_keras.training.compiling import compile_model

    x, y, metric = batch if batch is not None else random_batch(model, batch_size, metric)
    # Keras on PyTorch runs one step per call (it refuses more).
    per_call = 1 if keras.backend.backend() == "torch" else steps
    compile_model(model, recipe or TOKEN, batch_size * steps, metric, steps_per_execution=per_call)
    if jit is not None:
        model.jit_compile = jit
    count = (CALLS + 1) * steps
    xs, ys = np.tile(x, (count,) + (1,) * (x.ndim - 1)), np.tile(y, (count,) + (1,) * (y.ndim - 1))
    clock = _call_clock()

    def call():
        clock.ends = []
        history = model.fit(xs, ys, batch_size=batch_size, epochs=1, shuffle=False, verbose=0,
                            callbacks=[clock])  # fmt: skip
        if not np.isfinite(history.history["loss"][-1]):
            raise FloatingPointError(f"{model.name}: the loss is not finite")
        ends = clock.ends[-(CALLS + 1) :] if per_call == steps else clock.ends
        gaps = np.diff(ends) * (steps if per_call == 1 else 1)
        return float(np.median(gaps))

    call.params = model.count_params()
    call.model = model
    return call


def population_stepper(name, arguments, batch_size, steps, size, *, metric="accuracy",
                       recipe=None):  # fmt: skip
    """``() -> seconds`` per member of one call of ``steps`` steps of a population of ``size``
    models ``name`` (``training.stacked.Stack``, JAX), on one random batch per member."""
    import keras
    import numpy as np

    from pvr_keras import models
    from pvr_keras.hyperparams import TOKEN
    from pvr_keras.training.compiling import compile_model
    from pvr_keras.training.stacked import Stack

    built = []
    for seed in range(size):
        keras.utils.set_random_seed(seed)
        model = models.get(name, **_tuples(arguments))
        compile_model(model, recipe or TOKEN, batch_size * steps, metric)
        built.append(model)
    stack = Stack(built, metric)
    x, y, _ = random_batch(built[0], batch_size, metric)
    xs = np.broadcast_to(x, (steps, size, *x.shape)).copy()
    ys = np.broadcast_to(y, (steps, size, *y.shape)).copy()
    rates = np.full((steps, size), 1e-3, "float32")
    active = np.ones(size, bool)

    def call():
        start = time.perf_counter()
        loss, _ = stack.steps(xs, ys, rates, active)
        loss = np.asarray(loss)  # waits for the device
        seconds = time.perf_counter() - start
        if not np.isfinite(loss).all():
            raise FloatingPointError(f"{name}: a population's loss is not finite")
        return seconds / size

    call.params = built[0].count_params()
    return call


# A timed call's work: enough steps that a small model's call is not all overhead and
# noise (a 2-layer width-64 MLP at batch 128 steps in ~0.3 ms on a 2-core AMD EPYC Zen 4),
# at most a recipe's per call.
CALL_FLOP = 4e9
MAX_STEPS = 32


def steps_for(params, batch_size, asked):
    """Steps per timed call of a model of ``params`` parameters at ``batch_size``: at least
    ``asked``, more (up to ``MAX_STEPS``) while a call's ~6 x params x batch FLOPs stay
    below ``CALL_FLOP``."""
    flop = 6 * max(params, 1) * batch_size
    return max(asked, min(MAX_STEPS, int(CALL_FLOP // flop)))


def worker(backend):
    """Serves ``calibration.measure``'s commands (one model at a time) on ``backend``."""
    calibration.set_backend(backend)
    steppers = {}

    def answer(command):
        key = json.dumps(command, sort_keys=True)
        if key not in steppers:
            import keras

            from pvr_keras import models

            steppers.clear()
            keras.utils.set_random_seed(0)
            model = models.get(command["model"], **_tuples(command["arguments"]))
            steps = steps_for(model.count_params(), command["batch"], command["steps"])
            if command.get("population"):
                del model
                steppers[key] = population_stepper(
                    command["model"], command["arguments"], command["batch"], steps,
                    command["population"], metric=command["metric"],
                )  # fmt: skip
            else:
                steppers[key] = keras_stepper(model, command["batch"], steps,
                                              metric=command["metric"])  # fmt: skip
            steppers[key].steps = steps
        call = steppers[key]
        return {"seconds": call(), "params": call.params, "steps": call.steps}

    calibration.serve(answer)


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] in calibration.CANDIDATES:
        worker(sys.argv[1])
    else:
        sys.exit("usage: python -m pvr_keras.training.timing {tensorflow,jax}")
