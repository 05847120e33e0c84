"""The committed records of docs/results, read safely (one ``Study`` per folder), and the
helpers every study's table is written with (``markdown_table``, ``as_cell``, ``fit_cell``)."""

import pathlib
import sys

from pvr_keras.files import read_json, read_plain


class Study:
    """The committed records of one study folder of docs/results.

    Every file is read inside ``results`` (``files.read_plain``): a study named ``../x`` or
    reached through a link, or a file that is a link, a FIFO or a device, is refused, so a
    value marker reads nothing outside docs/results."""

    def __init__(self, results, name):
        self.name = name
        self.root = pathlib.Path(results)
        self.path = self.root / name
        if not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: no such study (run tools/export_results.py)")
        self.lines = study_records(self.path, inside=self.root)
        self._files = {}

    def runs(self, **where):
        """The records whose fields equal ``where`` (at least one, else LookupError)."""
        found = [r for r in self.lines if all(r.get(k) == v for k, v in where.items())]
        if not found:
            raise LookupError(f"{self.name}: no record with {where}")
        return found

    def one(self, **where):
        found = self.runs(**where)
        if len(found) != 1:
            raise LookupError(f"{self.name}: {len(found)} records with {where}, expected 1")
        return found[0]

    def json(self, name):
        """The JSON file ``name`` of the study, read once (the tables and markers ask for the
        same summaries many times; nothing here changes what it gets)."""
        if name not in self._files:
            self._files[name] = read_json(self.path / name, inside=self.root)
        return self._files[name]

    def sweep(self, name):
        """The records of one sweep of the study, in its order."""
        ids = self.json(f"sweeps/{name}.json")["run_ids"]
        by_id = {r["id"]: r for r in self.lines}
        return [by_id[i] for i in ids]


class _Lazy(dict):
    def __init__(self, results):
        super().__init__()
        self.results = pathlib.Path(results)

    def __missing__(self, name):
        self[name] = Study(self.results, name)
        return self[name]

    def json(self, relative):
        """The JSON file ``relative`` of docs/results, read inside it (see ``Study``)."""
        return read_json(self.results / relative, inside=self.results)


def studies(results):
    """The studies of ``results`` (docs/results), each read when first used."""
    return _Lazy(results)


def as_cell(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows]) + "\n"


def study_json(study, *names):
    """The JSON file ``study/names...``, read inside the results folder that holds the study:
    no link at the study, on the way or at the file, no FIFO or device (``files.read_plain``),
    whole JSON nested no deeper than a record (else one line naming the file)."""
    return read_json(study.joinpath(*names), inside=study.parent)


def study_records(study, inside=None):
    """The whole records of a study's ``results.jsonl`` (the sweeps' own reader: a cut or
    repeated line is reported on standard error and left out), read inside ``inside``
    (default: the folder that holds the study; see ``study_json``)."""
    from pvr_keras.sweeps.results import parse_lines

    path = study / "results.jsonl"
    try:
        data = read_plain(path, inside=study.parent if inside is None else inside)
    except FileNotFoundError:
        return []
    records, problems = parse_lines(data)
    for problem in problems:
        print(f"results_tables: {path}: {problem}", file=sys.stderr)
    return records


def fit_cell(record):
    from pvr_keras.analysis.dynamics import fit_epoch

    return fit_epoch(record.get("curve_train_eval_accuracy") or []) or "never"
