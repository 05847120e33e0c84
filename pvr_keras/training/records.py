"""Run records: one self-describing JSON per run, and its per-epoch history as CSV.

Layout of a run folder::

    record.json        everything about the run (config, recipe, backend, devices, versions,
                       seed, history, final metrics, failed flag, wall time, resumes; and
                       ``population``: size, member index and engine, for a run trained in a
                       population, ``training.population``)
    history.csv        one row per completed epoch: pandas.read_csv(path)
    learning_curve.png train/test accuracy and loss per epoch
    checkpoint/        resume state while the run is unfinished

Files are replaced atomically (write to a temporary name, then ``os.replace``), so a run
killed at any moment never leaves a half-written record.
"""

import csv
import io
import json
import os
import pathlib
import platform
import socket
import sys
import time

from pvr_keras.errors import ConfigError, DamagedFile
from pvr_keras.files import Lock, parse_json, read_plain, write_text

FORMAT = "pvr-keras/run-record"
FORMAT_VERSION = 1
HISTORY_COLUMNS = (
    "epoch",
    "train_loss",
    "train_accuracy",
    "train_eval_accuracy",
    "test_loss",
    "test_accuracy",
    "learning_rate",
    "epoch_seconds",
    "validation_loss",
    "validation_accuracy",
    "train_seconds",
    "eval_seconds",
)
# Columns a record written before them lacks (read as empty: ``pad_history``).
LATER_COLUMNS = ("validation_loss", "validation_accuracy", "train_seconds", "eval_seconds")
# Wall-clock columns: the only ones that differ between two runs of the same config.
# ``epoch_seconds`` is the whole epoch; ``train_seconds`` its training steps (the device
# waited for); ``eval_seconds`` its evaluations (train_eval, test, validation).
TIMING_COLUMNS = ("epoch_seconds", "train_seconds", "eval_seconds")


def versions():
    """Versions of everything that can change a result (read from package metadata, so a
    package that is not installed, such as TensorFlow on a JAX-only GPU host, reads None)."""
    import importlib.metadata

    found = {"python": platform.python_version()}
    for name in ("pvr-keras", "keras", "tensorflow", "jax", "jaxlib", "numpy"):
        try:
            found[name.replace("-", "_")] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name.replace("-", "_")] = None
    return found


def environment():
    """Backend, devices, versions and host of this process."""
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        devices = [str(d) for d in jax.devices()]
    else:
        import tensorflow as tf

        devices = [d.name for d in tf.config.list_logical_devices()]
    return {
        "backend": backend,
        "devices": devices,
        "versions": versions(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "argv": sys.argv,
    }


# A launched job's runs (``pvr_keras.launch``): set by the job for the recipe process it starts.
JOB_ENV = "PVR_LAUNCH_JOB"


def this_job(environ=None):
    """The job this process trains for, ``{"runs", "launcher", "job", "host"}``, or None
    when it is not a launched job. A value that is not such a dict is refused in one line."""
    text = (os.environ if environ is None else environ).get(JOB_ENV)
    if not text:
        return None
    try:
        found = parse_json(text, JOB_ENV)
    except ValueError:
        found = None
    if (
        not isinstance(found, dict)
        or not isinstance(found.get("runs"), list)
        or not all(isinstance(r, str) for r in found["runs"])
    ):
        raise ConfigError(f"{JOB_ENV} must be a launched job's JSON; received {text[:80]!r}")
    return found


def start_fields(environ=None):
    """What a run's ``starts`` entry records of where it started: the host, and in a launched
    job its launcher and job id."""
    job = this_job(environ)
    found = {"host": socket.gethostname()}
    if job is not None:
        found.update(launcher=job.get("launcher"), job=job.get("job"))
    return found


def history_csv(history):
    """CSV text of a history dict of equal-length column lists (a column it lacks, from a
    record written before that column existed, is empty)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HISTORY_COLUMNS)
    for i in range(len(history["epoch"])):
        writer.writerow([history[c][i] if c in history else None for c in HISTORY_COLUMNS])
    return out.getvalue()


def empty_history():
    return {c: [] for c in HISTORY_COLUMNS}


def pad_history(history):
    """Adds to ``history`` (in place) the columns it lacks, empty (None) for the epochs it
    has: a run resumed from a record written before those columns existed."""
    for column in HISTORY_COLUMNS:
        if column not in history:
            history[column] = [None] * len(history["epoch"])
    return history


def write_record(out_dir, record):
    """Writes ``record.json`` and ``history.csv`` into ``out_dir`` atomically."""
    out_dir = pathlib.Path(out_dir)
    write_text(out_dir / "history.csv", history_csv(record["history"]))
    write_text(out_dir / "record.json", json.dumps(record, indent=1, default=str) + "\n")


def read_record(path):
    """Reads a run record from a run folder or a ``record.json`` path.

    Raises:
        FileNotFoundError: no record there.
        UnsafePath: (an OSError) the record is a symbolic link.
        DamagedFile: (a ValueError) the file is not a whole JSON object (or is a FIFO, a
            folder, a device, or nests deeper than any record), or has no config.
        ValueError: the file is not a pvr-keras run record of a version this code reads.
    """
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "record.json"
    data = read_plain(path)  # the type checked before a byte is read: no link, FIFO, device
    try:
        record = parse_json(data, path)
    except DamagedFile as error:  # not JSON, not UTF-8, or nested deeper than a record
        detail = str(error).removeprefix(f"{path} ")  # "nests deeper ...", "is not whole JSON"
        if detail.startswith("is not whole JSON ("):
            detail = detail[len("is not whole JSON (") : -1]
        raise DamagedFile(f"{path} is not a whole JSON record ({detail}); the run folder is "
                          f"damaged: delete it to train the run again") from None  # fmt: skip
    if not isinstance(record, dict):
        raise DamagedFile(f"{path} holds a JSON {type(record).__name__}, not a run record")
    if record.get("format") != FORMAT or record.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} is not a {FORMAT} v{FORMAT_VERSION} record (format="
            f"{record.get('format')!r}, version={record.get('format_version')!r})"
        )
    if not isinstance(record.get("config"), dict):
        raise DamagedFile(f"{path} has no config (a run record always has one)")
    return record


class RunLock(Lock):
    """An exclusive lock on a run folder while a process trains into it (``with RunLock(dir)``).

    A second process asking for the same folder fails at once, saying which process holds
    it, instead of the two overwriting each other's checkpoints (``files.Lock``: the
    operating system drops the lock when its process dies, so a killed run never leaves a
    stale one; a run that ends removes the lock file, so a finished run folder holds none;
    a planted link is refused).

    Raises (on enter):
        RunBusy: another process holds the folder.
        UnsafePath: the lock file is a symbolic link.
    """

    NAME = ".lock"

    def __init__(self, folder):
        super().__init__(pathlib.Path(folder) / self.NAME)

    def busy(self, holder):
        return (f"{self.path.parent} is in use by {holder}: one run per folder at a time "
                f"(wait for it, or use another out folder)")  # fmt: skip


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
