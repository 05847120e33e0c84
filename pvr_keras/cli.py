"""Command lines of the recipes: flags made from the run's sections, presets as functions,
checks before TensorFlow loads, and one runner for the start-up every training recipe shares.

A training recipe is a ``Recipe``: the task kind of its runs, its presets and the fields of
its own (``out``, ...)::

    RECIPE = cli.Recipe(kind="token", presets={"quick": quick, "paper": paper},
                        own=Own, description=__doc__, body=train_and_report)

Every field of the kind's runs is a flag (``num_examples`` -> ``--num-examples``; booleans
get ``--x/--no-x``), and so is every field of ``own``. A preset is a plain function from the
flags given on the command line to a dict of field values (so a preset may depend on
``--model``); flags given replace the preset's values (``--preset``, default ``quick``).
``--help`` shows each preset's value of every flag.

``Recipe.main(argv)`` parses, fills ``--out``'s ``{field}`` placeholders, checks the whole
run (task, model and its kind, sizes, recipe) and the recipe's own fields before TensorFlow
is imported or a file is written, sets the Keras backend once, checks the input choice, sets
up the devices (multi-host engines first), prepares the data, writes ``config.json`` (a
folder holding another run is refused, untouched), runs the body and returns its result.
``main(fn)`` is a script's entry point: a bad config is a usage error (exit status 2), a run
that finished but failed by the paper's rule exits with ``FAILED_RUN`` (3), a crash 1.
"""

import argparse
import dataclasses
import json
import math
import os
import pathlib
import re
import sys
import types
import typing
from collections.abc import Callable

from pvr_keras import kinds, legacy
from pvr_keras.errors import (
    ConfigError,
    DamagedFile,
    DataNotPrepared,
    DiskFull,
    RunBusy,
    UnsafePath,
)
from pvr_keras.files import write_text
from pvr_keras.runconfig import SECTIONS, Run, section_fields

FAILED_RUN = 3  # exit status of a run that finished but failed by the paper's rule
NOT_FLAGS = ("kind", "model_kwargs")  # run fields without a flag (fixed, or a dict)


# -- checks -----------------------------------------------------------------------------------


def flag(name):
    return "--" + name.replace("_", "-")


def check_ints(cfg, names, minimum):
    """Each of ``names`` must be an integer >= ``minimum`` (None allowed where optional)."""
    for name in names:
        value = getattr(cfg, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"{flag(name)} must be an integer >= {minimum}; received {value!r}")


def check_positive(cfg, names):
    """Each of ``names`` must be a number > 0 (finite; None allowed where optional)."""
    for name in names:
        value = getattr(cfg, name)
        if value is not None and not value > 0:
            raise ConfigError(f"{flag(name)} must be > 0; received {value!r}")


def check_range(cfg, name, low, high, *, low_open=False):
    """``low <= value <= high`` (``low < value`` with ``low_open``)."""
    value = getattr(cfg, name)
    if not (low < value if low_open else low <= value) or not value <= high:
        bracket = "(" if low_open else "["
        raise ConfigError(f"{flag(name)} must be in {bracket}{low}, {high}]; received {value!r}")


def check_stem(value, flag="--name"):
    """A file-name stem (letters, digits, '_', '.', '-'; not a path), else a ConfigError."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
        raise ConfigError(
            f"{flag} must be letters, digits, '_', '.' or '-' (a file name stem); received "
            f"{value!r}"
        )
    return value


def check_task(build):
    """Runs ``build()`` and turns its ValueError into a ConfigError."""
    try:
        return build()
    except ValueError as err:
        raise ConfigError(str(err)) from None


def check_finite(values):
    """Every float of ``{name: value}`` (tuples too) finite, every tuple non-empty."""
    for name, value in values.items():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{flag(name)} must be a finite number; received {v}")
        if isinstance(value, tuple) and not value:
            raise ConfigError(f"{flag(name)} needs at least one value")


def check_tensorboard(enabled):
    """``--tensorboard`` needs the tensorboard package: a ConfigError naming the extra if not."""
    import importlib.util

    if enabled and importlib.util.find_spec("tensorboard") is None:
        raise ConfigError(
            '--tensorboard needs the tensorboard package: pip install -e ".[tensorboard]"'
        )


# -- flags ------------------------------------------------------------------------------------


def _flag_type(tp):
    """argparse ``type``/``nargs`` for a dataclass field annotation."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):  # Optional[X] / X | None
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _flag_type(args[0])
    if origin is tuple:
        return {"type": _ascii_number(typing.get_args(tp)[0]), "nargs": "+"}
    return {"type": _ascii_number(tp)}


def _ascii_number(kind):
    """``int`` / ``float`` that take ASCII digits only (Python's own read a full-width ``５``
    as 5); other types as they are."""
    if kind not in (int, float):
        return kind

    def convert(text):
        if not text.isascii():
            raise ValueError(f"not an ASCII number: {text!r}")
        return kind(text)

    convert.__name__ = kind.__name__  # argparse: "invalid int value: '５'"
    return convert


def _none_or(kind):
    def convert(text):
        return None if text.lower() == "none" else kind(text)

    convert.__name__ = kind.__name__
    return convert


def _show(value):
    if isinstance(value, tuple | list):
        return " ".join(map(str, value)) if value else "(none)"
    if value is None:
        return "none"
    return str(value)


@dataclasses.dataclass(frozen=True)
class Field:
    """One flag: its field's name, annotation, help and choices, and its flag (``--name``,
    unless the field's metadata names another)."""

    name: str
    type: object
    help: str = ""
    choices: tuple | None = None
    flag: str | None = None


def dataclass_fields(cls, exclude=()):
    """The ``Field`` of every field of a dataclass (flags), but ``exclude``."""
    hints = typing.get_type_hints(cls)
    return [
        Field(
            f.name,
            hints[f.name],
            f.metadata.get("help", ""),
            f.metadata.get("choices"),
            f.metadata.get("flag"),
        )  # fmt: skip
        for f in dataclasses.fields(cls)
        if f.name not in exclude
    ]


def field_of(cls, name, *, default=dataclasses.MISSING, **changes):
    """A recipe field that is field ``name`` of ``cls`` (a run section, a task): its default,
    help and choices, declared once there (``default`` and ``changes`` of its metadata, such
    as ``help`` or ``flag``, replace them). For recipes whose config is not one run
    (analyses, sweeps, searches, the benchmark)."""
    found = next(f for f in dataclasses.fields(cls) if f.name == name)
    if default is not dataclasses.MISSING:
        given = {"default": default}
    elif found.default is not dataclasses.MISSING:
        given = {"default": found.default}
    else:
        given = {"default_factory": found.default_factory}
    metadata = {**found.metadata, **changes, "declared_in": cls.__name__}
    return dataclasses.field(**given, metadata=metadata)


def run_fields(kind, exclude=()):
    """The ``Field`` of every flag of a kind's runs (task, model, data, train, system)."""
    spec = kinds.kind(kind)
    out = dataclass_fields(spec.task, exclude)
    for cls in SECTIONS.values():
        out += dataclass_fields(cls, (*NOT_FLAGS, *exclude))
    return out


def build_parser(fields, preset_values, description=None, *, add_help=True):
    """An ``ArgumentParser`` with ``--preset`` and one flag per ``Field``; each flag's help
    ends with its value in every preset (``(quick: 20; paper: 200)``), or
    ``(default: X)`` when they agree."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=add_help,
    )  # fmt: skip
    presets = list(preset_values)
    parser.add_argument(
        "--preset", choices=presets, default=presets[0],
        help=f"named set of defaults (default: {presets[0]})",
    )  # fmt: skip
    for field in fields:
        shown = {name: _show(values.get(field.name)) for name, values in preset_values.items()}
        if len(set(shown.values())) == 1:
            note = f"(default: {next(iter(shown.values()))})"
        else:
            note = "(" + "; ".join(f"{name}: {value}" for name, value in shown.items()) + ")"
        text = f"{field.help} {note}" if field.help else note
        name = field.flag or flag(field.name)
        if field.type is bool:
            parser.add_argument(
                name, action=argparse.BooleanOptionalAction, default=None, help=text,
                dest=field.name,
            )  # fmt: skip
            continue
        spec = _flag_type(field.type)
        if type(None) in typing.get_args(field.type):
            spec["type"] = _none_or(spec["type"])
        if field.choices:
            spec["choices"] = field.choices
        parser.add_argument(name, default=None, help=text, dest=field.name, **spec)
    return parser


def given_flags(parser, args, fields):
    """``{field: value}`` of the flags given (tuples for lists; ``--x none`` is None)."""
    given = {}
    for field in fields:
        value = getattr(args, field.name)
        if isinstance(value, list):
            if None in value and len(value) > 1:
                parser.error(f"{flag(field.name)}: none must stand alone")
            given[field.name] = None if value == [None] else tuple(value)
        elif value is not None:
            given[field.name] = value
    return given


def defaults_of(cls):
    """``{field: default}`` of a dataclass's fields that have one."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def parse_flags(fields, presets, argv, description=None, defaults=None):
    """``(preset name, values, given)``: ``values`` are ``defaults``, then the chosen
    preset's values, then the given flags (``given``). ``presets``: ``{name: function(given
    flags) -> {field: value}}``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # First pass (no --help): which flags were given, for presets that depend on them.
    quiet = build_parser(fields, {name: {} for name in presets}, add_help=False)
    known, _ = quiet.parse_known_args(argv)
    early = given_flags(quiet, known, fields)
    values = {name: {**(defaults or {}), **preset(early)} for name, preset in presets.items()}
    parser = build_parser(fields, values, description)
    args = parser.parse_args(argv)
    given = given_flags(parser, args, fields)
    trust_given(given)
    return args.preset, {**values[args.preset], **given}, given


def trust_given(given):
    """Every builder or kind reference given on the command line is the user's own code:
    a run folder naming it may import it (``registry.trust``; reading records imports no
    other code)."""
    from pvr_keras import registry

    for value in given.values():
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and registry.is_reference(item):
                registry.trust(item)


# -- recipes ----------------------------------------------------------------------------------


def system_field(name):
    """A recipe field that is the ``system`` section's field ``name`` (its default and help):
    for recipes whose config is not one run (sweeps, searches) yet say how to run."""
    return field_of(SECTIONS["system"], name)


def format_out(template, values):
    """``template`` with its ``{field}`` placeholders filled in from ``values`` (a name:
    an empty one is refused, it would mean the working directory)."""
    try:
        out = template.format(**values)
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(
            f"--out {template!r} names a placeholder that is not a field ({err}); fields: "
            f"{', '.join(values)}"
        ) from None
    if not out.strip():
        raise ConfigError("--out must name a folder; received an empty name")
    return out


# What marks a folder as the library's: a run (its record), a sweep's results, a recipe's
# output (its config).
RUN_MARKERS = ("record.json", "sweep.json", "config.json")


def _owner(folder):
    for marker in RUN_MARKERS:
        if (folder / marker).is_file():
            return marker
    return None


def check_out_folder(out, *, sweep=False, own=()):
    """Refuses an output folder before anything is written: empty, a file, under a file, in
    a folder this user cannot write, inside another run, sweep or recipe folder, above one
    (``own``: the names of the sub-folders the recipe itself writes, e.g. ``holdout``), a
    sweep's results folder for a single run, or a run's folder for a sweep (whose run
    folders live in ``runs/``).

    Raises:
        ConfigError: what is wrong and where.
    """
    text = str(out)
    if not text.strip():
        raise ConfigError("--out must name a folder; received an empty name")
    out = pathlib.Path(text).absolute()
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {text} is a file, not a folder")
    existing = out
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise ConfigError(f"--out {text} is under {parent}, which is a file")
        found = _owner(parent)
        if found is not None:
            what = {"record.json": "a run", "sweep.json": "a sweep's results"}.get(
                found, "a recipe's"
            )
            raise ConfigError(
                f"--out {text} is inside {parent}, {what} folder ({found}): a run there would "
                f"be mixed into it (and removed with it); use a folder of its own"
            )
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {text}: {existing} is not writable by this user")
    if not out.exists():
        return
    mine = _owner(out)
    if sweep and mine in ("record.json", "config.json"):
        raise ConfigError(f"--out {text} is a run's folder ({mine}), not a sweep's results folder")
    if not sweep and mine == "sweep.json":
        raise ConfigError(f"--out {text} is a sweep's results folder, not a run's folder")
    allowed = {out / "runs"} if sweep else {out / name for name in own}
    for marker in RUN_MARKERS:
        for found in out.rglob(marker):
            folder = found.parent
            if folder == out or any(folder == a or a in folder.parents for a in allowed):
                continue
            raise ConfigError(
                f"--out {text} holds another run, sweep or recipe folder ({found}); a run "
                f"there would mix with it: use a folder of its own"
            )


def make_out_folder(out):
    """Creates ``--out`` (and its parents) before any work, or says in one line why it cannot
    be (a ConfigError)."""
    try:
        pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"--out {out} cannot be created: {error.strerror or error}") from None


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


def start(backend=None, *, input_source=None, kind=None):
    """Prepares the process for a recipe's work, after its config is checked: the Keras
    backend (the one named, else the measured-fastest: ``engines.choose``), TensorFlow
    imported without its C++ start-up lines (``TF_CPP_MIN_LOG_LEVEL`` below 2 keeps them),
    and one line saying which engine and input train and why. Returns the backend."""
    from pvr_keras import compat, engines

    backend, why = engines.choose(backend)
    os.environ["KERAS_BACKEND"] = backend
    compat.import_tensorflow_quietly()
    from pvr_keras.training.inputs import default_input

    source = input_source or default_input(kind)
    print(engines.describe(backend, source, why), flush=True)
    return backend


def callbacks(tensorboard, out):
    """The Keras callbacks a recipe's flags ask for (``--tensorboard``)."""
    if not tensorboard:
        return []
    import keras

    return [keras.callbacks.TensorBoard(log_dir=str(pathlib.Path(out) / "tensorboard"))]


def to_dict(config):
    """A JSON-ready dict of a dataclass or dict (tuples become lists, paths strings)."""
    if dataclasses.is_dataclass(config):
        config = dataclasses.asdict(config)
    return json.loads(json.dumps(config, default=str))


def _config(run, own):
    new = {}
    if run is not None:
        new["kind"] = run.kind
        new["run"] = run.to_dict()
        new["system"] = to_dict(run.system)
    if own is not None:
        new["recipe"] = to_dict(own)
    return new


def check_config(out, run=None, own=None, name="config.json", *, may_differ=()):
    """Refuses (``ConfigError``) a folder whose ``name`` holds another configuration than
    ``run`` and ``own`` (system fields, ``out`` and the own fields ``may_differ`` may
    differ); reads only. Returns the config that ``write_config`` would write."""
    path = pathlib.Path(out) / name
    new = _config(run, own)
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ConfigError(f"{path} is not a whole JSON config; use another --out or "
                              f"delete that folder") from None  # fmt: skip
        before, now = legacy.config_identity(old), legacy.config_identity(new)
        differ = {
            k: (before.get(k), now.get(k))
            for k in sorted(set(before) | set(now))
            if before.get(k) != now.get(k) and k not in may_differ
        }
        if differ:
            shown = ", ".join(f"{k}: {a!r} there, {b!r} asked" for k, (a, b) in differ.items())
            raise ConfigError(
                f"{out} holds a run of another configuration ({shown}); use another "
                f"--out or delete that folder"
            )
    return new


def write_config(out, run=None, own=None, name="config.json", *, compare=True, may_differ=()):
    """Writes the run's config (identity and system) and the recipe's own fields as JSON
    into ``out`` (atomically); returns the path.

    A folder whose ``name`` holds another configuration (another run identity or other own
    fields; system fields, ``out`` and the own fields ``may_differ`` may differ) is refused,
    and left untouched (``check_config``).

    Raises:
        ConfigError: ``out/name`` holds another configuration.
    """
    path = pathlib.Path(out) / name
    if compare:
        new = check_config(out, run, own, name, may_differ=may_differ)
    else:
        new = _config(run, own)
    if path.exists() and json.loads(path.read_text()) == new:
        return path
    write_text(path, json.dumps(new, indent=2) + "\n")
    return path


@dataclasses.dataclass(frozen=True)
class Parsed:
    """A parsed command line: the run, the recipe's own fields, the flags given, the
    preset's name."""

    run: Run
    own: object
    given: dict
    preset: str


@dataclasses.dataclass(frozen=True)
class Context:
    """What a recipe's body gets: the checked run, the recipe's own fields, the output
    folder, the input and the device placement."""

    run: Run
    own: object
    out: pathlib.Path
    input: str
    placement: object

    def callbacks(self, out=None):
        return callbacks(self.run.system.tensorboard, out or self.out)


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A training recipe (see the module docstring).

    Attributes:
        kind: the task kind of its runs.
        presets: ``{name: function(given flags) -> {field: value}}``; the first is the
            default.
        body: ``Context -> result`` (a run record, or a summary dict with ``failed``).
        own: the recipe's own dataclass (``out`` and whatever else it needs), with a
            ``validate(run)`` method if it checks something.
        description: the ``--help`` text (the recipe's docstring).
        exclude: run fields that are not flags of this recipe.
        own_to_run: ``(own, fields) -> fields``: run fields the recipe's own fields set.
        prepare: prepare the kind's data before writing anything (image kinds).
        placeholders: ``run -> {name: value}``: more ``{name}`` placeholders for ``--out``.
        check_model: build the run's model once before anything is written and check it
            fits the task (``training.runs.check_model``): a builder's fault is one line.
        subruns: the run folders the body writes inside ``--out`` (``block_holdout.py``:
            ``holdout``, ``iid``); any other run found there is refused.
    """

    kind: str
    presets: dict
    body: Callable
    own: type
    description: str = ""
    exclude: tuple = ()
    own_to_run: Callable | None = None
    prepare: bool = True
    placeholders: Callable | None = None
    subruns: tuple = ()
    check_model: bool = True

    def fields(self):
        return run_fields(self.kind, self.exclude) + dataclass_fields(self.own)

    def parse(self, argv=None):
        """``(run, own)`` from the command line, checked (no framework imported)."""
        parsed = self.parse_all(argv)
        return parsed.run, parsed.own

    def parse_all(self, argv=None):
        """``Parsed(run, own, given, preset)``: also which flags were given and the preset."""
        fields = self.fields()
        defaults = {**Run.make(self.kind).flat(), **defaults_of(self.own)}
        preset, values, given = parse_flags(fields, self.presets, argv, self.description, defaults)
        own_names = {f.name for f in dataclasses.fields(self.own)}
        check_finite(values)
        own = check_task(lambda: self.own(**{k: v for k, v in values.items() if k in own_names}))
        run_names = set(section_fields(kinds.kind(self.kind))) - {"kind"}
        run_values = {k: v for k, v in values.items() if k in run_names}
        if self.own_to_run is not None:
            run_values = self.own_to_run(own, run_values)
        run = check_task(lambda: Run.make(self.kind, **run_values))
        if hasattr(own, "validate"):
            own.validate(run)
        check_tensorboard(run.system.tensorboard)
        return Parsed(run, own, given, preset)

    def out_folder(self, run, own):
        more = self.placeholders(run) if self.placeholders else {}
        return pathlib.Path(format_out(own.out, {**run.flat(), **to_dict(own), **more}))

    def main(self, argv=None):
        run, own = self.parse(argv)
        out = self.out_folder(run, own)
        check_out_folder(out, own=self.subruns)
        say_epochs(run)
        backend = start(run.system.backend, input_source=run.system.input, kind=run.kind)
        run = run.replace(backend=backend)  # the config records the engine that trains
        from pvr_keras.training import distribute
        from pvr_keras.training.inputs import check_input, default_input

        source = check_task(lambda: check_input(run.system.input or default_input(run.kind)))
        # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
        placement = distribute.setup(run.system.devices)
        if self.check_model:
            from pvr_keras.training.runs import check_model

            check_model(run)  # the builder runs once here, before any file is written
        spec = run.spec
        if self.prepare:
            # Data first: a machine that cannot get it fails here, before anything is written.
            spec.prepare_data(run.task, run.system.data_dir, download=run.system.download)
        make_out_folder(out)
        write_config(out, run, own)  # refuses a folder of another run, untouched
        return self.body(Context(run, own, out, source, placement))


def exit_status(result):
    """0, or ``FAILED_RUN`` when ``result`` (a run record or a recipe's summary dict) says
    the run failed."""
    return FAILED_RUN if isinstance(result, dict) and result.get("failed") else 0


def main(fn):
    """A script's ``__main__``: runs ``fn()`` and exits 0 (done), 2 (a bad config, or image
    data that is not prepared and cannot be downloaded) or ``FAILED_RUN`` = 3 (the run
    finished but failed by the paper's rule: NaN loss, or final training accuracy below the
    threshold); a full disk, a folder in use, a damaged file or a planted link exits 1 with
    one line; a crash exits 1 as any Python program does."""
    name = pathlib.Path(sys.argv[0]).name
    try:
        result = fn()
    except (ConfigError, DataNotPrepared) as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        sys.exit(2)
    except (DiskFull, UnsafePath, RunBusy, DamagedFile) as err:  # one line, no traceback
        print(f"{name}: error: {err}", file=sys.stderr)
        sys.exit(1)
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


def write(config, out_dir, name="config.json", *, may_differ=()):
    """Writes a (non-run) recipe's config as JSON into ``out_dir``; a folder holding another
    config (fields other than ``may_differ``) is refused, untouched."""
    path = pathlib.Path(out_dir) / name
    new = to_dict(config)
    if path.exists():
        old = json.loads(path.read_text())
        differ = {
            k: (old.get(k), new.get(k))
            for k in sorted(set(old) | set(new))
            if k not in may_differ and old.get(k) != new.get(k)
        }
        if differ:
            shown = ", ".join(f"{k}: {a!r} there, {b!r} asked" for k, (a, b) in differ.items())
            raise ConfigError(
                f"{out_dir} holds a run of another configuration ({shown}); use another "
                f"--out or delete that folder"
            )
        if old == new:
            return path
    write_text(path, json.dumps(new, indent=2) + "\n")
    return path


def sweeps_manifest_compatible(out):
    """An existing results folder of another layout version is refused before any work."""
    from pvr_keras.sweeps.results import MANIFEST, ResultsDir

    if (pathlib.Path(out) / MANIFEST).exists():
        ResultsDir(out)


def run_sweep(parsed, runs, *, name, figure, describe=None, trainer=None, grows=True):
    """The end of a sweep recipe: print the grid's size (and stop there with ``dry_run``),
    start the backend, train every run not yet recorded in ``own.out`` (its shard,
    claiming each run), draw the figures; returns the sweep's summary (``sweeps.run_sweep``).

    ``parsed.own`` has ``out`` and may have ``shard``, ``claims`` (default on), ``figures``
    and ``dry_run`` (default off). With
    ``grows`` a sweep started again with a larger grid under the same name grows (its
    ``config_<name>.json`` follows); without, another configuration there is refused.
    """
    own = parsed.own
    print(f"[{name}] {len(runs)} runs" + (f": {describe(runs)}" if describe else ""))
    if getattr(own, "dry_run", False):
        return {"total": len(runs), "runs": runs}
    check_out_folder(own.out, sweep=True)
    check_task(lambda: sweeps_manifest_compatible(own.out))
    make_out_folder(own.out)
    run = parsed.run
    backend = start(run.system.backend, input_source=run.system.input, kind=run.kind)
    parsed = dataclasses.replace(parsed, run=run.replace(backend=backend))
    from pvr_keras import sweeps

    shard_index, shard_count = sweeps.parse_shard(getattr(own, "shard", "0/1"))
    sweeps.ResultsDir(own.out, create=True)  # an incompatible folder fails here, untouched
    # The sweep's latest config: a results directory grows with every grid run into it.
    write_config(own.out, parsed.run, own, name=f"config_{name}.json", compare=not grows)
    if figure and figure.get("discard_below") is not None:
        print(
            f"[{name}] note: as in the paper's Figure 14, runs whose final training accuracy "
            f"is below {figure['discard_below']:.0%} are discarded from the figure's means "
            f"(drawn as open circles, kept in results.jsonl)"
        )
    summary = sweeps.run_sweep(
        runs, own.out, name=name, figure=figure, shard_index=shard_index,
        shard_count=shard_count, claims=getattr(own, "claims", True),
        **({"trainer": trainer} if trainer else {}),
    )  # fmt: skip
    if summary["busy"]:
        print(f"[{name}] {len(summary['busy'])} runs are being trained by other workers")
    if getattr(own, "figures", False):
        sweeps.make_figures(own.out, only=[name])
    return summary
