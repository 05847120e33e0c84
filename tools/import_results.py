"""Takes committed study records back into a results folder, to go on with a study elsewhere.

    python tools/import_results.py docs/results/holdout_paper RESULTS/token
    python tools/import_results.py docs/results/holdout_paper docs/results/fast_slow_paper \\
        RESULTS/token

tools/export_results.py copies a study's small records (``results.jsonl``, ``sweeps/``) into
``docs/results/<study>`` and leaves models and checkpoints behind. On a fresh machine, or
another one, this puts those records into the results folder a recipe writes to
(``ResultsDir.merge``): the study's finished runs count as recorded, so the sweep skips them
instead of training them again, and the next export keeps them beside the new ones (an export
writes a study from the results folder alone). Records already there are left as they are.
The study's other files (recipe configs ``config_NAME.json``, a recipe's summaries such as
boolean_holdout's ``NAME.{json,csv,png}``) are copied where the results folder has none.

    python tools/import_results.py docs/results/boolean RESULTS/boolean
A recipe step that needs a finished run's model (fast_slow.py's CKA) still needs that run's
folder; the message then names the missing ``model.keras``.
"""

import argparse
import pathlib
import sys

from pvr_keras.errors import DamagedFile, UnsafePath
from pvr_keras.files import parse_json, read_plain

# the results folder's own files (ResultsDir.merge takes in the records and sweeps)
OWN = {"sweep.json", "results.jsonl", "results.corrupt", ".results.lock"}
RUN_MARKERS = ("record.json", "config.json")  # a folder holding one of these is a run's


class BadInput(ValueError):
    """A study or target this tool refuses, before it writes anything (exit 2, one line)."""


def _plain(path):
    """The bytes of ``path``, a plain file (no link, FIFO, device or folder: checked on the
    open file before a byte is read, so nothing blocks)."""
    try:
        return read_plain(path)
    except (DamagedFile, UnsafePath) as error:
        raise BadInput(str(error)) from None


def _json(path, what="a JSON object"):
    try:
        value = parse_json(_plain(path), path)
    except DamagedFile as error:  # not JSON, or nested deeper than any record
        raise BadInput(str(error)) from None
    if not isinstance(value, dict):
        raise BadInput(f"{path} holds a JSON {type(value).__name__}, not {what}")
    return value


def check_study(study):
    """Reads a whole exported study without writing: its folder, manifest, records (whole
    JSON objects with distinct ids, each a finished run's line: the fields every line has,
    of their types, finite numbers within 64 bits, accuracies in [0, 1], counts >= 0,
    ``results.line_problem``) and sweep definitions (run ids and a figure spec that can be
    drawn, ``results.sweep_problem``; runs not recorded yet, of a study in progress, are
    named in one line); no link anywhere in it, no FIFO or device, no JSON nested deeper
    than a record. Raises ``BadInput`` naming the file, the line and the field."""
    from pvr_keras.sweeps.results import line_problem, sweep_problem

    study = pathlib.Path(study)
    if study.is_symlink() or not study.is_dir():
        raise BadInput(f"{study} is not a folder")
    for path in study.rglob("*"):
        if path.is_symlink():
            raise BadInput(f"{path} is a link: a study holds plain files only")
    if not (study / "sweep.json").exists():
        raise BadInput(f"{study} is not an exported study (no sweep.json there)")
    _json(study / "sweep.json")
    ids = set()
    results = study / "results.jsonl"
    if results.exists():
        for number, line in enumerate(_plain(results).splitlines(), 1):
            try:
                record = parse_json(line, f"{results}, line {number}")
            except DamagedFile as error:  # cut, not JSON, or nested deeper than any record
                raise BadInput(str(error)) from None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise BadInput(f"{results}, line {number}, has no run id")
            problem = line_problem(record)  # every field a run's line has; numbers finite
            if problem:
                raise BadInput(f"{results}, line {number} (run {record['id']}): {problem}")
            if record["id"] in ids:
                raise BadInput(f"{results}, line {number}: run {record['id']} is there twice")
            ids.add(record["id"])
    sweeps = study / "sweeps"
    if sweeps.exists() and not sweeps.is_dir():
        raise BadInput(f"{sweeps} is not a folder")
    for path in sorted(sweeps.glob("*.json")) if sweeps.is_dir() else []:
        definition = _json(path, "a sweep definition")
        problem = sweep_problem(definition)  # the rule of make_figures.py's reading too
        if problem:
            raise BadInput(f"{path} is not a sweep definition: {problem}")
        run_ids = definition["run_ids"]
        missing = sorted(set(run_ids) - ids)
        if missing:  # a study in progress: the sweep trains them when it goes on
            print(f"{path}: {len(missing)} of its {len(set(run_ids))} runs not recorded yet "
                  f"(the sweep trains them when it goes on), e.g. {missing[0]}")  # fmt: skip


def check_target(target, studies):
    """The results folder to write: not a file, nothing in it a link, not inside a run
    folder or a study, not a study itself. Raises ``BadInput``."""
    target = pathlib.Path(target)
    absolute = pathlib.Path(target.absolute())
    for folder in [absolute, *absolute.parents]:
        if folder.exists() and not folder.is_dir():
            raise BadInput(f"{folder} is a file, not a folder")
        if folder != absolute and any((folder / m).is_file() for m in RUN_MARKERS):
            raise BadInput(f"{target} is inside a run folder ({folder}): use a folder of its own")
    inside = [target / name for name in ("sweeps", *OWN)]
    inside += sorted((target / "sweeps").glob("*")) if (target / "sweeps").is_dir() else []
    for path in inside:
        if path.is_symlink():
            raise BadInput(f"{path} is a link: the results folder writes through none")
    for study in studies:
        study = pathlib.Path(study).resolve()
        real = absolute.resolve()
        if real == study or study in real.parents:
            raise BadInput(f"cannot import {study} into itself or a folder inside it")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="+", help="exported study folders (docs/results/NAME)")
    parser.add_argument("results", help="the results folder to take them into (created)")
    args = parser.parse_args(argv)
    for study in args.studies:  # everything is read and checked before anything is written
        check_study(study)
    check_target(args.results, args.studies)
    from pvr_keras import files
    from pvr_keras.sweeps import ResultsDir

    target = ResultsDir(args.results, create=True)
    for study in args.studies:
        added, names = target.merge(study)
        for file in sorted(pathlib.Path(study).iterdir()):
            if file.is_file() and file.name not in OWN and not (target.path / file.name).exists():
                files.write_bytes(target.path / file.name, _plain(file))
        print(f"{study}: {added} record(s) added, sweeps {', '.join(names) or 'none'} -> "
              f"{target.path}")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except (BadInput, ValueError, OSError) as error:
        print(f"import_results: error: {error}", file=sys.stderr)
        sys.exit(2)
