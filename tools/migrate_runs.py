"""Migrate run folders written before runs had one config to today's records.

    python tools/migrate_runs.py RUNS_OR_RESULTS [...]      # rewrites in place
    python tools/migrate_runs.py docs/results --check       # exit 1 if anything is old

Before the one run config (``pvr_keras.runconfig``), ``token_pvr.py``, ``block_iid.py``,
``block_holdout.py`` and ``image_sequence.py`` stored their whole flat config as a run's
identity, with how it ran (``backend``, ``data_dir``) and its ``--out``; a resumed or reused
run compares that identity, so such a folder would be refused as "another configuration".
This rewrites, under every path given:

- each ``record.json``: ``config`` becomes the run's identity (``legacy.migrate``), the
  record gets its ``kind`` and, where the old config had one, ``system.data_dir``;
- each recipe ``config.json`` / ``config_<name>.json`` of a single run: the flat config
  becomes ``{"kind", "run", "system", "recipe"}`` as ``cli.write_config`` writes it;
- each recipes/gotu.py study (``gotu.json`` with ``config_gotu.json`` beside it) whose
  summary predates its whole config: both files get the config of the grid the summary
  analysed (its first run, variants and seeds), rebuilt by today's recipe and refused unless
  its run ids are the summary's (the run ids themselves never change).

Sweep results (``results.jsonl``) need nothing: token run ids and lines are unchanged. A file
that is current is left as it is (byte for byte); a change is written whole (atomically).
A file that cannot be read, holds JSON of another shape or cannot be written (a read-only
folder) is named and skipped, the others migrated, and the tool ends in one line, exit
status 2; so does a path it cannot read (a name too long).
"""

import argparse
import dataclasses
import json
import os
import pathlib
import sys

SYSTEM = ("backend", "devices", "input", "data_dir", "download", "tensorboard")


def migrate_record(record):
    """The record with today's config and kind (the same dict if it is current)."""
    from pvr_keras import legacy

    config = record.get("config")
    if not isinstance(config, dict) or config.get("test"):  # a test's hand-made config
        return record
    kind = legacy.legacy_kind(config)
    new = legacy.migrate(config)
    if new == config and record.get("kind") == kind:
        return record
    out = {**record, "kind": kind, "config": new}
    if config.get("data_dir") is not None and "system" not in record:
        out["system"] = {"data_dir": config["data_dir"]}
    return out


def migrate_recipe_config(config):
    """A recipe's flat single-run ``config.json`` in today's layout (unchanged if current or
    not a single run's)."""
    from pvr_keras import kinds, legacy
    from pvr_keras.runconfig import section_fields

    if "run" in config or "kind" in config:
        return config
    kind = legacy.legacy_kind(config)
    owner = section_fields(kinds.kind(kind))
    model_fields = ("head", "encoder", "conv_widths", "dim", "widths", "depth")
    run_keys = {k for k in config if k in owner and owner[k] != "system"}
    if kind == "sequence":
        run_keys |= {k for k in model_fields if k in config}
    if "model" not in config and kind != "sequence":
        return config  # not a single run's (a sweep's or a search's config)
    try:
        run = legacy.from_config({k: config[k] for k in run_keys})
    except ValueError:
        return config
    system = {k: config[k] for k in SYSTEM if k in config}
    own = {k: v for k, v in config.items() if k not in run_keys and k not in SYSTEM}
    if kind == "sequence":
        own.update({k: config[k] for k in model_fields if k in config})
    from pvr_keras.runconfig import System

    system = {**dataclasses.asdict(System()), **system}
    return {"kind": run.kind, "run": run.to_dict(), "system": system, "recipe": own}


def migrate_gotu_summary(summary, config):
    """(``gotu.json``, ``config_gotu.json``) of a recipes/gotu.py study whose summary was
    written before it held its grid's whole config (the same objects when it is current):
    both rebuilt from the summary's task, variants and seeds by today's recipe, whose run
    ids must be the summary's (``rebuilt_config``); ``config``'s ``system`` is kept."""
    if "kind" in summary.get("config", {}):
        return summary, config
    import runpy

    # The study's grid (its tasks, variants and their settings) is the recipe's own: its
    # script run as a module, not as a program (no tool is imported this way).
    recipe = runpy.run_path(str(pathlib.Path(__file__).resolve().parents[1] / "recipes" /
                                "gotu.py"), run_name="recipes_gotu")  # fmt: skip
    rebuilt = recipe["rebuilt_config"](summary, config["system"])
    from pvr_keras import cli

    return {**summary, "config": rebuilt}, cli.config_sections(rebuilt)


class Unwritable(OSError):
    """A migrated file that cannot be written (a read-only folder, a full disk)."""


def _write(path, text):
    from pvr_keras import files

    try:
        files.write_text(path, text)
    except OSError as error:
        raise Unwritable(f"cannot write it ({error.strerror or error})") from None


def migrate(paths, *, write=True, log=print):
    """Migrates every run record and recipe config under ``paths``; returns the files that
    were (or, with ``write=False``, would be) changed. A file that cannot be read (or of a
    shape no record has) or written is named and skipped; with any such file it raises
    ValueError at the end, after the others."""
    from pvr_keras import registry
    from pvr_keras.errors import UntrustedCode
    from pvr_keras.files import read_json

    changed, unreadable = [], []
    for root in map(pathlib.Path, paths):
        files = [root] if root.is_file() else sorted(root.rglob("*.json"))
        for path in files:
            is_config = path.name == "config.json" or (
                path.name.startswith("config_") and path.suffix == ".json"
            )
            if path.name == "gotu.json" and (path.parent / "config_gotu.json").is_file():
                try:
                    changed += _migrate_gotu(path, write, log)
                except Unwritable as error:
                    log(f"skipped {path}: {error}")
                    unreadable.append(path)
                except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
                    log(f"skipped {path}: cannot migrate it ({error!r})")
                    unreadable.append(path)
                continue
            if path.name != "record.json" and not is_config:
                continue
            try:
                old = read_json(path)  # a plain file: no link, never waits on a FIFO
                if not isinstance(old, dict):
                    raise ValueError(f"holds a JSON {type(old).__name__}, not an object")
                with registry.reading(path):  # a record never makes this import code
                    new = migrate_recipe_config(old) if is_config else migrate_record(old)
            except UntrustedCode as error:
                log(f"skipped {path}: {error}")
                continue
            except (OSError, ValueError) as error:  # one damaged file stops nothing else
                log(f"skipped {path}: cannot read it ({error})")
                unreadable.append(path)
                continue
            indent = 2 if is_config else 1
            if new is old or new == old:
                continue
            if write:
                try:
                    _write(path, json.dumps(new, indent=indent, default=str) + "\n")
                except Unwritable as error:
                    log(f"skipped {path}: {error}")
                    unreadable.append(path)
                    continue
                log(f"migrated {path}")
            else:
                log(f"needs migrating: {path}")
            changed.append(path)
    if unreadable:
        raise ValueError(
            f"{len(unreadable)} file(s) could not be read or written (named above); the "
            f"others were {'checked' if not write else 'migrated'}"
        )
    return changed


def _migrate_gotu(path, write, log):
    """The files of the gotu study ``path`` (its ``gotu.json``) that change (``write``: are
    rewritten)."""
    from pvr_keras.files import read_json

    beside = path.parent / "config_gotu.json"
    summary, config = read_json(path), read_json(beside)
    for file, found in ((path, summary), (beside, config)):
        if not isinstance(found, dict) or not isinstance(found.get("config", {}), dict):
            raise ValueError(f"{file.name} is not a gotu study's: a JSON object with a config")
    new_summary, new_config = migrate_gotu_summary(summary, config)
    # The config first: a study stopped between the two (a full disk) still has its summary
    # without the whole config, so the next migration writes the summary again.
    changed = [(p, new, indent) for p, old, new, indent in
               [(beside, config, new_config, 2), (path, summary, new_summary, 1)]
               if new != old]  # fmt: skip
    for file, new, indent in changed:
        if write:
            _write(file, json.dumps(new, indent=indent) + "\n")
            log(f"migrated {file}")
        else:
            log(f"needs migrating: {file}")
    return [file for file, _, _ in changed]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run folders, results folders or files")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if old")
    args = parser.parse_args(argv)
    missing = []
    for path in args.paths:
        try:
            os.stat(path)
        except FileNotFoundError:
            missing.append(path)
        except OSError as error:  # a name too long, a path through a file, no permission
            raise ValueError(f"cannot read {path} ({error.strerror})") from None
    if missing:
        raise FileNotFoundError(f"no such path: {', '.join(missing)}")
    changed = migrate(args.paths, write=not args.check)
    print(f"{len(changed)} file(s) {'to migrate' if args.check else 'migrated'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError) as error:  # a path or a file it cannot read
        print(f"migrate_runs: error: {error}", file=sys.stderr)
        sys.exit(2)
