"""The output folder of a recipe: refused before anything is written when it belongs to
another run, sweep or recipe, and the one writer of its ``config.json``."""

import dataclasses
import json
import os
import pathlib

from pvr_keras import legacy, registry
from pvr_keras.errors import ConfigError, DamagedFile, UnsafePath
from pvr_keras.files import parse_json, read_plain, write_text
from pvr_keras.training.checkpoint import Checkpoint

NAME_MAX = 255  # the longest name of one file or folder most file systems take (bytes)


def format_out(template, values):
    """``template`` with its ``{field}`` placeholders filled in from ``values``: a placeholder
    is a field's plain name (no ``.attribute`` or ``[index]``), the result a folder whose
    every name fits a file system (``NAME_MAX`` bytes); an empty one is refused, it would
    mean the working directory."""
    import string

    try:
        parsed = list(string.Formatter().parse(template))
        for _, field, _, _ in parsed:
            if field is not None and field not in values:
                raise KeyError(field)
        out = template.format(**values)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as err:
        raise ConfigError(
            f"--out {template[:200]!r} names a placeholder that is not a field "
            f"({str(err)[:100]}); a placeholder is a field's name, e.g. {{seed}}; fields: "
            f"{', '.join(values)}"
        ) from None
    if not out.strip():
        raise ConfigError("--out must name a folder; received an empty name")
    long = [part for part in pathlib.PurePath(out).parts if len(part.encode()) > NAME_MAX]
    if long:
        raise ConfigError(
            f"--out: the folder name {long[0][:40]}... is {len(long[0].encode())} bytes; a "
            f"file system takes names of at most {NAME_MAX}"
        )
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
    folders live in ``runs/``); for a run, a link or a file where its checkpoint goes.

    Raises:
        ConfigError: what is wrong and where.
        UnsafePath, DamagedFile: a link or a file at ``checkpoint`` (``Checkpoint.check``).
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
    if not sweep:  # a link or a file where the run's checkpoint goes: refused now, not at epoch 1
        Checkpoint(out / "checkpoint").check()
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


def to_dict(config):
    """A JSON-ready dict of a dataclass or dict (tuples become lists, paths strings)."""
    if dataclasses.is_dataclass(config):
        config = dataclasses.asdict(config)
    return json.loads(json.dumps(config, default=str))


CONFIG_SECTIONS = ("kind", "run", "system", "grid", "recipe")  # config_of's, in its order


def config_sections(config):
    """The sections of ``config_of`` that ``config`` holds (a study's summary keeps its own
    fields beside them, such as gotu.json's task and variants)."""
    return {k: config[k] for k in CONFIG_SECTIONS if k in config}


def config_of(run, own, grid=None):
    """What ``write_config`` writes: ``{"kind", "run", "system"}`` of ``run`` (its identity
    and how it runs), ``{"grid"}`` (the axes given several values; ``run`` is the first) and
    ``{"recipe"}`` (``own``'s fields), each where given (``CONFIG_SECTIONS``)."""
    new = {}
    if run is not None:
        new["kind"] = run.kind
        new["run"] = run.to_dict()
        new["system"] = to_dict(run.system)
    if grid:
        new["grid"] = to_dict(grid)  # the axes given several values; "run" is the first
    if own is not None:
        new["recipe"] = to_dict(own)
    return new


def _read(path):
    """The config in ``path``; a link, FIFO, device or folder there (checked before a byte
    is read, so nothing blocks) or a file that is not whole JSON is a ``ConfigError``."""
    try:
        data = read_plain(path)
    except (DamagedFile, UnsafePath) as error:  # the message names the file
        raise ConfigError(f"{error}; use another --out or delete that folder") from None
    try:
        return parse_json(data, path)
    except DamagedFile as error:
        detail = str(error).removeprefix(f"{path} ")  # "nests deeper ...", "is not whole JSON"
        if detail.startswith("is not whole JSON ("):
            detail = detail[len("is not whole JSON (") : -1]
        raise ConfigError(f"{path} is not a whole JSON config ({detail}); use another --out "
                          f"or delete that folder") from None  # fmt: skip


def _refuse_other(path, before, now, may_differ):
    """A ``ConfigError`` naming each field that differs (but ``may_differ``)."""
    differ = {
        k: (before.get(k), now.get(k))
        for k in sorted(set(before) | set(now))
        if before.get(k) != now.get(k) and k not in may_differ
    }
    if differ:
        shown = ", ".join(f"{k}: {a!r} there, {b!r} asked" for k, (a, b) in differ.items())
        raise ConfigError(
            f"{path.parent} holds a run of another configuration ({shown}); use another "
            f"--out or delete that folder"
        )


def check_config(out, run=None, own=None, name="config.json", *, may_differ=(), grid=None):
    """Refuses (``ConfigError``) a folder whose ``name`` holds another configuration than
    ``run`` and ``own`` (system fields, ``out`` and the own fields ``may_differ`` may
    differ); reads only. Returns the config that ``write_config`` would write."""
    path = pathlib.Path(out) / name
    new = config_of(run, own, grid)
    if path.exists():
        with registry.reading(path):  # what the file names is not imported (nor trusted)
            before, now = legacy.config_identity(_read(path)), legacy.config_identity(new)
        _refuse_other(path, before, now, may_differ)
    return new


def _write(path, new):
    """The one writer of a recipe's config: ``new`` as JSON, whole (atomically), unless the
    file already holds exactly it."""
    if path.exists() and _read(path) == new:
        return path
    write_text(path, json.dumps(new, indent=2) + "\n")
    return path


def write_config(
    out, run=None, own=None, name="config.json", *, compare=True, may_differ=(), grid=None
):
    """Writes the run's config (identity and system), a grid's axes (``grid``: ``{field:
    values}``, ``run`` being its first run) and the recipe's own fields as JSON into ``out``
    (atomically); returns the path.

    A folder whose ``name`` holds another configuration (another run identity or other own
    fields; system fields, ``out`` and the own fields ``may_differ`` may differ) is refused,
    and left untouched (``check_config``).

    Raises:
        ConfigError: ``out/name`` holds another configuration.
    """
    path = pathlib.Path(out) / name
    if compare:
        new = check_config(out, run, own, name, may_differ=may_differ, grid=grid)
    else:
        new = config_of(run, own, grid)
    return _write(path, new)


def write(config, out_dir, name="config.json", *, may_differ=()):
    """Writes a (non-run) recipe's config (a dataclass or dict, flat) as JSON into
    ``out_dir``; a folder holding another config (fields other than ``may_differ``) is
    refused, untouched."""
    path = pathlib.Path(out_dir) / name
    new = to_dict(config)
    if path.exists():
        _refuse_other(path, _read(path), new, may_differ)
    return _write(path, new)


def sweeps_manifest_compatible(out):
    """An existing results folder of another layout version is refused before any work."""
    from pvr_keras.sweeps.results import MANIFEST, ResultsDir

    if (pathlib.Path(out) / MANIFEST).exists():
        ResultsDir(out)
