"""Training-step time of Keras ``fit`` against a hand-written step, on JAX and on TensorFlow.

For each model (default: the paper's MLP and MLP-Mixer) and each backend, the same model
weights take the same SGD-momentum update on the same batch of 1024 token examples:

- Keras: ``model.fit`` with ``keras.optimizers.SGD(0.05, momentum=0.9, weight_decay=1e-5)``
  and ``SparseCategoricalCrossentropy(from_logits=True)``, numpy inputs, no metrics.
- JAX: one ``jax.jit`` step (buffers donated) around ``model.stateless_call`` with the
  update written out: ``w -= lr * wd * w`` (Keras's decoupled weight decay, applied before the
  step), ``m = 0.9 m - lr g``, ``w += m``.
- TensorFlow: one ``tf.function`` step (``GradientTape``, same update with ``assign``),
  with the same ``jit_compile`` setting that ``fit`` resolved to.

Both use the Keras model's own forward pass, so the ratio measures the training loop: data
handling, optimizer and loss machinery, callbacks. The batch stays on the device for the
hand-written step (its best case); ``fit`` gets numpy arrays as a user would pass them.
Before timing, three steps of each from the same weights are compared (``max |dw|``) to show
that the two loops compute the same update. Each backend runs in its own subprocess
(``KERAS_BACKEND`` is fixed per process); each timing is the median of ``--repeats`` runs of
``--steps`` steps after a warm-up, Keras and hand-written runs interleaved.

Usage:
    python tools/probes/bench_train.py            # paper MLP + mixer/16, JAX and TF, input (~4 min)
    python tools/probes/bench_train.py --quick    # 5-step runs, mixer/32 (~1 min)
    python tools/probes/bench_train.py --backends jax --mixer-divisor 1 --steps 50  # GPU

A step of the paper-size mixer at batch 1024 is about 0.8 TFLOP, and its token-mixing MLP
evaluates 768 exact (erf) GELUs per channel, which XLA on CPU computes about 5x slower than
the tanh form: tens of seconds per step on a 2-core CPU. So by default the mixer's
widths (dim 512, token_dim 768, channel_dim 2048) are divided by ``--mixer-divisor`` 16: the
same depth, tokens, batch and loop, 16x narrower. ``--mixer-divisor 1`` is the paper's mixer.

A Keras time is one ``fit`` call's wall time over its ``--steps`` steps, so fit's fixed cost
per call (data adapter, iterator, callbacks; tens of ms on TF) is spread over those steps as
over an epoch; short runs (``--quick``) overstate it.

``--part input`` (also in the default ``all``, JAX only): epochs of the MLP with every width
divided by ``--mlp-divisor`` 16 (5,854 parameters, where the input is the largest share of a
step), fed by the device generator (``kinds.token.jax_data.token_stream``) and by tf.data
(``data.token_dataset``), same examples and order, the library's compile; medians over
``--repeats`` alternating fits of 1 + ``--input-epochs`` epochs, the first not counted.
Target: device input >= 1.5x faster.

    python tools/probes/bench_train.py --part input --backends jax
    python tools/probes/bench_train.py --part execution
    python tools/probes/bench_train.py --part step --baseline d832487  # speed-up against a revision

``--part execution``: the library's own loop (``training.loop.compile_model``, the run's
streams) on the narrow MLP at batch 128 with 1 and with 32 training steps per compiled call
(``system.steps_per_execution``; the runs' default is up to 32, a divisor of the epoch's
steps).

What these parts measured, and what was tried to make a step faster, is in
``docs/measurements.md``.
"""

import argparse
import dataclasses
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

LEARNING_RATE = 0.05
MOMENTUM = 0.9
WEIGHT_DECAY = 1e-5
CHECK_STEPS = 3


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["mlp", "mixer"])
    parser.add_argument("--backends", nargs="+", default=["jax", "tensorflow"])
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=None, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs (median taken)")
    parser.add_argument(
        "--mixer-divisor", type=int, default=None, help="divide the mixer's widths (1: paper)"
    )
    parser.add_argument(
        "--steps-per-execution", type=int, default=1, help="passed to compile (Keras default 1)"
    )
    parser.add_argument(
        "--part",
        choices=("step", "input", "execution", "all"),
        default="all",
        help="step: fit step against a hand-written one; input: a narrow MLP epoch on JAX, "
        "device input against tf.data; execution: the library's fit at 1 and 32 steps per "
        "compiled call",
    )
    parser.add_argument(
        "--input-examples", type=int, default=200_000, help="examples per epoch (--part input)"
    )
    parser.add_argument(
        "--input-epochs", type=int, default=3, help="timed epochs per fit (--part input)"
    )
    parser.add_argument(
        "--mlp-divisor", type=int, default=16, help="divide the MLP's widths (--part input)"
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="REV",
        help="also run the same measurements on the library of git revision REV (a temporary "
        "worktree) and print this tree's speed-up against it",
    )
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = 5 if args.quick else 20
    if args.repeats is None:
        args.repeats = 3
    if args.mixer_divisor is None:
        args.mixer_divisor = 32 if args.quick else 16
    names = ("batch_size", "steps", "repeats", "mixer_divisor", "steps_per_execution")
    for name in (*names, "input_examples", "input_epochs", "mlp_divisor"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1; received {getattr(args, name)}")
    unknown = set(args.backends) - {"jax", "tensorflow"}
    if unknown:
        parser.error(f"--backends must be jax or tensorflow; received {sorted(unknown)}")
    from pvr_keras import registry  # no framework: the worker picks the backend

    token_models = registry.model_names("token")
    unknown = set(args.models) - set(token_models)
    if unknown:
        parser.error(
            f"--models must be among {', '.join(token_models)}; received {sorted(unknown)}"
        )
    return args


def model_kwargs(name, args):
    if name == "mixer":
        d = args.mixer_divisor
        return {"dim": 512 // d, "token_dim": 768 // d, "channel_dim": 2048 // d}
    return {}


# ---------------------------------------------------------------- worker (one backend) ----


def clock():
    """(wall, process CPU) seconds. CPU time counts every thread of this process (XLA, TF
    and tf.data pools), so on a busy shared machine it is steadier than wall time."""
    return time.perf_counter(), time.process_time()


def since(start):
    now = clock()
    return now[0] - start[0], now[1] - start[1]


def make_batch(batch_size):
    """The default task's tokens and labels, from the NumPy reference rule (no TF needed)."""
    import numpy as np

    from pvr_keras.tasks import TokenTask

    task = TokenTask(window=3)
    x = np.random.default_rng(0).integers(0, task.num_values, (batch_size, task.seq_len))
    return x.astype("int32"), task.label(x).astype("int32")


def keras_setup(model, steps_per_execution=1):
    import keras

    model.compile(
        optimizer=keras.optimizers.SGD(
            learning_rate=LEARNING_RATE, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY
        ),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=steps_per_execution,
    )


def keras_fit_steps(model, x, y, steps):
    """Runs ``steps`` fit steps on the same batch; returns the wall time."""
    import numpy as np

    xs, ys = np.tile(x, (steps, 1)), np.tile(y, steps)
    start = clock()
    history = model.fit(xs, ys, batch_size=len(x), epochs=1, shuffle=False, verbose=0)
    elapsed = since(start)
    assert np.isfinite(history.history["loss"][-1])
    return elapsed


def jax_hand_step(model):
    """(state, step): a jitted SGD-momentum step on the model's stateless call."""
    import jax
    import jax.numpy as jnp

    def loss_fn(trainable, non_trainable, x, y):
        logits, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        logp = jax.nn.log_softmax(logits.astype("float32"))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1)), non_trainable

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def step(state, x, y):
        trainable, non_trainable, momenta = state
        (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        new_trainable, new_momenta = [], []
        for w, g, m in zip(trainable, grads, momenta, strict=True):
            w = w - LEARNING_RATE * WEIGHT_DECAY * w
            m = MOMENTUM * m - LEARNING_RATE * g
            new_trainable.append(w + m)
            new_momenta.append(m)
        return (new_trainable, non_trainable, new_momenta), loss

    state = (
        [jnp.array(v.value) for v in model.trainable_variables],
        [jnp.array(v.value) for v in model.non_trainable_variables],
        [jnp.zeros(v.shape, v.dtype) for v in model.trainable_variables],
    )
    return state, jax.jit(step, donate_argnums=0)


def jax_hand_steps(model, x, y, steps, state_and_step=None):
    import jax

    state, step = state_and_step or jax_hand_step(model)
    x, y = jax.device_put(x), jax.device_put(y)
    start = clock()
    for _ in range(steps):
        state, loss = step(state, x, y)
    jax.block_until_ready((state, loss))
    return since(start), (state, step)


def tf_hand_step(model, jit_compile):
    import tensorflow as tf

    variables = model.trainable_variables
    momenta = [tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False) for v in variables]

    @tf.function(jit_compile=jit_compile)
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(y, tf.cast(logits, tf.float32))
            )
        grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, variables)]  # dense
        for w, g, m in zip(variables, grads, momenta, strict=True):
            w.assign(w - LEARNING_RATE * WEIGHT_DECAY * w)
            m.assign(MOMENTUM * m - LEARNING_RATE * g)
            w.assign_add(m)
        return loss

    return step


def tf_hand_steps(model, x, y, steps, step):
    import tensorflow as tf

    x, y = tf.constant(x), tf.constant(y)
    start = clock()
    for _ in range(steps):
        loss = step(x, y)
    loss.numpy()  # waits for the last step
    return since(start)


def bench_model(name, args):
    import keras
    import numpy as np

    from pvr_keras import models

    backend = keras.backend.backend()
    x, y = make_batch(args.batch_size)
    keras.utils.set_random_seed(0)
    model = models.get(name, **model_kwargs(name, args))
    initial = [v.numpy() for v in model.weights]
    initial_trainable = [v.numpy() for v in model.trainable_weights]

    # Same update: CHECK_STEPS steps of each loop from the same weights.
    keras_setup(model)
    keras_fit_steps(model, x, y, CHECK_STEPS)
    after_keras = [v.numpy() for v in model.trainable_weights]
    model.set_weights(initial)
    if backend == "jax":
        _, (state, _) = jax_hand_steps(model, x, y, CHECK_STEPS)
        after_hand = [np.asarray(w) for w in state[0]]
    else:
        tf_step = tf_hand_step(model, jit_compile=bool(model.jit_compile))
        tf_hand_steps(model, x, y, CHECK_STEPS, tf_step)
        after_hand = [v.numpy() for v in model.trainable_weights]
    max_diff = max(
        float(np.max(np.abs(a - b))) for a, b in zip(after_keras, after_hand, strict=True)
    )
    max_change = max(
        float(np.max(np.abs(a - b))) for a, b in zip(after_keras, initial_trainable, strict=True)
    )

    # Timing: a warm-up run of each (compilation, caches), then the repeats interleaved so that
    # a change in machine load hits both loops alike.
    model.set_weights(initial)
    keras_setup(model, args.steps_per_execution)
    if backend == "jax":
        carry = None

        def hand_run():
            nonlocal carry
            elapsed, carry = jax_hand_steps(model, x, y, args.steps, carry)  # state is donated
            return elapsed
    else:

        def hand_run():
            return tf_hand_steps(model, x, y, args.steps, tf_step)

    keras_fit_steps(model, x, y, args.steps)
    hand_run()
    keras_times, hand_times = [], []
    for _ in range(args.repeats):
        keras_times.append(keras_fit_steps(model, x, y, args.steps))
        hand_times.append(hand_run())
    keras_wall, keras_cpu = ([t[i] for t in keras_times] for i in (0, 1))
    hand_wall, hand_cpu = ([t[i] for t in hand_times] for i in (0, 1))
    keras_ms = 1000 * statistics.median(keras_wall) / args.steps
    hand_ms = 1000 * statistics.median(hand_wall) / args.steps
    return {
        "backend": backend,
        "model": name,
        "params": model.count_params(),
        "batch": args.batch_size,
        "keras_ms": keras_ms,
        "keras_spread": spread(keras_wall),
        "hand_ms": hand_ms,
        "hand_spread": spread(hand_wall),
        "ratio": keras_ms / hand_ms,
        "cpu_ratio": statistics.median(keras_cpu) / statistics.median(hand_cpu),
        "keras_cpu_ms": 1000 * statistics.median(keras_cpu) / args.steps,
        "hand_cpu_ms": 1000 * statistics.median(hand_cpu) / args.steps,
        "max_dw": max_diff,
        "max_update": max_change,
        "jit_compile": bool(model.jit_compile),
        "device": device_name(),
    }


def spread(times):
    return (max(times) - min(times)) / statistics.median(times)


def device_name():
    import keras

    if keras.backend.backend() == "jax":
        import jax

        return jax.devices()[0].device_kind
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return "GPU" if gpus else "CPU"


class _EpochClock:
    """A Keras callback keeping (wall, CPU) seconds of every epoch."""

    def __new__(cls):
        import keras

        class Clock(keras.callbacks.Callback):
            def on_train_begin(self, logs=None):
                self.times = []

            def on_epoch_begin(self, epoch, logs=None):
                self.start = clock()

            def on_epoch_end(self, epoch, logs=None):
                self.times.append(since(self.start))

        return Clock()


def bench_input(args):
    """Epochs of a narrow MLP (widths / ``--mlp-divisor``) on JAX, fed by the device
    generator (``kinds.token.jax_data.token_stream``) and by tf.data (``data.token_dataset``),
    the same examples in the same order, through the library's compile (the paper's SGD recipe).

    Each run is one ``fit`` of 1 + ``--input-epochs`` epochs (the first compiles and is not
    counted); runs alternate between the inputs ``--repeats`` times. Returns the medians.
    """
    import keras

    from pvr_keras import data, models, training
    from pvr_keras.kinds.token import jax_data
    from pvr_keras.registry import width_kwargs
    from pvr_keras.tasks import TokenTask

    task = TokenTask(window=2)
    n = args.input_examples
    recipe = dataclasses.replace(training.TOKEN, batch_size=args.batch_size)
    widths = width_kwargs("mlp", 1 / args.mlp_divisor)
    streams = {"device": jax_data.token_stream, "tfdata": data.token_dataset}

    def run(source):
        keras.utils.set_random_seed(0)
        model = training.compile_model(models.get("mlp", **widths), recipe, n)
        model.steps_per_execution = args.steps_per_execution  # read when fit builds its step
        stream = streams[source](task, n, batch_size=args.batch_size, epochs=None)
        timer = _EpochClock()
        model.fit(
            stream,
            epochs=1 + args.input_epochs,
            steps_per_epoch=recipe.steps_per_epoch(n),
            shuffle=False,
            verbose=0,
            callbacks=[timer],
        )
        return timer.times[1:], model.count_params()

    times = {source: [] for source in streams}
    for _ in range(args.repeats):
        for source in streams:
            epochs, params = run(source)
            times[source] += epochs
    wall = {k: statistics.median(t[0] for t in v) for k, v in times.items()}
    cpu = {k: statistics.median(t[1] for t in v) for k, v in times.items()}
    return {
        "kind": "input",
        "backend": "jax",
        "params": params,
        "widths": widths,
        "examples": n,
        "batch": args.batch_size,
        "epochs": len(times["device"]),
        "rate": {k: n / v for k, v in wall.items()},
        "cpu_us": {k: 1e6 * v / n for k, v in cpu.items()},
        "spread": {k: spread([t[0] for t in v]) for k, v in times.items()},
        "ratio": wall["tfdata"] / wall["device"],
        "cpu_ratio": cpu["tfdata"] / cpu["device"],
        "device": device_name(),
    }


def bench_execution(args):
    """The library's training loop (``loop.compile_model`` and the run's streams: device
    input on JAX, tf.data on TensorFlow) on the /``--mlp-divisor`` MLP at batch 128, one and
    32 steps per compiled call, 256 steps an epoch; medians of ``--repeats`` fits of
    ``--input-epochs`` epochs after one warm-up epoch on the same stream."""
    import keras

    from pvr_keras import models
    from pvr_keras.hyperparams import TOKEN
    from pvr_keras.tasks import TokenTask
    from pvr_keras.training.inputs import default_input, train_data
    from pvr_keras.training.loop import compile_model

    d, batch = args.mlp_divisor, 128
    widths = [max(1, w // d) for w in (512, 1024, 512, 64)]
    recipe = dataclasses.replace(TOKEN, batch_size=batch)
    n = 256 * batch
    data = train_data("token", TokenTask(), n, test_examples=256, batch_size=batch,
                      input=default_input())  # fmt: skip
    times = {1: [], 32: []}
    for _ in range(args.repeats):
        for per_call in times:
            model = models.get("mlp", embed_dim=max(1, 64 // d), widths=widths)
            compile_model(model, recipe, n, steps_per_execution=per_call)
            stream = data.make_train(0)
            model.fit(stream, epochs=1, steps_per_epoch=256, verbose=0)
            start = clock()
            model.fit(stream, epochs=args.input_epochs, steps_per_epoch=256, verbose=0)
            wall, _ = since(start)
            times[per_call].append(wall / (256 * args.input_epochs))
    ms = {k: 1e3 * statistics.median(v) for k, v in times.items()}
    return {
        "kind": "execution",
        "backend": keras.backend.backend(),
        "input": data.input,
        "ms": ms,
        "spread": {k: spread(v) for k, v in times.items()},
        "ratio": ms[1] / ms[32],
        "device": device_name(),
    }


def print_execution(row):
    ms = row["ms"]
    print(
        f"\nsteps per compiled call, {row['backend']} ({row['input']} input, narrow MLP, "
        f"batch 128; {row['device']}): 1 per call {ms['1']:.2f} ms/step "
        f"±{100 * row['spread']['1']:.0f}%, 32 per call {ms['32']:.2f} ms/step "
        f"±{100 * row['spread']['32']:.0f}%: {row['ratio']:.2f}x"
    )


def worker(args):
    import keras

    if args.part in ("execution", "all"):
        print("RESULT " + json.dumps(bench_execution(args)), flush=True)
    if args.part in ("step", "all"):
        for name in args.models:
            print("RESULT " + json.dumps(bench_model(name, args)), flush=True)
    if args.part in ("input", "all") and keras.backend.backend() == "jax":
        print("RESULT " + json.dumps(bench_input(args)), flush=True)


def print_input(row, args):
    rate, cpu = row["rate"], row["cpu_us"]
    print(
        f"\nnarrow MLP epoch on JAX ({row['params']:,} parameters, widths / "
        f"{args.mlp_divisor}; {row['examples']:,} examples, batch {row['batch']}; "
        f"steps_per_execution {args.steps_per_execution}; medians of {row['epochs']} epochs; "
        f"{row['device']}):"
    )
    for source, what in (("device", "device input (jax_data)"), ("tfdata", "tf.data")):
        print(
            f"  {what:28s} {rate[source]:12,.0f} examples/s  {cpu[source]:6.2f} us CPU/example"
            f"  ±{100 * row['spread'][source]:.0f}%"
        )
    print(
        f"  device input / tf.data: {row['ratio']:.2f}x faster (wall), {row['cpu_ratio']:.2f}x "
        "less CPU; target >= 1.5x"
    )


# ---------------------------------------------------------------- driver ----


def run_backend(backend, argv, library=None):
    """The worker's rows on ``backend``; ``library``: a checkout whose ``pvr_keras`` it
    imports instead of this tree's (``--baseline``)."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    if library is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(library), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", *argv],
        env=env,
        capture_output=True,
        text=True,
    )
    results = [
        json.loads(line[len("RESULT ") :])
        for line in proc.stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    if proc.returncode:
        print(f"{backend} worker failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return results


def print_table(rows, args):
    header = (
        f"{'backend':<11}{'model':<7}{'params':>10}{'batch':>6} {'device':<9}"
        f"{'keras fit ms':>16}{'hand ms':>16}{'keras/hand':>11}{'cpu':>7}{'max|dw|':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        keras_ms = f"{r['keras_ms']:.1f} ±{100 * r['keras_spread']:.0f}%"
        hand_ms = f"{r['hand_ms']:.1f} ±{100 * r['hand_spread']:.0f}%"
        print(
            f"{r['backend']:<11}{r['model']:<7}{r['params']:>10,}{r['batch']:>6} "
            f"{r['device'][:8]:<9}{keras_ms:>16}{hand_ms:>16}{r['ratio']:>10.2f}x"
            f"{r['cpu_ratio']:>6.2f}x{r['max_dw']:>9.0e}"
        )
    print(
        f"\nms: median over {args.repeats} runs of {args.steps} steps, after a warm-up run; "
        "±: (max - min) / median of those runs; keras/hand: ratio of the median wall times;\n"
        "cpu: the same for process CPU time (steadier when other jobs share the machine). "
        f"mixer widths divided by {args.mixer_divisor} (1 = paper); fit steps_per_execution "
        f"{args.steps_per_execution}. "
        f"max|dw|: largest weight difference between the two loops after {CHECK_STEPS} steps "
        "from the same weights (the steps themselves move weights by up to "
        f"{max((r['max_update'] for r in rows), default=0):.1e}).\n"
        "Target: keras/hand <= 1.10."
    )


def baseline_rows(rev, backends, worker_argv):
    """The worker's rows with the library of git revision ``rev``, checked out in a temporary
    worktree (removed afterwards), interleaved backend by backend like this tree's."""
    import tempfile

    repo = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), rev],
                       check=True, capture_output=True, text=True)  # fmt: skip
        try:
            return {b: run_backend(b, worker_argv, library=tree) for b in backends}
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                           capture_output=True, text=True)  # fmt: skip


def print_speedups(rows, base, rev):
    """This tree against the baseline, per backend and measurement (above 1: faster now)."""
    print(f"\nagainst the library at {rev} (the same bench; above 1: this tree is faster):")
    for row in rows:
        backend = row.get("backend", "jax")
        match = [b for b in base.get(backend, []) if b.get("kind") == row.get("kind")
                 and b.get("model") == row.get("model")]  # fmt: skip
        if not match:
            print(f"  {backend:10s} {row.get('model') or row.get('kind')}: not in the baseline")
            continue
        old = match[0]
        if row.get("kind") == "execution":
            print(f"  {backend:10s} loop, 1 step per call {old['ms']['1'] / row['ms']['1']:.2f}x, "
                  f"32 per call {old['ms']['32'] / row['ms']['32']:.2f}x")  # fmt: skip
        elif row.get("kind") == "input":
            ratio = row["rate"]["device"] / old["rate"]["device"]
            print(f"  {backend:10s} device input {ratio:.2f}x examples/s")
        else:
            print(f"  {backend:10s} {row['model']:7s} fit step "
                  f"{old['keras_ms'] / row['keras_ms']:.2f}x, hand-written step "
                  f"{old['hand_ms'] / row['hand_ms']:.2f}x")  # fmt: skip


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return
    worker_argv = [a for a in argv if a != "--worker"]  # a worker ignores --baseline
    rows = []
    start = time.perf_counter()
    base = baseline_rows(args.baseline, args.backends, worker_argv) if args.baseline else {}
    for backend in args.backends:
        rows += run_backend(backend, worker_argv)
    steps = [r for r in rows if r.get("kind") not in ("input", "execution")]
    if steps:
        print_table(steps, args)
    for row in rows:
        if row.get("kind") == "input":
            print_input(row, args)
        if row.get("kind") == "execution":
            print_execution(row)
    if args.baseline:
        print_speedups(rows, base, args.baseline)
    print(f"total wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
