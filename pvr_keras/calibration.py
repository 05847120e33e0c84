"""The engine a model trains fastest on, measured on this machine once and cached.

``measure(model, width, batch_size)`` times a few training steps of the model on each
candidate backend (Keras on TensorFlow, with the ``jit_compile`` that
``engines.jit_compile`` gives it, and Keras on JAX), each in a worker process of its own (a
Keras backend is fixed per process), started together, then timed in turns: ``ROUNDS``
calls of ``STEPS`` steps each, the median kept, within ``BUDGET_S`` seconds after the
workers are ready. ``calibrated(...)`` returns the cached figures of this machine for the
model, measuring them first when the cache has none.

The cache (``cache_path()``: ``$PVR_ENGINE_CACHE``, else ``$XDG_CACHE_HOME/pvr_keras/
engines.json``, else ``~/.cache/pvr_keras/engines.json``) holds the figures per machine key
(``machine()``: the CPU model name and vector units, its cores, the versions of keras,
tensorflow, jax, jaxlib and numpy; another CPU or a new version measures again) and per
model's step (``family``: its name, width and batch, the arguments it is built with, so the
task's shape, and the metric it trains for). It is read as untrusted JSON: a damaged,
oversized or foreign file, or one another user owns or others may write, is ignored with a
one-line note (and replaced by the next measurement), never executed; an entry that is not
figures (a number no float holds) is ignored with a note too. It is written whole
(``files.write_text``).

The worker machinery (``Worker`` and ``serve`` here, the timed step in
``training.timing``, whose module each worker runs) is also what ``tools/probes/bench_engines.py``
times its engines with. Nothing here imports Keras or a framework.
"""

import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import pathlib
import platform
import stat
import statistics
import subprocess
import sys
import time

from pvr_keras import files

CANDIDATES = ("tensorflow", "jax")  # the backends the library trains on
STEPS = 4  # training steps per timed call (its marginal time: training.timing)
STEPS_PER_POPULATION_CALL = 4  # a population's steps per timed call (a lax.scan)
ROUNDS = 3  # timed calls per backend (after one that compiles)
BUDGET_S = 40.0  # timed rounds stop after this (at least one is always taken)
FORMAT = "pvr-keras/engine-calibration"
FORMAT_VERSION = 1
MAX_CACHE_BYTES = 1 << 20
VERSIONED = ("keras", "tensorflow", "jax", "jaxlib", "numpy")
PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKER = "pvr_keras.training.timing"  # the worker's module: ``python -m WORKER BACKEND``
ALONE_BESIDE = "jax alone"  # a population's measurement: one run on JAX, timed in turns with it


# ---- the machine and its cache ------------------------------------------------------------


CPUINFO_BYTES = 16 << 20  # /proc/cpuinfo of a machine with hundreds of cores fits


def cpu_name(cpuinfo="/proc/cpuinfo"):
    """The CPU's model name (``/proc/cpuinfo``; else ``platform``'s)."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: not a plain file, not UTF-8
        for line in files.read_plain(cpuinfo, CPUINFO_BYTES).decode().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def vector_units(cpuinfo="/proc/cpuinfo"):
    """The widest vector instructions the CPU has (``avx512``, ``avx2``, ``neon``, ...), from
    its flags: a virtual machine may name a Zen 3 and a Zen 4 alike ("AMD EPYC")."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: not a plain file, not UTF-8
        for line in files.read_plain(cpuinfo, CPUINFO_BYTES).decode().splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("flags", "Features"):
                flags = set(value.split())
                for unit, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"),
                                   ("sve", "sve"), ("neon", "asimd")):  # fmt: skip
                    if flag in flags:
                        return unit
                return "none"
    return platform.machine() or "unknown"


def cores():
    """The cores this process may run on."""
    with contextlib.suppress(AttributeError, OSError):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine():
    """What the figures depend on: ``{"cpu", "vector", "cores", "versions"}``."""
    return {"cpu": cpu_name(), "vector": vector_units(), "cores": cores(),
            "versions": {n: _version(n) for n in VERSIONED}}  # fmt: skip


def machine_key(found):
    """The cache key of a ``machine()``: one readable line."""
    versions = ", ".join(f"{n} {v}" for n, v in found["versions"].items() if v)
    return f"{found['cpu']} ({found['vector']}) | {found['cores']} cores | {versions}"


def family(model, width, batch_size, *, arguments, metric="accuracy", population=1):
    """The cache key of a model's training step, what its cost depends on: the model's name
    (or builder reference), width and batch, the arguments it is built with (``arguments``,
    a run's ``model_arguments()``: the task's shape, such as the sequence length, vocabulary
    and classes, or the input shape or bits, then the width's and ``model_kwargs``), the
    metric it trains for (its loss), and the size of a population (its figure is JAX's time
    per member's step): ``mlp width 1 batch 1024 | num_classes=10 seq_len=11 vocab=10 |
    accuracy``. Caches written before keyed entries by the first three alone (``mlp width 1
    batch 1024``): such an entry matches no key now, so its model is measured again."""
    given = " ".join(f"{k}={_short(v)}" for k, v in sorted(arguments.items()))
    name = f"{model} width {width:g} batch {batch_size} | {given} | {metric}"
    return name if population == 1 else f"{name} | population {population}"


def run_family(run, population=1):
    """``family`` of a ``runconfig.Run``'s model, as its run trains it."""
    return family(run.model, run.width, run.batch_size, arguments=run.model_arguments(),
                  metric=run.spec.metric, population=population)  # fmt: skip


def _short(value):
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def cache_path(environ=None):
    environ = os.environ if environ is None else environ
    if environ.get("PVR_ENGINE_CACHE"):
        return pathlib.Path(environ["PVR_ENGINE_CACHE"])
    base = environ.get("XDG_CACHE_HOME") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(base) / "pvr_keras" / "engines.json"


def _number(value):
    """``value`` as a float if it is a number a float holds (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)  # a 400-digit int: OverflowError
    except OverflowError:
        return None


def _figures(entry):
    """``entry``'s ``{backend: ms}`` if it is one (positive finite numbers of known
    backends), else None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("ms_per_step"), dict):
        return None
    ms = {b: _number(v) for b, v in entry["ms_per_step"].items()}
    if not ms or not all(b in CANDIDATES and v is not None and math.isfinite(v) and v > 0
                         for b, v in ms.items()):  # fmt: skip
        return None
    return ms


def _own(info):
    """Why a cache file of ``os.stat`` ``info`` is not trusted (another user owns it, or
    group or others may write it: anyone could plant figures), or None."""
    if info.st_uid != os.getuid():
        return f"owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _refuse_not_own(info):
    if _own(info):
        raise ValueError(_own(info))


def _read(path):
    """The cache's JSON, if the file is ours (``_own``, checked on the open file before a
    byte is read), else a ValueError saying why."""
    return files.read_json(path, MAX_CACHE_BYTES, check=_refuse_not_own)


def load(path, say=print):
    """The cache at ``path`` as ``{machine key: {family: {"ms_per_step": ...}}}``: empty
    when there is none, and when it is damaged, not a calibration cache, or not ours
    (``_own``), said in one line. Entries that are not figures are dropped (said in one
    line), never used."""
    path = pathlib.Path(path)
    try:
        data = _read(path)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        if data.get("format_version") != FORMAT_VERSION or not isinstance(data.get("machines"),
                                                                          dict):  # fmt: skip
            raise ValueError(f"not a {FORMAT} v{FORMAT_VERSION} file")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        reason = str(error).splitlines()[0][:100] if str(error) else type(error).__name__
        say(f"engine cache {path} ignored ({reason}): measuring again")
        return {}
    found, dropped = {}, 0
    for key, families in data["machines"].items():
        if not isinstance(key, str) or not isinstance(families, dict):
            dropped += 1
            continue
        kept = {f: {"ms_per_step": _figures(e), **{k: e[k] for k in ("measured",)
                                                    if isinstance(e.get(k), str)}}
                for f, e in families.items() if isinstance(f, str) and _figures(e)}  # fmt: skip
        dropped += len(families) - len(kept)
        if kept:
            found[key] = kept
    if dropped:
        say(f"engine cache {path}: {dropped} entries that are not figures ignored (their "
            f"models are measured again)")  # fmt: skip
    return found


def save(path, machines):
    """Writes ``{machine key: {family: entry}}`` to ``path`` whole."""
    data = {"format": FORMAT, "format_version": FORMAT_VERSION, "machines": machines}
    files.write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _say(line):
    print(line, flush=True)


def calibrated(model, width, batch_size, *, arguments, metric="accuracy", path=None,
               measure_fn=None, say=_say, population=1):  # fmt: skip
    """``{"ms_per_step", "cpu", "cores", "key", "family", "cache", "measured", "cached",
    "errors"}`` of ``model`` (built with ``arguments``, trained for ``metric``) on this
    machine: from the cache (its entry ``family``), else measured now (said in one line,
    with how long it took) and cached when every candidate was measured."""
    path = cache_path() if path is None else pathlib.Path(path)
    found_machine = machine()
    key = machine_key(found_machine)
    name = family(model, width, batch_size, arguments=arguments, metric=metric,
                  population=population)  # fmt: skip
    machines = load(path, say)
    entry = machines.get(key, {}).get(name)
    result = {"cpu": found_machine["cpu"], "cores": found_machine["cores"], "key": key,
              "family": name, "cache": str(path)}  # fmt: skip
    if entry is not None:
        return {**result, **entry, "cached": True, "errors": {}}
    which = candidates() if population == 1 else ["jax"]
    say(f"engine: measuring {', '.join(which)} on this machine for {name} "
        f"(once; cached in {path})")  # fmt: skip
    start = time.perf_counter()
    more = {} if population == 1 else {"backends": which, "population": population}
    ms, errors = (measure_fn or measure)(model, arguments, batch_size, metric=metric,
                                         **more)  # fmt: skip
    seconds = time.perf_counter() - start
    say(f"engine: measured in {seconds:.0f} s: " + ", ".join(
        [f"{b} {v:.3g} ms/step" for b, v in ms.items()]
        + [f"{b} failed ({e})" for b, e in errors.items()]))  # fmt: skip
    entry = {"ms_per_step": ms, "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    loaded = busy()
    if loaded is not None:  # timings of a busy machine rank its engines by the others' work
        say(f"engine: not cached: the machine was busy while measuring (load average "
            f"{loaded:.1f} on {cores()} cores); measured again next time")  # fmt: skip
    elif ms and not errors:
        machines.setdefault(key, {})[name] = entry
        try:
            save(path, machines)
        except OSError as error:  # a read-only home: measured again next time
            say(f"engine cache {path} not written ({error})")
    return {**result, **entry, "cached": False, "errors": errors}


def busy():
    """The 1-minute load average when it is above the cores this process may use (other
    work shared the CPU), else None."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return None
    return load if load > cores() else None


def candidates():
    """The candidate backends installed here."""
    return [b for b in CANDIDATES if importlib.util.find_spec(b) is not None]


# ---- the measurement ----------------------------------------------------------------------


def measure(model, arguments, batch_size, *, metric="accuracy", backends=None, steps=STEPS,
            rounds=ROUNDS, budget_s=BUDGET_S, population=1):  # fmt: skip
    """``({backend: median ms per step}, {backend: error})`` of ``steps``-step ``fit`` calls
    of ``model`` (built with ``arguments``) at ``batch_size``, one worker process per
    backend (started together; their first call compiles), timed in turns. With a
    ``population`` above 1 (JAX only): ``"jax"`` is the ms per member's step of a population
    of that size (``training.stacked``), ``STEPS_PER_POPULATION_CALL`` steps a call, and
    ``ALONE_BESIDE`` one run's step on JAX, timed in turns with it: their ratio holds on a
    machine whose load changes between this measurement and the engines' own."""
    backends = list(backends or candidates())
    command = dict(model=model, arguments=arguments, batch=batch_size, steps=steps,
                   metric=metric)  # fmt: skip
    commands = {b: (b, command) for b in backends}  # worker name: (backend, its command)
    if population > 1:
        if backends != ["jax"]:
            raise ValueError(f"a population is measured on jax only; received {backends}")
        together = {**command, "population": population, "steps": STEPS_PER_POPULATION_CALL}
        commands = {"jax": ("jax", together), ALONE_BESIDE: ("jax", command)}
    workers = [Worker(name, [sys.executable, "-m", WORKER, b], env=_worker_env(b))
               for name, (b, _) in commands.items()]  # fmt: skip
    times, errors = {name: [] for name in commands}, {}
    try:
        for worker in workers:  # every worker builds and compiles at once
            worker.send(**commands[worker.name][1])
        for worker in workers:
            answer = worker.receive()
            if "error" in answer:
                errors[worker.name] = answer["error"]
        deadline = time.perf_counter() + budget_s
        for round_ in range(rounds):
            if round_ and time.perf_counter() > deadline:
                break
            for worker in workers:
                if worker.name not in errors:
                    asked = commands[worker.name][1]
                    answer = worker.ask(**asked)
                    if "error" in answer:
                        errors[worker.name] = answer["error"]
                    else:
                        # The worker may take more steps a call for a small model.
                        times[worker.name].append(
                            answer["seconds"] / answer.get("steps", asked["steps"])
                        )
    finally:
        for worker in workers:
            worker.close()
    ms = {b: 1e3 * statistics.median(t) for b, t in times.items() if t and b not in errors}
    return ms, errors


def _worker_env(backend=None):
    """The environment of a worker: this one, with this package importable (and
    ``KERAS_BACKEND`` set to ``backend``, if given)."""
    paths = [str(PACKAGE_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": os.pathsep.join(paths)}
    if backend:
        env["KERAS_BACKEND"] = backend
    return env


class Worker:
    """A worker process (``argv``, serving ``serve``'s protocol), asked one JSON line at a
    time. A worker that has exited answers ``{"error": "the NAME worker exited (code N)"}``
    to every later question, whether its stdin or its stdout closed first."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # start-up lines; a failure comes back as a line
            text=True,
            env=_worker_env() if env is None else env,
        )
        self.dead = None

    def _exited(self):
        if self.dead is None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
            try:
                code = self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                code = self.process.wait()
            self.dead = {"error": f"the {self.name} worker exited (code {code})"}
        return self.dead

    def send(self, **command):
        if self.dead is None:
            try:
                self.process.stdin.write(json.dumps(command) + "\n")
                self.process.stdin.flush()
            except OSError:  # BrokenPipeError: it has exited
                self._exited()

    def receive(self):
        if self.dead is not None:
            return self.dead
        try:
            line = self.process.stdout.readline()
            answer = json.loads(line) if line else None
        except (OSError, ValueError):
            answer = None
        if not isinstance(answer, dict):
            return self._exited()
        return answer

    def ask(self, **command):
        self.send(**command)
        return self.receive()

    def close(self):
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def set_backend(backend):
    """In a worker, before Keras is imported: ``backend`` and quiet TensorFlow."""
    if backend:
        os.environ["KERAS_BACKEND"] = backend
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if backend in ("tensorflow", "torch"):
        from pvr_keras import compat

        compat.import_tensorflow_quietly()


def serve(answer, stdin=None, stdout=None):
    """The worker's loop: one JSON line ``answer(command)`` per JSON line read; an exception
    is answered as ``{"error": "Type: first line"}``."""
    stdout = stdout or sys.stdout
    for line in stdin or sys.stdin:
        try:
            reply = answer(json.loads(line))
        except Exception as error:  # noqa: BLE001 - the parent reports it
            reply = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
                     if str(error) else type(error).__name__}  # fmt: skip
        print(json.dumps(reply), file=stdout, flush=True)
