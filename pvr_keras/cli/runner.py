"""The recipe runner: a recipe's command line parsed and checked, its output folder and config
written, the backend and devices set up, then its body; and a script's exit status."""

import dataclasses
import errno
import importlib.util
import os
import pathlib
import sys
from collections.abc import Callable

from pvr_keras import kinds
from pvr_keras.cli.checks import check_finite, check_task, check_tensorboard, flag
from pvr_keras.cli.flags import dataclass_fields, defaults_of, parse_flags, run_fields
from pvr_keras.cli.folders import (
    check_config,
    check_out_folder,
    config_of,
    format_out,
    make_out_folder,
    sweeps_manifest_compatible,
    to_dict,
    write_config,
)
from pvr_keras.cli.model_flags import PREFIX, builder_fields, split_model_values
from pvr_keras.errors import (
    ConfigError,
    DamagedFile,
    DataNotPrepared,
    DiskFull,
    RunBusy,
    UnsafePath,
)
from pvr_keras.launch import Detached, DryRun, JobDone, JobsFailed
from pvr_keras.launch import flags as launch_flags
from pvr_keras.launch.flags import Launch
from pvr_keras.runconfig import Run, section_fields

FAILED_RUN = 3  # exit status of a run that finished but failed by the paper's rule


def say_epochs(run):
    """One line when the recipe's rules train other epochs than ``--epochs`` asks (a tiny
    training set runs more, to reach ``min_steps``)."""
    epochs = run.train.num_epochs(run.num_examples)
    if epochs != run.epochs:
        steps = run.train.steps_per_epoch(run.num_examples)
        print(
            f"training {epochs} epochs, not --epochs {run.epochs}: --min-steps "
            f"{run.min_steps} needs {epochs} epochs of {steps} steps ({run.num_examples} "
            f"examples at batch {run.batch_size})",
            flush=True,
        )


def _needs_tensorflow(what):
    return (
        f"{what} needs TensorFlow, which is not installed here: install it, or train on JAX "
        "with --backend jax --input device"
    )


def start(backend=None, *, input_source=None, kind=None, run=None, population=1, first=None):
    """Prepares the process for a recipe's work, after its config is checked: the Keras
    backend (the one named, else the measured-fastest for ``run``'s model on this machine:
    ``engines.choose``, which may measure it first, in worker processes; JAX for a
    ``population`` above 1 where it measures faster, as a population of ``first``, the size
    of ``run``'s, the first still to train), TensorFlow imported without its C++ start-up lines
    (``TF_CPP_MIN_LOG_LEVEL`` below 2 keeps them), and one line saying which engine and input
    train and why. Returns the backend."""
    from pvr_keras import compat, engines

    if population > 1:
        backend, why, population = check_task(
            lambda: engines.choose_population(population, backend, first=first, run=run)
        )
    else:
        backend, why = engines.choose(backend, run=run)
    os.environ["KERAS_BACKEND"] = backend
    have_tf = importlib.util.find_spec("tensorflow") is not None
    if have_tf:
        compat.import_tensorflow_quietly()
    elif backend == "tensorflow":
        raise SystemExit(_needs_tensorflow("the TensorFlow backend"))
    from pvr_keras.training.inputs import default_input

    source = input_source or default_input(kind)
    if not have_tf and source != "device":
        raise SystemExit(_needs_tensorflow(f"the {source} input"))
    print(engines.describe(backend, source, why), flush=True)
    return backend


def population_size(asked):
    """The population size a grid trains with: ``asked`` (``--population``), or 1 where
    ``start`` measured a population slower than one run after another on this machine."""
    from pvr_keras import engines

    chosen = engines.choice() or {}
    return chosen.get("population", 1) if asked > 1 else 1


def callbacks(tensorboard, out):
    """The Keras callbacks a recipe's flags ask for (``--tensorboard``)."""
    if not tensorboard:
        return []
    import keras

    return [keras.callbacks.TensorBoard(log_dir=str(pathlib.Path(out) / "tensorboard"))]


# Grid axes vary in this order, the first slowest: a whole seed finishes early.
AXIS_ORDER = ("seed", "model")


@dataclasses.dataclass(frozen=True)
class Parsed:
    """A parsed command line: the run (the first of the grid), the recipe's own fields, the
    flags given, the preset's name, ``axes``: ``{field: values}`` of the run fields given
    (or preset) several values, one run each (``runs()``), and where they train
    (``launch``)."""

    run: Run
    own: object
    given: dict
    preset: str
    axes: dict = dataclasses.field(default_factory=dict)
    # Where the runs train (``--launcher``; ``pvr_keras.launch``), the command line without
    # the launcher's flags (a job's own) and the recipe's file.
    launch: Launch = Launch()
    argv: tuple = ()
    script: str = ""

    def runs(self):
        """Every run of the grid (the one run when no field has several values), checked."""
        if not self.axes:
            return [self.run]
        from pvr_keras.sweeps import expand

        return check_task(lambda: expand(self.axes, self.run))


@dataclasses.dataclass(frozen=True)
class Context:
    """What a recipe's body gets: the checked run, the recipe's own fields, the output
    folder, the input, the device placement and the run's title (``Command.title``)."""

    run: Run
    own: object
    out: pathlib.Path
    input: str
    placement: object
    title: str = ""

    def callbacks(self, out=None):
        return callbacks(self.run.system.tensorboard, out or self.out)


def train_one(ctx):
    """The body of a recipe that trains one run: ``training.runs.run`` into ``ctx.out`` with
    a progress bar (one line per epoch when not on a terminal), then one summary line."""
    from pvr_keras.training import runs

    title = ctx.title or ctx.run.run_id
    record = runs.run(
        ctx.run, ctx.out, input=ctx.input, verbose="auto", distribution=ctx.placement,
        callbacks=ctx.callbacks(), title=title,
    )  # fmt: skip
    if isinstance(record, runs.Deferred):  # a member of a population (``runs.deferring``)
        return record
    print(f"\n{runs.summary_line(record, title)}\nrecord: {ctx.out}/record.json")
    return record


def _axes(values, fields):
    """``{field: values}`` of the one-value run fields given a tuple, in ``AXIS_ORDER`` then
    the fields' order."""
    found = {
        f.name: values[f.name] for f in fields if f.axis and isinstance(values.get(f.name), tuple)
    }
    first = [name for name in AXIS_ORDER if name in found]
    return {name: found[name] for name in [*first, *(n for n in found if n not in first)]}


def _joined(value):
    return "-".join(map(str, value)) if isinstance(value, tuple) else value


@dataclasses.dataclass(frozen=True)
class Command:
    """The command line of a recipe that trains runs: what its flags are, their presets, and
    the body that trains (see the package docstring).

    Attributes:
        kind: the task kind of its runs.
        presets: ``{name: function(given flags) -> {field: value}}``; the first is the
            default. A value may be a tuple for a one-value field: a grid axis.
        own: the recipe's own dataclass (``out`` and whatever else it needs), with a
            ``validate(run)`` method if it checks something.
        body: ``Context -> result`` (a run record, or a summary dict with ``failed``);
            ``train_one`` (the default) trains the run. None: the recipe drives its runs
            itself (sweeps: ``parse_all``, then ``run_sweep``).
        description: the ``--help`` text (the recipe's docstring).
        exclude: run fields that are not flags of this recipe.
        aliases: ``{older flag: field}`` (``{"--windows": "window"}``), still read.
        title: ``run -> str``, the run's name in the progress bar, plot and summary.
        prepare: prepare the kind's data before writing anything (image kinds).
        placeholders: ``run -> {name: value}``: more ``{name}`` placeholders for ``--out``.
        check_model: build the run's model once before anything is written and check it
            fits the task (``training.runs.check_model``): a builder's fault is one line.
        subruns: the run folders the body writes inside ``--out`` (``block_holdout.py``:
            ``holdout``, ``iid``); any other run found there is refused, and so is a grid.
        script: the recipe's file, which a launched grid's jobs run (default: the file of
            the module that made the ``Command``).
        launches: the launcher's flags (``--launcher``, ``--dry-run``; ``pvr_keras.launch``)
            are flags of this recipe: any recipe that trains runs (a search does not).
    """

    kind: str
    presets: dict
    own: type
    body: Callable | None = train_one
    description: str = ""
    exclude: tuple = ()
    aliases: dict = dataclasses.field(default_factory=dict)
    title: Callable | None = None
    prepare: bool = True
    placeholders: Callable | None = None
    subruns: tuple = ()
    check_model: bool = True
    script: str = ""
    launches: bool = True

    def __post_init__(self):
        if not self.script:  # the recipe that made this command: the first caller outside
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__") == __name__:
                frame = frame.f_back
            found = frame.f_globals.get("__file__", "") if frame is not None else ""
            object.__setattr__(self, "script", os.path.abspath(found) if found else "")

    def fields(self):
        aliases = {k: v for k, v in self.aliases.items() if not v.startswith(PREFIX)}
        return run_fields(self.kind, self.exclude, aliases) + dataclass_fields(self.own)

    def _model_fields(self, values):
        if "model" in self.exclude:
            return []
        models = values.get("model") or "mlp"
        fields = builder_fields(models if isinstance(models, tuple) else (models,), self.kind)
        older = {}
        for old, name in self.aliases.items():
            older.setdefault(name, []).append(old)
        return [dataclasses.replace(f, aliases=tuple(older.get(f.name, ()))) for f in fields]

    def parse(self, argv=None):
        """``(run, own)`` from the command line, checked (no framework imported)."""
        parsed = self.parse_all(argv)
        return parsed.run, parsed.own

    def parse_all(self, argv=None):
        """``Parsed(run, own, given, preset, axes)``, checked (no framework imported)."""
        fields = self.fields()
        defaults = {**Run.make(self.kind).flat(), **defaults_of(self.own)}
        argv = sys.argv[1:] if argv is None else list(argv)
        own_dry_run = "dry_run" in {f.name for f in dataclasses.fields(self.own)}
        launch, rest = launch_flags.of(argv, dry_run=not own_dry_run) if self.launches else (
            Launch(), argv)  # fmt: skip
        preset, values, given = parse_flags(
            fields, self.presets, rest, self.description, defaults, more=self._model_fields,
            extra=(lambda parser: launch_flags.add_flags(parser, dry_run=not own_dry_run,
                                                         help_only=True))
            if self.launches else None,
        )  # fmt: skip
        values, model_args = split_model_values(values)
        for arg, value in model_args.items():  # a builder's list of integers: sizes
            if isinstance(value, tuple) and any(isinstance(v, int) and v < 1 for v in value):
                raise ConfigError(
                    f"--{PREFIX}{arg} must be positive integers; received {list(value)}"
                )
        check_finite(values)
        own_names = {f.name for f in dataclasses.fields(self.own)}
        own = check_task(lambda: self.own(**{k: v for k, v in values.items() if k in own_names}))
        axes = _axes(values, fields)
        run_names = set(section_fields(kinds.kind(self.kind))) - {"kind"}
        run_values = {k: v[0] if k in axes else v for k, v in values.items() if k in run_names}
        if model_args:
            run_values["model_kwargs"] = {**run_values.get("model_kwargs", {}), **model_args}
        run = check_task(lambda: Run.make(self.kind, **run_values))
        if hasattr(own, "validate"):
            own.validate(run)
        check_tensorboard(run.system.tensorboard)
        if getattr(own, "dry_run", False):  # a recipe's own --dry-run
            launch = dataclasses.replace(launch, dry_run=True)
        parsed = Parsed(run, own, given, preset, axes, launch, tuple(rest), self.script)
        parsed.runs()  # every run of a grid is checked here
        return parsed

    def out_folder(self, run, own, axes=None):
        """``--out`` with its placeholders filled in: a run's fields (``{model}`` is the
        builder's name for a reference), the own fields, ``placeholders``; an axis's
        values joined by ``-`` (``w{window}`` is ``w1-2`` for ``--window 1 2``)."""
        values = {**run.flat(), **to_dict(own)}
        for name in ("model", "aggregation"):  # a reference by its name, not its file's path
            if isinstance(values.get(name), str):
                values[name] = values[name].rpartition(":")[2]
        values.update({name: _joined(v) for name, v in (axes or {}).items()})
        if axes and "model" in axes:
            values["model"] = "-".join(m.rpartition(":")[2] for m in axes["model"])
        values.update(self.placeholders(run) if self.placeholders else {})
        return pathlib.Path(format_out(own.out, values))

    def main(self, argv=None):
        parsed = self.parse_all(argv)
        run, own = parsed.run, parsed.own
        if parsed.axes and self.subruns:
            raise ConfigError(
                f"several values of {', '.join(flag(n) for n in parsed.axes)} ask for a grid; "
                f"this recipe trains {len(self.subruns)} runs per configuration: give one value"
            )
        out = self.out_folder(run, own, parsed.axes)
        check_out_folder(out, sweep=bool(parsed.axes), own=self.subruns)
        launch = _check_launch(parsed, out)
        if launch.dry_run or launch.remote:  # the grid's cost, or its jobs: nothing runs here
            if not parsed.axes:
                return _one_run_only(run, launch, len(self.subruns) or 1)
            else:
                parsed = dataclasses.replace(parsed, own=dataclasses.replace(own, out=str(out)))
                try:
                    summary = run_sweep(parsed, parsed.runs(), name="grid", figure=None)
                except DryRun as done:
                    return {**done.summary, "failed": False}
                if not launch.dry_run:
                    print(f"[grid] {summary['total']} runs, {len(summary['failed_runs'])} "
                          f"failed; results: {out}/results.jsonl")  # fmt: skip
                return {**summary, "failed": bool(summary.get("failed_runs"))}
        if not parsed.axes:  # another run's folder (or a config that is no file): before any work
            check_config(out, run, own)
        for one in parsed.runs()[:1] if parsed.axes else [run]:
            say_epochs(one)
        if run.system.population > 1 and not parsed.axes:
            print(f"--population {run.system.population}: one run here (a grid is a flag given "
                  f"several values); it trains alone", flush=True)  # fmt: skip
            run = run.replace(population=1)
        # The engine is measured for the run's model (a grid's first run still to train), as
        # a population of the size that run's has
        size = run.system.population if parsed.axes else 1
        pending = _pending(out, _mine(parsed.runs())) if parsed.axes else [run]
        backend = start(run.system.backend, input_source=run.system.input, kind=run.kind,
                        run=pending[0] if pending else run, population=size,
                        first=_first_population(pending, size))  # fmt: skip
        _say_unmeasured(pending, pending[0] if pending else run)
        # The config records the engine that trains (and the population it trains in).
        engine = {"backend": backend, "population": population_size(size)}
        run = run.replace(**engine)
        from pvr_keras.training import distribute
        from pvr_keras.training.inputs import check_input, default_input

        source = check_task(lambda: check_input(run.system.input or default_input(run.kind)))
        # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
        placement = distribute.setup(run.system.devices)
        runs = [r.replace(**engine) for r in parsed.runs()]
        if self.check_model:
            from pvr_keras.training.runs import check_model

            # The builder runs once per model here, before any file is written.
            for one in {(r.model, r.width, repr(r.model_kwargs)): r for r in runs}.values():
                check_model(one)
        if self.prepare:
            # Data first: a machine that cannot get it fails here, before anything is written.
            run.spec.prepare_data(run.task, run.system.data_dir, download=run.system.download)
        if not parsed.axes:
            make_out_folder(out)
            write_config(out, run, own)  # refuses a folder of another run, untouched
            return self.body(self._context(run, own, out, source, placement))

        failed = []

        def trainer(one, run_dir):
            record = self.body(self._context(one, own, run_dir, source, placement))
            if exit_status(record):
                failed.append(one.run_id)
            return record

        parsed = dataclasses.replace(parsed, run=run, own=dataclasses.replace(own, out=str(out)))
        summary = run_sweep(parsed, runs, name="grid", figure=None, trainer=trainer, started=True)
        failed = sorted(set(failed) | set(summary["failed_runs"]))
        print(f"[grid] {len(runs)} runs, {len(failed)} failed; results: {out}/results.jsonl")
        return {**summary, "failed": bool(failed)}

    def _context(self, run, own, out, source, placement):
        title = self.title(run) if self.title else run.run_id
        return Context(run, own, pathlib.Path(out), source, placement, title)


def exit_status(result):
    """0, or ``FAILED_RUN`` when ``result`` (a run record or a recipe's summary dict) says
    the run failed."""
    return FAILED_RUN if isinstance(result, dict) and result.get("failed") else 0


# What the file system answers about a path the user gave (a name too long, a read-only or
# unwritable folder, a file where a folder goes, a FIFO or folder where a file goes): one line.
PATH_ERRORS = (errno.ENAMETOOLONG, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR,
               errno.EISDIR, errno.ELOOP, errno.ENXIO, errno.ENOSPC, errno.EFBIG,
               errno.EDQUOT)  # fmt: skip


def _path_error(err):
    where = f": {str(err.filename)[:120]}{'...' if len(str(err.filename)) > 120 else ''}"
    return f"{err.strerror or err}{where if err.filename else ''}"


def main(fn):
    """A script's ``__main__``: runs ``fn()`` and exits 0 (done, or a detached grid's jobs
    submitted), 2 (a bad config, or image data that is not prepared and cannot be
    downloaded) or ``FAILED_RUN`` = 3 (the run finished but failed by the paper's rule: NaN
    loss, or final training accuracy below the threshold); a full disk, a folder in use, a
    damaged file, a planted link or a launched grid's failed jobs exits 1 with one line; a
    crash exits 1 as any Python program does."""
    name = pathlib.Path(sys.argv[0]).name
    try:
        result = fn()
    except (ConfigError, DataNotPrepared) as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        sys.exit(2)
    except (DiskFull, UnsafePath, RunBusy, DamagedFile, JobsFailed) as err:  # one line
        print(f"{name}: error: {err}", file=sys.stderr)
        sys.exit(1)
    except OSError as err:
        if err.errno not in PATH_ERRORS:
            raise
        print(f"{name}: error: {_path_error(err)}", file=sys.stderr)  # the file system said no
        sys.exit(1)
    except (Detached, JobDone) as done:  # a detached grid's jobs submitted; a job's runs done
        print(done, flush=True)
        sys.exit(0)
    except DryRun:  # --dry-run printed the grid's cost
        sys.exit(0)
    sys.exit(exit_status(result))


def parse(config_cls, presets, argv=None, description=None):
    """Parses ``argv`` into a checked ``config_cls`` (a recipe whose config is not a run:
    sweeps, searches, analyses): the chosen preset's values with the given flags replacing
    them. ``presets``: ``{name: function(given) -> {field: value}}``; ``config_cls`` may
    have a ``validate()`` method.

    Raises:
        ConfigError: a value the recipe cannot run with.
    """
    fields = dataclass_fields(config_cls)
    _, values, _ = parse_flags(fields, presets, argv, description, defaults_of(config_cls))
    check_finite(values)
    cfg = check_task(lambda: config_cls(**values))
    if hasattr(cfg, "validate"):
        cfg.validate()
    check_tensorboard(getattr(cfg, "tensorboard", False))
    return cfg


def _pending(out, runs):
    """The runs of ``runs`` not yet recorded in the results folder ``out`` (all of them where
    it holds no results yet, or results this version cannot read: ``run_sweep`` says so)."""
    from pvr_keras import sweeps

    try:
        recorded = sweeps.ResultsDir(out).recorded_ids()
    except (FileNotFoundError, NotADirectoryError, sweeps.IncompatibleResultsError):
        return list(runs)
    return [one for one in runs if one.run_id not in recorded]


def _say_unmeasured(pending, measured):
    """One line where the engine was measured for ``measured``'s model and ``pending`` holds
    runs of other models, which train on it too (one process, one backend)."""
    from pvr_keras import engines

    chosen = engines.choice() or {}
    others = sorted({one.model for one in pending} - {measured.model}) if measured else []
    if "family" in chosen and others:
        print(f"engine: measured for {measured.model}, the first run still to train; the "
              f"grid's runs of {', '.join(others)} train on it too, unmeasured (train one "
              f"model at a time to measure each)", flush=True)  # fmt: skip


def _first_population(pending, size):
    """The size of the first population ``pending`` trains in (at most ``size``), None where
    no population (a ``size`` of 1) or nothing is pending."""
    if size <= 1 or not pending:
        return None
    from pvr_keras.training import population

    return len(population.groups(pending, size)[0])


def run_sweep(
    parsed, runs, *, name, figure, describe=None, trainer=None, grows=True, started=False
):
    """The end of a sweep recipe: print the grid's size (and stop there with ``dry_run``),
    start the backend, train every run not yet recorded in ``own.out`` (its shard,
    claiming each run), draw the figures; returns the sweep's summary (``sweeps.run_sweep``).

    ``parsed.own`` has ``out`` and may have ``shard``, ``claims`` (default on), ``figures``
    and ``dry_run`` (default off). With
    ``grows`` a sweep started again with a larger grid under the same name grows (its
    ``config_<name>.json`` follows); without, another configuration there is refused.
    ``started``: the backend is set up already (``Command.main``'s grids).
    """
    own = parsed.own
    print(f"[{name}] {len(runs)} runs" + (f": {describe(runs)}" if describe else ""))
    launch = _check_launch(parsed, own.out)
    if launch.dry_run:
        from pvr_keras.launch import cost

        found = cost.estimate(runs, _recorded(own.out))
        for line in cost.describe(found, parallel=launch.array_parallelism):
            print(f"[{name}] {line}")
        summary = {"total": len(runs), "runs": runs, "cost": found}
        if hasattr(own, "dry_run"):  # the recipe's own --dry-run: it returns the summary
            return summary
        raise DryRun(summary)  # the recipe's analyses after the grid have nothing to read
    check_out_folder(own.out, sweep=True)
    check_task(lambda: sweeps_manifest_compatible(own.out))
    if launch.remote:
        return _launched(parsed, runs, name, figure, grows)
    run = parsed.run
    job = _job()
    if not started:
        # the engine is measured for the grid's first run still to train: the base run's
        # model (the kind's default) may be in no run of the grid (a study's variants name
        # their models), and a grid whose runs are all recorded trains nothing to measure for
        # (a launched job: of its own runs)
        pending = _pending(own.out, _mine(runs))
        measured = pending[0] if pending else (None if runs else run)
        # ... as a population of the size its first population has (two seeds left: 2)
        first = _first_population(pending, run.system.population)
        backend = start(run.system.backend, input_source=run.system.input, kind=run.kind,
                        run=measured, population=run.system.population, first=first)  # fmt: skip
        _say_unmeasured(pending, measured)
        engine = {"backend": backend, "population": population_size(run.system.population)}
        run = run.replace(**engine)
        parsed = dataclasses.replace(parsed, run=run)
        runs = [one.replace(**engine) for one in runs]
    size = population_size(run.system.population)
    if size > 1:  # a population too large for memory: refused before any file is written
        from pvr_keras.training import population

        check_task(lambda: population.check_grid(runs, size))
    make_out_folder(own.out)
    from pvr_keras import sweeps

    shard_index, shard_count = sweeps.parse_shard(getattr(own, "shard", "0/1"))
    sweeps.ResultsDir(own.out, create=True)  # an incompatible folder fails here, untouched
    # The sweep's latest config: a results directory grows with every grid run into it.
    write_config(
        own.out, parsed.run, own, name=f"config_{name}.json", compare=not grows,
        grid=parsed.axes,
    )  # fmt: skip
    if figure and figure.get("discard_below") is not None:
        print(
            f"[{name}] note: as in the paper's Figure 14, runs whose final training accuracy "
            f"is below {figure['discard_below']:.0%} are discarded from the figure's means "
            f"(drawn as open circles, kept in results.jsonl)"
        )
    summary = sweeps.run_sweep(
        runs, own.out, name=name, figure=figure, shard_index=shard_index,
        shard_count=shard_count, claims=getattr(own, "claims", True) or job is not None,
        population=size, only=None if job is None else set(job["runs"]),
        wait=job is not None, **({"trainer": trainer} if trainer else {}),
    )  # fmt: skip
    summary["config"] = config_of(parsed.run, own, parsed.axes)  # as config_<name>.json has it
    if summary["busy"]:
        print(f"[{name}] {len(summary['busy'])} runs are being trained by other workers")
    if job is not None:  # the submitting command draws the figures and analyses the grid
        raise JobDone(f"[{name}] job {job.get('job')}: {len(summary['trained'])} of "
                      f"{len(job['runs'])} runs recorded by this job")  # fmt: skip
    if getattr(own, "figures", False):
        sweeps.make_figures(own.out, only=[name])
    return summary


def _job():
    """The launched job this process trains for (``training.records.this_job``), or None."""
    from pvr_keras.training.records import this_job

    return check_task(this_job)


def _mine(runs):
    """The runs of ``runs`` this process trains: all of them, or a launched job's own (each
    of which must be in the grid: a job of another grid is refused)."""
    job = _job()
    if job is None:
        return list(runs)
    ids = {run.run_id for run in runs}
    strange = [r for r in job["runs"] if r not in ids]
    if strange:
        raise ConfigError(
            f"this job's runs {strange[:3]} are not in this command's grid: the recipe or its "
            f"flags changed since the job was submitted; submit the grid again"
        )
    return [run for run in runs if run.run_id in set(job["runs"])]


def _check_launch(parsed, out):
    """The grid's ``Launch``, checked before anything is written or submitted."""
    launch = parsed.launch
    if launch.remote and _job() is not None:
        raise ConfigError(f"a launched job trains its runs where it runs; its command line "
                          f"names --launcher {launch.launcher} again")  # fmt: skip
    if launch.remote and not parsed.script:
        raise ConfigError(f"--launcher {launch.launcher} runs the recipe's file in each job; "
                          f"this command was made by no file")  # fmt: skip
    check_task(lambda: launch_flags.check(launch, out, full=not launch.dry_run))
    return launch


def _one_run_only(run, launch, count=1):
    """A command of one configuration (``count`` runs of its size, ``Command.subruns``): its
    cost (``--dry-run``); a launcher is refused."""
    if launch.remote:
        raise ConfigError(
            f"--launcher {launch.launcher} trains a grid (a run flag given several values, "
            f"such as --seed 0 1) as jobs; this command trains one run: run it here, or in a "
            f"job script of your cluster"
        )
    from pvr_keras.launch import cost

    found = cost.estimate([run] * count)
    for line in cost.describe(found):
        print(line)
    return {"failed": False, "cost": found}


def _recorded(out):
    """The run ids recorded in the results folder ``out`` (none where there is none yet)."""
    from pvr_keras import sweeps

    try:
        return sweeps.ResultsDir(out).recorded_ids()
    except (FileNotFoundError, NotADirectoryError, sweeps.IncompatibleResultsError):
        return set()


def _launched(parsed, runs, name, figure, grows):
    """A grid's runs as jobs of ``parsed.launch`` (``pvr_keras.launch``): the results folder
    and config written here, each run not yet recorded submitted (in populations of
    ``--population``, which each worker measures), watched until recorded; returns the
    summary ``sweeps.run_sweep`` returns.

    Raises:
        launch.Detached: ``--submitit.detach``, once submitted.
        launch.JobsFailed: jobs ended without recording their runs (the others went on).
    """
    from pvr_keras import sweeps
    from pvr_keras.launch import JobsFailed, launch_grid

    own, run, launch = parsed.own, parsed.run, parsed.launch
    make_out_folder(own.out)
    results = sweeps.ResultsDir(own.out, create=True)
    write_config(own.out, run, own, name=f"config_{name}.json", compare=not grows,
                 grid=parsed.axes)  # fmt: skip
    unique = sweeps.unique(runs)
    results.write_sweep(name, {"name": name, "figure": figure,
                               "run_ids": [one.run_id for one in unique]})  # fmt: skip
    shard_index, shard_count = sweeps.parse_shard(getattr(own, "shard", "0/1"))
    mine = sweeps.shard(unique, shard_index, shard_count)
    recorded = results.recorded_ids()
    todo = [one for one in mine if one.run_id not in recorded]
    print(f"[{name}] {len(unique)} runs in the grid; {len(mine) - len(todo)} already "
          f"recorded, {len(todo)} to run as {launch.launcher} jobs -> {results.path}")  # fmt: skip
    progress = sweeps.engine.Progress(name, len(mine), len(mine) - len(todo), todo, print)
    trained, failed_jobs = launch_grid(
        unique, mine, results, name=name, launch=launch, script=parsed.script,
        argv=parsed.argv, population=run.system.population, progress=progress,
    )  # fmt: skip
    lines = {line["id"]: line for line in results.read()[0]}
    summary = {
        "total": len(unique), "shard": len(mine), "recorded_before": len(mine) - len(todo),
        "trained": trained, "busy": [], "problems": [],
        "failed_runs": [r for r in trained if lines.get(r, {}).get("failed")],
        "failed_jobs": failed_jobs, "config": config_of(run, own, parsed.axes),
    }  # fmt: skip
    if getattr(own, "figures", False):
        sweeps.make_figures(own.out, only=[name])
    if failed_jobs:
        lost = [r for job in failed_jobs for r in job["runs"]]
        first = failed_jobs[0]
        raise JobsFailed(
            f"[{name}] {len(lost)} runs not recorded, their jobs failed: {', '.join(lost)} "
            f"(first: job {first['job']}, {first['error']}; log: {first['log']}); the same "
            f"command again submits them again"
        )
    return summary
