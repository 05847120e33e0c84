"""A sweep's results directory: manifest, one JSON line per finished run, run folders.

Layout::

    RESULTS/sweep.json         manifest: format name and version of this layout
    RESULTS/results.jsonl      one whole JSON object per finished run, keyed by "id":
                               pandas.read_json(RESULTS / "results.jsonl", lines=True)
    RESULTS/sweeps/<name>.json a sweep's definition: its run ids and how to plot it
    RESULTS/runs/<id>/         the run folder of ``training.train`` (record, curves, resume)
    RESULTS/claims/<id>.claim  who is training that run now (see ``claims.py``)

Appends are made under an exclusive lock (``flock`` on ``RESULTS/.results.lock``) that also
covers the check "is this id recorded already?", so two workers never record one run twice.
Each line is written by a single ``os.write`` on an ``O_APPEND`` descriptor and ``fsync``-ed.
A line cut short by a crash is reported by ``read`` and ignored (its run is simply recorded
again on the next start); the next append first ends that fragment with a newline so that it
never swallows a good line, and ``repair`` moves such fragments to ``results.corrupt``.

Every file here is read through ``files.read_plain``: a link, a FIFO or a device in the folder
is refused (``UnsafePath``, ``DamagedFile``), never read through or waited on, and JSON nested
deeper than any record is a bad line (``results.jsonl``) or one error (the others).
"""

import contextlib
import fcntl
import json
import math
import os
import pathlib
import reprlib
import time

from pvr_keras.checks import MAX_INDEX
from pvr_keras.errors import DamagedFile, UnsafePath
from pvr_keras.files import open_file, parse_json, read_json, read_plain, write_text

FORMAT = "pvr-keras/sweep"
FORMAT_VERSION = 1
MANIFEST = "sweep.json"
RESULTS = "results.jsonl"
CORRUPT = "results.corrupt"
LOCK = ".results.lock"


class IncompatibleResultsError(ValueError):
    """The results directory was written by another version of this layout."""


def parse_lines(data):
    """Records and problems of the bytes of a results file.

    Returns:
        ``(records, problems)``: the whole, unique records in file order, and one message per
        line that is not a whole record (truncated, not JSON, no id) or repeats an id.
    """
    records, problems, _ = _parse(data)
    return records, problems


def _parse(data):
    records, problems, bad, seen = [], [], [], set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = parse_json(raw, f"line {number}")
        except DamagedFile as error:  # cut, not JSON, or nested too deeply to be a record
            snippet = raw[:60].decode(errors="replace")
            why = "nested too deeply" if "nests deeper" in str(error) else "truncated"
            problems.append(
                f"line {number}: not a whole JSON record ({why}"
                f"{' by a killed writer?' if why == 'truncated' else ''}), "
                f"ignored: {snippet!r}{'...' if len(raw) > 60 else ''}"
            )
            bad.append(raw)
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            problems.append(f"line {number}: a JSON value without an 'id', ignored")
            bad.append(raw)
            continue
        if record["id"] in seen:
            problems.append(f"line {number}: run {record['id']} recorded twice; first kept")
            bad.append(raw)
            continue
        seen.add(record["id"])
        records.append(record)
    return records, problems, bad


# What every line of results.jsonl holds (``engine.result_line``; older lines too): a field
# and the types its value may have. ``None``: a run with no epoch has no final numbers.
NUMBER = (int, float)
LINE_FIELDS = {
    "id": (str,),
    "sweep": (str,),
    "status": (str,),
    "failed": (bool,),
    "epochs_completed": (int,),
    "wall_time_s": NUMBER,
    "train_accuracy": (*NUMBER, type(None)),
    "test_accuracy": (*NUMBER, type(None)),
    "train_loss": (*NUMBER, type(None)),
    "test_loss": (*NUMBER, type(None)),
}


_JSON_NAMES = {str: "a string", bool: "true or false", int: "a whole number", float: "a number",
               type(None): "null"}  # fmt: skip


# Whole numbers a line holds that count something (a record's fields of its run config and
# its results; fields of other kinds' records are checked as numbers only): none negative.
COUNTS = ("epochs_completed", "num_params", "num_examples", "test_examples",
          "train_eval_examples", "epochs", "warmup_epochs", "min_steps", "batch_size", "seed",
          "curve_epoch")  # fmt: skip
MAX_WHOLE = MAX_INDEX - 1  # a line's whole numbers fit in 64 bits (NumPy, CSV and Parquet readers)


def _scalars(record):
    """``(field, value, listed)`` of every value in ``record`` that is not an object or a
    list: its field (``key.sub`` inside objects) and whether it is an item of a list."""
    stack = [(key, value, False) for key, value in reversed(record.items())]
    while stack:  # iterative: a line is at most MAX_JSON_DEPTH deep (parse_json)
        key, value, listed = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{key}.{k}", v, listed) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((key, v, True) for v in reversed(value))
        else:
            yield key, value, listed


def _shown(value):
    """``value`` for a message: a whole number too long to print by its digits, others by a
    bounded ``repr``."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_WHOLE:
        return f"a whole number of {len(str(abs(value)))} digits"
    return reprlib.repr(value)


def line_problem(record):
    """What is wrong with one results line taken from elsewhere (an exported study), or None.

    A line is a JSON object with every field of ``LINE_FIELDS`` of its type; every number in
    it finite and a whole number within 64 bits, but the losses (``*_loss``,
    ``curve_*_loss``) of a run whose loss became NaN (``status`` "nan", failed), which the
    training loop records as they were; every accuracy (``*accuracy``, and each of a
    ``curve_*_accuracy``) a number in [0, 1] (null for a run without an epoch); every count
    (``COUNTS``) a whole number >= 0; ``wall_time_s`` >= 0. The message names the field.
    """
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not a run record"
    missing = [k for k in LINE_FIELDS if k not in record]
    if missing:
        return f"not a run record: no {', '.join(missing)}"
    for key, types in LINE_FIELDS.items():
        value = record[key]
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            names = [_JSON_NAMES[t] for t in types if not (t is int and float in types)]
            return f"{key} is {_shown(value)}, not {' or '.join(names)}"
    nan_run = record["status"] == "nan" and record["failed"] is True
    for key, value, listed in _scalars(record):
        verb = "holds" if listed else "is"
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and isinstance(value, int) and abs(value) > MAX_WHOLE:
            return f"{key} {verb} {_shown(value)} (a record's whole numbers fit in 64 bits)"
        if isinstance(value, float) and not math.isfinite(value):
            if nan_run and key.endswith("_loss"):
                continue
            return f"{key} {verb} {value} (a finished run's numbers are finite)"
        if key.endswith("accuracy") and (listed or value is not None):
            if not number or not 0 <= value <= 1:
                return f"{key} {verb} {_shown(value)}, not an accuracy in [0, 1]"
        elif key in COUNTS and (listed or value is not None):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return f"{key} {verb} {_shown(value)}, not a count (a whole number >= 0)"
        elif key == "wall_time_s" and value < 0:
            return f"{key} is {_shown(value)}, not a time >= 0"
    return None


SWEEP_KEYS = ("name", "figure", "run_ids")  # a sweep's definition (``write_sweep``)


def sweep_problem(definition):
    """What is wrong with a sweep's definition (``sweeps/<name>.json``) read from a file, or
    None: a JSON object of ``SWEEP_KEYS``, ``run_ids`` a list of run ids (strings), ``name``
    a string, ``figure`` null or a figure spec (``figures.accuracy.spec_problem``). The one
    rule of every reader of sweeps (``read_sweeps``, tools/import_results.py). The message
    names the field."""
    if not isinstance(definition, dict):
        return f"a JSON {type(definition).__name__}, not a JSON object"
    unknown = sorted(set(definition) - set(SWEEP_KEYS))
    if unknown:
        return (f"not a key of a sweep definition: {', '.join(unknown)} (it has "
                f"{', '.join(SWEEP_KEYS)}; the figure's keys go in figure)")  # fmt: skip
    run_ids = definition.get("run_ids")
    if not isinstance(run_ids, list):
        return f"run_ids is {_shown(run_ids)}, not a list of run ids"
    for run_id in run_ids:
        if not isinstance(run_id, str) or not run_id:
            return f"run_ids holds {_shown(run_id)}, not a run id (a string)"
    if not isinstance(definition.get("name", ""), str):
        return f"name is {_shown(definition['name'])}, not a string"
    if definition.get("figure") is not None:
        from pvr_keras.figures.accuracy import spec_problem  # matplotlib's module: lazily

        return spec_problem(definition["figure"], "figure")
    return None


class ResultsDir:
    """Opens (or with ``create=True`` starts) a sweep results directory.

    Raises:
        FileNotFoundError: the directory or its manifest does not exist (and not ``create``).
        IncompatibleResultsError: the manifest names another format or version.

    Example:
        >>> import tempfile
        >>> results = ResultsDir(tempfile.mkdtemp(), create=True)
        >>> results.append({"id": "a", "test_accuracy": 0.5})
        True
        >>> results.append({"id": "a", "test_accuracy": 0.6})  # already recorded
        False
        >>> [r["test_accuracy"] for r in results.read()[0]]
        [0.5]
    """

    def __init__(self, path, *, create=False):
        self.path = pathlib.Path(path)
        self.results = self.path / RESULTS
        self.runs = self.path / "runs"
        self.claims = self.path / "claims"
        self.sweeps = self.path / "sweeps"
        manifest = self.path / MANIFEST
        if create and (self.path / "record.json").exists():
            raise IncompatibleResultsError(
                f"{self.path} is a run's folder (record.json), not a sweep's results folder"
            )
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
            if not manifest.exists():
                self._create_manifest(manifest)
        elif not self.path.is_dir():
            raise FileNotFoundError(f"results directory {self.path} does not exist")
        if not manifest.is_file():
            found = sorted(p.name for p in self.path.iterdir())[:8]
            raise FileNotFoundError(
                f"{self.path} is not a sweep results directory: no {MANIFEST} there "
                f"(found: {', '.join(found) or 'nothing'}). Run a sweep into it first."
            )
        self.manifest = self._check_manifest(manifest)

    def _create_manifest(self, manifest):
        text = json.dumps(
            {"format": FORMAT, "format_version": FORMAT_VERSION, "created": _now()}, indent=1
        )
        tmp = manifest.with_name(f".{MANIFEST}.tmp{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        fd = open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        os.write(fd, (text + "\n").encode())
        os.close(fd)
        try:
            os.link(tmp, manifest)  # fails if another worker created it first: keep theirs
        except FileExistsError:
            pass
        except OSError:  # no hard links on this filesystem: exclusive create instead
            try:
                fd = open_file(manifest, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                pass
            else:
                os.write(fd, (text + "\n").encode())
                os.fsync(fd)
                os.close(fd)
        finally:
            tmp.unlink()

    def _check_manifest(self, manifest):
        data = read_plain(manifest)  # no link, FIFO or device (UnsafePath, DamagedFile)
        try:
            found = parse_json(data, manifest)
        except DamagedFile as error:
            raise IncompatibleResultsError(f"{manifest} is not valid JSON: {error}") from None
        if not isinstance(found, dict):
            found = {}
        if found.get("format") != FORMAT or found.get("format_version") != FORMAT_VERSION:
            raise IncompatibleResultsError(
                f"{self.path} was written by an incompatible version: its {MANIFEST} says "
                f"format {found.get('format')!r} version {found.get('format_version')!r}; this "
                f"code reads {FORMAT!r} version {FORMAT_VERSION}. Use a new results directory "
                f"or the pvr-keras version that wrote it."
            )
        return found

    def run_dir(self, run_id):
        return self.runs / run_id

    @contextlib.contextmanager
    def lock(self):
        """Exclusive lock over the results file across processes (and hosts, on NFS)."""
        fd = open_file(self.path / LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock

    def _read_bytes(self):
        """The bytes of ``results.jsonl`` (none yet: empty); a link, FIFO or folder there is
        refused (``read_plain``)."""
        try:
            return read_plain(self.results)
        except FileNotFoundError:
            return b""

    def read(self):
        """``(records, problems)`` of ``results.jsonl`` (see ``parse_lines``)."""
        return parse_lines(self._read_bytes())

    def recorded_ids(self):
        return {record["id"] for record in self.read()[0]}

    def append(self, record):
        """Appends ``record`` as one line unless its id is recorded; returns True if written."""
        line = json.dumps(record, separators=(",", ":"), default=str).encode() + b"\n"
        if b"\n" in line[:-1]:
            raise ValueError("a record must serialise to one line")
        with self.lock():
            data = self._read_bytes()
            if record["id"] in {r["id"] for r in parse_lines(data)[0]}:
                return False
            if data and not data.endswith(b"\n"):
                line = b"\n" + line  # end a truncated fragment; it stays a bad line of its own
            fd = open_file(self.results, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                written = os.write(fd, line)
                if written != len(line):
                    raise OSError(f"short write to {self.results}: {written} of {len(line)}")
                os.fsync(fd)
            finally:
                os.close(fd)
        return True

    def repair(self):
        """Rewrites ``results.jsonl`` with only its whole, unique records.

        The removed lines are appended to ``results.corrupt`` for inspection.

        Returns:
            The problems found (empty if the file was already clean).
        """
        with self.lock():
            data = self._read_bytes()
            records, problems, bad = _parse(data)
            if problems:
                fd = open_file(self.path / CORRUPT, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                try:
                    os.write(fd, b"\n".join(bad) + b"\n")
                finally:
                    os.close(fd)
                text = "".join(
                    json.dumps(r, separators=(",", ":"), default=str) + "\n" for r in records
                )
                write_text(self.results, text)
        return problems

    def write_sweep(self, name, definition):
        """Stores a sweep's definition (run ids, figure) as ``sweeps/<name>.json``.

        A sweep started again with a larger (or another) grid under the same name grows: its
        run ids become the union, in order, so its figures show every run recorded for it.

        Returns:
            ``(before, after)``: the number of run ids the sweep had before (0 if new) and has
            now.
        """
        path = self.sweeps / f"{name}.json"
        with self.lock():
            before = self._definition(path)["run_ids"] if path.exists() else []
            known = set(before)
            ids = before + [i for i in definition["run_ids"] if i not in known]
            if not path.exists() or ids != before:
                self.sweeps.mkdir(exist_ok=True)
                write_text(path, json.dumps({**definition, "run_ids": ids}, indent=1) + "\n")
        return len(before), len(ids)

    def merge(self, other):
        """Takes in another results directory's records and sweep definitions: a study
        exported elsewhere (``docs/results/<study>``, written by tools/export_results.py)
        taken up here, so that its finished runs are not trained again and a later export
        keeps them. A record whose id is here already is left as it is; each sweep's run ids
        become the union (``write_sweep``). Run folders (models, checkpoints) are not copied.

        Args:
            other: a ``ResultsDir`` or the path of one.

        Returns:
            ``(added, names)``: how many records were added, and the merged sweeps' names.

        Raises:
            ValueError: ``other`` is this directory, or holds lines that are not whole records.
        """
        other = other if isinstance(other, ResultsDir) else ResultsDir(other)
        if other.path.resolve() == self.path.resolve():
            raise ValueError(f"cannot merge {self.path} into itself")
        records, problems = other.read()
        if problems:
            raise ValueError(
                f"{other.results} has {len(problems)} bad line(s), first: {problems[0]}; "
                f"repair it first (ResultsDir.repair)"
            )
        added = sum(self.append(record) for record in records)
        definitions = other.read_sweeps()
        for name, definition in definitions.items():
            self.write_sweep(name, definition)
        return added, sorted(definitions)

    def read_sweeps(self):
        """``{name: definition}`` of the sweeps stored here (``UnsafePath`` for a link in
        ``sweeps/``, ``DamagedFile`` naming the file and the field for a definition that
        ``sweep_problem`` refuses)."""
        if self.sweeps.is_symlink():
            raise UnsafePath(f"{self.sweeps} is a symbolic link; a results folder holds none")
        if not self.sweeps.is_dir():
            return {}
        return {p.stem: self._definition(p) for p in sorted(self.sweeps.glob("*.json"))}

    @staticmethod
    def _definition(path):
        found = read_json(path)
        problem = sweep_problem(found)
        if problem:
            raise DamagedFile(f"{path} is not a sweep definition: {problem}")
        return found


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
