"""Which engine trains a run: the Keras backend, its input and XLA, as measured fastest.

``choose(backend, run=run)`` picks the backend before Keras is imported: the one named
(``--backend`` or ``KERAS_BACKEND`` always wins), else the measured-fastest:

- a CPU: the backend that trains the run's model fastest on *this* machine, measured by
  ``calibration`` (a few training steps of the model at the run's width and batch on Keras
  on TensorFlow and Keras on JAX, each in its own process, under a minute) the first time
  the model trains here, and cached per CPU model, core count and framework versions
  (``~/.cache/pvr_keras/engines.json``; ``$XDG_CACHE_HOME``, or ``$PVR_ENGINE_CACHE`` for
  the file itself). CPUs differ: ``tools/probes/bench_engines.py`` on a 2-core Zen 4 EPYC times
  JAX fastest for the paper's MLP and TensorFlow-XLA 3.5x faster than JAX for the 1/8-width
  MLP-Mixer; on a 2-core Zen 3 EPYC TensorFlow is the slowest engine for every token model
  (docs/performance.md, "Choosing the backend"). ``PVR_ENGINE=fixed`` (the test suite's
  setting) skips the measurement: TensorFlow, the rule before measurement;
  ``PVR_ENGINE=tensorflow`` or ``jax`` names the backend as ``KERAS_BACKEND`` would.
- an NVIDIA GPU with JAX's CUDA plugin installed: JAX with device input, the choice that
  ``tools/probes/gpu_check.sh`` measures (until it measures otherwise).

``choice()`` is the last choice of this process with its figures, which ``training.runs``
writes into each run's record (``engine_choice``).

``jit_compile(model)`` is the XLA setting of a compiled model on TensorFlow, set by
``training.compile_model``: on a CPU, XLA for models without convolutions (the token and
Boolean models: 1.1-2x faster per step than TensorFlow's graph mode, whose kernels run one
op at a time) and graph mode with oneDNN for convolutional ones (XLA's CPU convolutions are
1.1-2.2x slower there); Keras's own choice elsewhere (XLA on a GPU, none under tf.distribute).
Neither changes a run's identity: a run resumes on either engine.
"""

import importlib.util
import os
import pathlib

CPU_BACKEND = "tensorflow"  # a CPU's backend when not measured
CANDIDATES = ("tensorflow", "jax")  # the backends the library trains on
GPU_BACKEND = "jax"
CUDA_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin")


def has_nvidia_gpu():
    """Whether the machine has an NVIDIA GPU with its driver loaded (no framework imported)."""
    gpus = pathlib.Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def choose(backend=None, *, environ=None, gpu=None, run=None, calibrate=None, cache=None,
           measure_fn=None, say=None):  # fmt: skip
    """``(backend, why)``: the Keras backend to train on and one line saying why (with the
    measured ms per step of each candidate on a CPU). Also kept as ``choice()``.

    Args:
        backend: the backend the user named (``--backend``), or None.
        environ: the environment to read ``KERAS_BACKEND`` and ``PVR_ENGINE`` from (default
            ``os.environ``).
        gpu: whether an NVIDIA GPU is there (default: ``has_nvidia_gpu()``).
        run: the ``runconfig.Run`` to train (its model, width, batch and metric are what is
            measured on a CPU); None: not measured, the fixed rule.
        calibrate: measure on a CPU (default: unless ``PVR_ENGINE=fixed``); False: the fixed
            rule (TensorFlow).
        cache, measure_fn, say: ``calibration.calibrated``'s ``path``, ``measure_fn`` and
            ``say`` (tests).
    """
    global _choice
    backend, why, figures = _choose(backend, environ, gpu, run, calibrate, cache, measure_fn,
                                    say)  # fmt: skip
    _choice = {"backend": backend, "why": why, **figures}
    return backend, why


_choice = None


def choice():
    """The last ``choose`` of this process: ``{"backend", "why"}`` and, when measured,
    ``ms_per_step``, ``cpu``, ``cores``, ``key``, ``family``, ``cached``; None before any."""
    return None if _choice is None else dict(_choice)


def _choose(backend, environ, gpu, run, calibrate, cache, measure_fn, say):
    environ = os.environ if environ is None else environ
    if backend:
        return backend, "named by --backend", {}
    if environ.get("KERAS_BACKEND"):
        return environ["KERAS_BACKEND"], "named by KERAS_BACKEND", {}
    fixed = environ.get("PVR_ENGINE", "").strip().lower()
    if fixed in CANDIDATES:
        return fixed, "named by PVR_ENGINE", {}
    if fixed not in ("", "fixed", "measure"):
        raise ValueError(f"PVR_ENGINE must be fixed, measure, tensorflow or jax; got {fixed!r}")
    gpu = has_nvidia_gpu() if gpu is None else gpu
    if gpu:
        if any(importlib.util.find_spec(p) is not None for p in CUDA_PLUGINS):
            return (
                GPU_BACKEND,
                "none named; the fastest measured on a GPU: tools/probes/gpu_check.sh",
                {},
            )
        return (
            CPU_BACKEND,
            ("none named; a GPU is here but JAX has no CUDA plugin: pip install -e '.[jax-cuda]'"),
            {},
        )
    calibrate = fixed != "fixed" if calibrate is None else calibrate
    if not calibrate or run is None:
        return CPU_BACKEND, (
            "none named; not measured" + (" (PVR_ENGINE=fixed)" if fixed == "fixed" else "")
            + ": the fixed rule for a CPU"
        ), {}  # fmt: skip
    return _measured(run, cache, measure_fn, say)


def _measured(run, cache, measure_fn, say):
    from pvr_keras import calibration

    have = calibration.candidates()
    if len(have) < 2:
        only = have[0] if have else CPU_BACKEND
        return only, f"none named; {only} is the only backend installed here", {}
    found = calibration.calibrated(
        run.model, run.width, run.batch_size, arguments=run.model_arguments(),
        metric=run.spec.metric, path=cache, measure_fn=measure_fn,
        **({"say": say} if say else {}),
    )  # fmt: skip
    ms = found["ms_per_step"]
    figures = {k: found[k] for k in ("ms_per_step", "cpu", "cores", "key", "family", "cached")}
    if found["errors"]:
        figures["errors"] = found["errors"]
    times = ", ".join(f"{b} {v:.3g}" for b, v in sorted(ms.items(), key=lambda item: item[1]))
    failed = "".join(f"; {b} failed: {e}" for b, e in found["errors"].items())
    if not ms:
        return CPU_BACKEND, f"none named; no backend could be measured{failed}", figures
    best = min(ms, key=ms.get)
    where = "cached" if found["cached"] else "just measured"
    return (
        best,
        (
            f"none named; the fastest on this CPU for {found['family']}: {times} ms/step, "
            f"{where} in {found['cache']}{failed}"
        ),
        figures,
    )


def choose_population(size, backend=None, *, first=None, environ=None, gpu=None, run=None,
                      calibrate=None, cache=None, measure_fn=None, say=None):  # fmt: skip
    """``(backend, why, size)`` of a grid asked to train in populations of ``size``: JAX and
    ``size`` when the backend is named jax, on a GPU, unmeasured (``PVR_ENGINE``), or when a
    population of ``first`` measures faster per run-step on this CPU than the fastest engine
    alone; else that engine and 1 (the grid trains one run after another, and ``why`` says
    so). ``first`` (default ``size``) is the size of the grid's first population still to
    train, ``run``'s: a grid with two seeds left trains populations of 2, which cost more per
    run than 8 (on a 2-core CPU a mean-field population of 2 took 2.2x TensorFlow's time per
    run-step alone, one of 8 0.7x), so that size is what is measured, and a first population
    of one run measures none. Also kept as ``choice()`` (with ``population``). Other
    arguments as ``choose``.

    Raises:
        ValueError: another backend than jax was named.
    """
    global _choice
    environ = os.environ if environ is None else environ
    named = backend or environ.get("KERAS_BACKEND")
    if named not in (None, "", "jax"):
        where = "--backend" if backend else "KERAS_BACKEND"
        raise ValueError(
            f"--population {size} trains its runs as one JAX program; {where} names {named}: "
            f"give --backend jax, or --population 1 to train one run after another"
        )
    fixed = environ.get("PVR_ENGINE", "").strip().lower()
    gpu = has_nvidia_gpu() if gpu is None else gpu
    calibrate = fixed not in ("fixed", *CANDIDATES) if calibrate is None else calibrate
    figures = {}
    if named or gpu or not calibrate or run is None:
        how = "named" if named else "on a GPU" if gpu else "not measured"
        result = "jax", f"--population {size}: a population trains on JAX ({how})", size
    else:
        result, figures = _population_measured(size, first or size, run, cache, measure_fn,
                                               say)  # fmt: skip
    _choice = {"backend": result[0], "why": result[1], "population": result[2], **figures}
    return result


def _population_measured(size, first, run, cache, measure_fn, say):
    """``((backend, why, size), figures)``: a population of ``first`` (the grid's first still
    to train) against the fastest engine alone, both measured (and cached) on this CPU for
    ``run``'s model; a ``first`` of 1 measures the engines alone only."""
    from pvr_keras import calibration

    common = dict(arguments=run.model_arguments(), metric=run.spec.metric, path=cache,
                  measure_fn=measure_fn, **({"say": say} if say else {}))  # fmt: skip
    alone = calibration.calibrated(run.model, run.width, run.batch_size, **common)
    ms = dict(alone["ms_per_step"])
    figures = {"ms_per_step": ms,
               **{k: alone[k] for k in ("cpu", "cores", "key", "family", "cached")}}  # fmt: skip
    best = min(ms, key=ms.get) if ms else None
    if first == 1 and best:
        return (best, f"--population {size} not used: the first runs still to train share "
                f"their settings with no other (populations of one); one run after another "
                f"on {best}, the fastest alone on this CPU for {alone['family']} "
                f"({ms[best]:.3g} ms/step)", 1), figures  # fmt: skip
    together = calibration.calibrated(run.model, run.width, run.batch_size, population=first,
                                      **common)  # fmt: skip
    pop = together["ms_per_step"].get("jax")
    beside = together["ms_per_step"].get(calibration.ALONE_BESIDE)
    if pop is None or not ms:
        figures["population_ms_per_step"] = pop
        return ("jax", f"--population {size}: a population trains on JAX (not measured: "
                f"{together['errors'] or alone['errors']})", size), figures  # fmt: skip
    left = "" if first == size else f" (the first still to train holds {first} runs)"
    if beside and ms.get("jax"):
        # The population against JAX alone, timed in turns, at the load the engines alone
        # were measured under: a busy machine's load changes between the two measurements.
        ratio, pop = pop / beside, pop / beside * ms["jax"]
        line = (f"a population of {first}{left} measured {ratio:.2f}x jax alone per run's "
                f"step on this CPU (timed in turns), {pop:.3g} ms against {best} alone "
                f"{ms[best]:.3g} ms, for {alone['family']}")  # fmt: skip
    else:
        line = (f"a population of {first}{left} measured {pop:.3g} ms per run's step on "
                f"this CPU, {best} alone {ms[best]:.3g} ms, for {alone['family']}")  # fmt: skip
    figures["population_ms_per_step"] = pop
    if pop < ms[best]:
        return ("jax", f"--population {size}: {line}", size), figures
    return (best, f"--population {size} not used: {line}; the grid trains one run after "
            f"another on {best}", 1), figures  # fmt: skip


def describe(backend, input_source, why):
    """The one line a recipe prints about its engine."""
    return f"engine: Keras on {backend} with {input_source} input ({why})"


def _layers(layer):
    """``layer`` and every layer inside it."""
    yield layer
    for inner in getattr(layer, "layers", ()):
        yield from _layers(inner)


def jit_compile(model):
    """The ``jit_compile`` setting for a compiled ``model`` (see the module docstring):
    True, False, or None to leave Keras's own choice."""
    import keras

    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    if tf.config.list_logical_devices("GPU") or tf.distribute.has_strategy():
        return None
    layers = list(_layers(model))
    if not all(getattr(layer, "supports_jit", True) for layer in layers):
        return None  # a layer XLA cannot compile (Keras's own flag): Keras decides
    conv = (keras.layers.Conv1D, keras.layers.Conv2D, keras.layers.Conv3D)
    return not any(isinstance(layer, conv) for layer in layers)
