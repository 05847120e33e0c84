"""A training step of each model on each engine this machine has, interleaved in one run.

    python tools/probes/bench_engines.py                      # ~5-10 min on a 2-core CPU
    python tools/probes/bench_engines.py --models mixer --engines tensorflow jax --rounds 5

Engines: ``tensorflow`` (Keras on TensorFlow, graph mode, ``jit_compile=False``: what
Keras resolves to on a CPU), ``tensorflow-xla`` (the same with ``jit_compile=True``), ``jax``
(Keras on JAX: XLA), and, where PyTorch is installed (``pip install -e ".[bench]"``),
``torch`` (Keras on PyTorch) and ``pytorch`` (the same architecture written in plain eager
PyTorch: ``tools/probes/bench_torch.py``'s modules; token models only). Models: the paper's MLP,
the Transformer and MLP-Mixer at ``--width`` (default 1/8: the width of the CPU studies)
on batches of 1024 token examples, and ResNet18 (paper width) on batches of 50 blocks of
80 x 80 pixels (the visual recipe's batch; random pixels, as pixel values do not change a
step's time).

Each engine runs in a worker process of its own (a Keras backend is fixed per process), all
alive at once; one round times ``--steps`` training steps of the current model on every
engine in turn (one compiled call, ``steps_per_execution`` = steps, as the library's runs
train several steps per compiled call: the marginal time of a second call in one ``fit``,
so that what a ``fit`` costs to start, once per run in a recipe, is not counted), after a
first untimed call that compiles. The
library's compile (``training.compile_model``: SGD momentum 0.9, weight decay, cosine
schedule, cross-entropy on logits, accuracy) is used on every Keras engine; plain PyTorch
takes the same SGD-momentum step. The matmul rate of the machine is measured in the same
rounds (NumPy float32 2048 x 2048 products in the parent, its BLAS threads), and a step's
FLOPs are XLA's count of the training step (``cost_analysis`` of forward and backward, from
the JAX worker). Printed per model and engine: median ms per step over the rounds (and the
spread), examples per second, the fraction of the matmul rate achieved, and the winner.

The ``recipe`` columns (token models; the engines the library trains on: ``tensorflow``,
``tensorflow-xla``, ``jax``): after the rounds, each of those workers trains a real token
recipe run (``training.runs.run`` into a temporary folder: ``--recipe-steps`` steps an epoch
at the same batch, 3 epochs, the backend's default input, the library's steps per compiled
call, the engine's XLA setting) and reports the median of its history's ``train_seconds``
after the first epoch (which compiles) per step, printed beside the bare step with their
ratio: the recipe's step is the engine's step when the ratio is about 1.

The ``jax population K`` rows (``--population``, default 8; token models): the JAX worker
times ``--steps`` steps of a population of K models of the same architecture trained as one
program (``training.stacked``, what ``--population K`` trains with), per run's step: the
figure to hold against each engine's step alone (a population is faster when its row is
below the fastest engine's).

The workers are ``pvr_keras.calibration.Worker`` processes running the step of
``pvr_keras.training.timing`` (what the library's engine calibration times); a worker that
dies (its pipe breaks, its output closes) is named in its rows ("failed: the torch worker
exited (code N)") and the other rows still print.

Every timing shares the machine with whatever else runs on it: the CPU (model name, vector
units, cores) and the load average are printed with the table, and a quiet machine gives the
fairest ratios.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
TOKEN_MODELS = ("mlp", "transformer", "mixer")
MODELS = (*TOKEN_MODELS, "resnet18")
ENGINES = ("tensorflow", "tensorflow-xla", "jax", "torch", "pytorch")
BACKEND = {"tensorflow": "tensorflow", "tensorflow-xla": "tensorflow", "jax": "jax",
           "torch": "torch", "pytorch": None}  # fmt: skip
BLOCK_SHAPE = (80, 80, 1)
BLOCK_BATCH = 50
TOKEN_BATCH = 1024
RECIPE_ENGINES = ("tensorflow", "tensorflow-xla", "jax")  # the library trains on these
RECIPE_EPOCHS = 3


# ---- worker side: one engine per process -------------------------------------------------


def _batch(name, batch_size):
    import numpy as np

    rng = np.random.default_rng(0)
    if name == "resnet18":
        x = rng.random((batch_size, *BLOCK_SHAPE), dtype=np.float32)
        return x, rng.integers(0, 10, batch_size).astype("int32")
    from pvr_keras.tasks import TokenTask

    task = TokenTask(window=3)
    x = rng.integers(0, task.num_values, (batch_size, task.seq_len)).astype("int32")
    return x, task.label(x).astype("int32")


def _keras_model(name, width):
    from pvr_keras import models, registry

    if name == "resnet18":
        return models.get("resnet18", input_shape=BLOCK_SHAPE)
    return models.get(name, **(registry.width_kwargs(name, width) if name != "mlp" else {}))


def _keras_stepper(engine, name, width, batch_size, steps):
    """``() -> seconds`` of one ``fit`` call of ``steps`` steps on a Keras engine
    (``training.timing.keras_stepper``, the step the library's calibration times)."""
    import keras

    from pvr_keras.hyperparams import TOKEN, VISUAL
    from pvr_keras.training import timing

    keras.utils.set_random_seed(0)
    model = _keras_model(name, width)
    jit = {"tensorflow": False, "tensorflow-xla": True}.get(engine)
    return timing.keras_stepper(
        model, batch_size, steps, jit=jit, batch=(*_batch(name, batch_size), "accuracy"),
        recipe=VISUAL if name == "resnet18" else TOKEN,
    )  # fmt: skip


def _recipe_step(engine, name, width, batch_size, steps_per_epoch, epochs=RECIPE_EPOCHS):
    """Seconds per training step of a real token recipe run (``training.runs.run``: the
    kind's streams and the input the backend takes by default, ``steps_per_epoch`` steps an
    epoch, the library's steps per execution) on ``engine`` (its XLA setting), read from the
    history's ``train_seconds`` of the epochs after the first (which compiles): the median.
    Also returns the run's input and steps per execution."""
    import statistics
    import tempfile

    from pvr_keras import engines
    from pvr_keras.runconfig import Run
    from pvr_keras.training import runs

    if engine in ("tensorflow", "tensorflow-xla"):  # the bare step's XLA setting
        engines.jit_compile = lambda model, xla=engine == "tensorflow-xla": xla
    run = Run.make(
        "token", model=name, width=width, num_examples=batch_size * steps_per_epoch,
        test_examples=batch_size, train_eval_examples=batch_size, batch_size=batch_size,
        epochs=epochs, min_steps=0,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        record = runs.run(run, out, save_model=False)
    seconds = record["history"]["train_seconds"][1:]
    return {
        "seconds": statistics.median(seconds) / record["steps_per_epoch"],
        "input": record["input"],
        "steps_per_execution": record["steps_per_execution"],
    }


def _population_stepper(name, width, batch_size, steps, size):
    """``() -> seconds`` per run of ``steps`` steps of a population of ``size`` models on
    JAX (``training.timing.population_stepper``: what ``--population`` trains with)."""
    from pvr_keras import registry
    from pvr_keras.training.timing import population_stepper

    arguments = registry.width_kwargs(name, width) if name in ("transformer", "mixer") else {}
    return population_stepper(name, arguments, batch_size, steps, size)


def _pytorch_stepper(name, width, batch_size, steps):
    """``() -> seconds`` of ``steps`` plain eager PyTorch steps (``tools/probes/bench_torch.py``'s
    model and SGD-momentum step)."""
    import bench_torch  # beside this file (a script's folder is on its import path)
    import torch

    torch.manual_seed(0)
    divisor = round(1 / width) if name != "mlp" else 1
    net = bench_torch.torch_model(name, bench_torch.widths(name, divisor))
    x, y = _batch(name, batch_size)
    tx, ty = torch.from_numpy(x).long(), torch.from_numpy(y).long()
    steps_of = bench_torch._torch_stepper(net, tx, ty, bench_torch._bench_train())

    def call():
        return steps_of(steps)

    call.params = steps_of.params
    return call


def _step_flops(model, name, batch_size):
    """XLA's FLOP count of one training step (forward and backward) of a Keras-on-JAX model."""
    import jax
    import keras

    x, y = _batch(name, batch_size)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss_of(trainable, non_trainable):
        logits, _ = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss(y, logits)

    compiled = (
        jax.jit(jax.grad(loss_of))
        .lower(
            [v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables],
        )
        .compile()
    )
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list | tuple) else cost
    return float(cost.get("flops", 0.0)) or None


def worker(engine):
    """Answers one JSON line per command read from stdin (``calibration.serve``)."""
    from pvr_keras import calibration

    calibration.set_backend(BACKEND[engine])
    steppers = {}

    def answer(command):
        if command.get("recipe"):
            return _recipe_step(engine, command["model"], command["width"], command["batch"],
                                command["recipe"])  # fmt: skip
        key = (command["model"], command["width"], command["batch"], command["steps"])
        if command.get("population"):
            key = (*key, command["population"])
        if key not in steppers:
            if any(k[:4] != key[:4] for k in steppers):  # one model at a time (its single
                steppers.clear()  # step and populations): free the last one's memory
            if command.get("population"):
                steppers[key] = _population_stepper(*key)
            elif engine == "pytorch":
                steppers[key] = _pytorch_stepper(*key)
            else:
                steppers[key] = _keras_stepper(engine, *key)
        call = steppers[key]
        if command.get("flops"):
            return {"flops": _step_flops(call.model, command["model"], command["batch"])}
        return {"seconds": call(), "params": call.params}

    calibration.serve(answer)


# ---- parent side --------------------------------------------------------------------------


def Engine(name, argv=None):
    """A worker process for one engine (``calibration.Worker``): ``ask`` answers a timing,
    or ``{"error": "the NAME worker exited (code N)"}`` once it has exited."""
    from pvr_keras.calibration import Worker

    return Worker(name, argv or [sys.executable, __file__, "--worker", name])


def available_engines():
    import importlib.util

    have_torch = importlib.util.find_spec("torch") is not None
    return [e for e in ENGINES if have_torch or e not in ("torch", "pytorch")]


def matmul_rate(size=2048, repeats=3):
    """FLOP/s of a float32 ``size`` x ``size`` product in NumPy (best of ``repeats``)."""
    import numpy as np

    a = np.random.default_rng(0).random((size, size), dtype=np.float32)
    a @ a
    best = min(_timed(lambda: a @ a) for _ in range(repeats))
    return 2 * size**3 / best


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_model(name, engines, args, rates):
    batch = BLOCK_BATCH if name == "resnet18" else TOKEN_BATCH
    command = dict(model=name, width=args.width if name in ("transformer", "mixer") else 1.0,
                   batch=batch, steps=args.steps)  # fmt: skip
    usable = [e for e in engines if not (e.name == "pytorch" and name not in TOKEN_MODELS)]
    # A population of K on JAX: its time per run's step (asked of the JAX worker).
    jax_engine = next((e for e in usable if e.name == "jax"), None)
    populations = {f"jax population {k}": k for k in args.population
                   if jax_engine is not None and name in TOKEN_MODELS}  # fmt: skip
    times, params, errors = {e.name: [] for e in usable}, {}, {}
    times.update({label: [] for label in populations})
    flops = None
    for round_ in range(args.rounds + 1):  # round 0 compiles and warms up
        rates.append(matmul_rate())
        for engine in usable:
            if engine.name in errors:
                continue
            answer = engine.ask(**command)
            if "error" in answer:
                errors[engine.name] = answer["error"]
                continue
            params[engine.name] = answer["params"]
            if round_:
                times[engine.name].append(answer["seconds"] / args.steps)
        for label, size in populations.items():
            if label not in errors:
                answer = jax_engine.ask(**command, population=size)
                if "error" in answer:
                    errors[label] = answer["error"]
                    continue
                params[label] = answer["params"]
                if round_:
                    times[label].append(answer["seconds"] / args.steps)
        if round_ == 0:
            if jax_engine is not None and "jax" not in errors:
                flops = jax_engine.ask(**command, flops=True).get("flops")
        print(f"  {name}: round {round_}/{args.rounds} done", file=sys.stderr, flush=True)
    recipe = {}
    if name in TOKEN_MODELS and args.recipe_steps:
        for engine in usable:
            if engine.name in RECIPE_ENGINES and engine.name not in errors:
                recipe[engine.name] = engine.ask(**command, recipe=args.recipe_steps)
                print(f"  {name}: recipe on {engine.name} done", file=sys.stderr, flush=True)
    return dict(model=name, batch=batch, times=times, params=params, errors=errors, flops=flops,
                recipe=recipe)  # fmt: skip


def _recipe_cells(row, engine, medians):
    """The recipe's ms per step and its ratio to the bare step of the same engine."""
    answer = row.get("recipe", {}).get(engine)
    if answer is None:
        return ["", ""]
    if "error" in answer:
        return [f"failed: {answer['error']}", ""]
    ms = 1e3 * answer["seconds"]
    ratio = f"{answer['seconds'] / medians[engine]:.2f}" if engine in medians else ""
    return [f"{ms:.0f} ({answer['input']}, {answer['steps_per_execution']} steps/call)", ratio]


def print_table(rows, rate, load, cpu="unknown CPU"):
    print(
        f"\n{cpu}: ms per training step (median over rounds; range), examples/s, fraction of "
        f"the matmul rate ({rate / 1e9:.0f} GFLOP/s, NumPy float32, measured in the same run); "
        f"recipe: a token recipe run's ms per step (its history's train_seconds after the "
        f"first epoch) and its ratio to the bare step; load average at the start "
        f"{load[0]:.1f}, at the end {load[1]:.1f}\n"
    )
    print("| model | params | batch | GFLOP/step | engine | ms/step | examples/s | of matmul | "
          "recipe ms/step | recipe / bare |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        medians = {e: statistics.median(t) for e, t in row["times"].items() if t}
        best = min(medians, key=medians.get) if medians else None
        gflop = f"{row['flops'] / 1e9:.1f}" if row["flops"] else "-"
        for engine, seconds in row["times"].items():
            if engine in row["errors"]:
                cells = [f"failed: {row['errors'][engine]}", "", ""]
            else:
                ms = 1e3 * medians[engine]
                spread = f"{1e3 * min(seconds):.0f}-{1e3 * max(seconds):.0f}"
                frac = f"{row['flops'] / medians[engine] / rate:.2f}" if row["flops"] else "-"
                mark = " **fastest**" if engine == best else ""
                cells = [f"{ms:.0f} ({spread}){mark}", f"{row['batch'] / medians[engine]:,.0f}",
                         frac]  # fmt: skip
            cells += _recipe_cells(row, engine, medians)
            params = f"{row['params'].get(engine, 0):,}"
            print(f"| {row['model']} | {params} | {row['batch']} | {gflop} | {engine} | "
                  + " | ".join(cells) + " |")  # fmt: skip
    print()
    for row in rows:
        medians = {e: statistics.median(t) for e, t in row["times"].items() if t}
        if len(medians) > 1:
            ranked = sorted(medians, key=medians.get)
            first, second = ranked[0], ranked[1]
            print(
                f"{row['model']}: {first} is fastest, {medians[second] / medians[first]:.2f}x "
                f"ahead of {second}" + "".join(
                    f"; {medians[e] / medians[first]:.2f}x ahead of {e}" for e in ranked[2:]
                )
            )  # fmt: skip


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--engines", nargs="+", default=None, choices=ENGINES,
                        help="default: every engine this machine has")  # fmt: skip
    parser.add_argument("--width", type=float, default=0.125,
                        help="width of the Transformer and Mixer (1: the paper's)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=4, help="training steps per timed call")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (after a warm-up)")
    parser.add_argument("--recipe-steps", type=int, default=12,
                        help="steps per epoch of the recipe run (0: no recipe row)")  # fmt: skip
    parser.add_argument("--population", type=int, nargs="*", default=[8],
                        help="also time populations of these sizes on JAX (token models; "
                             "ms per run's step); none: no population rows")  # fmt: skip
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.recipe_steps < 0:
        parser.error("--recipe-steps must be >= 0")
    if any(k < 2 for k in args.population):
        parser.error("--population sizes must be >= 2")
    for name in ("steps", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if not 0 < args.width <= 1:
        parser.error("--width must be in (0, 1]")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args.worker)
    have = available_engines()
    missing = [e for e in args.engines or [] if e not in have]
    if missing:
        sys.exit(f"bench_engines.py: not installed here: {', '.join(missing)} (PyTorch: "
                 f"pip install -e '.[bench]')")  # fmt: skip
    names = args.engines or have
    print(f"engines: {', '.join(names)}; models: {', '.join(args.models)}; "
          f"{args.steps} steps x {args.rounds} rounds", flush=True)  # fmt: skip
    load = [os.getloadavg()[0]]
    engines = [Engine(name) for name in names]
    rates, rows = [], []
    try:
        for name in args.models:
            rows.append(bench_model(name, engines, args, rates))
    finally:
        for engine in engines:
            engine.close()
    load.append(os.getloadavg()[0])
    from pvr_keras.calibration import cores, cpu_name, vector_units

    cpu = f"{cpu_name()} ({vector_units()}, {cores()} cores)"
    print_table(rows, statistics.median(rates), load, cpu)
    return rows


if __name__ == "__main__":
    main()
