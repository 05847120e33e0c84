"""Paths and names a user (or a record) gives that the file system or Python would choke on:
one line and a clear error, never a traceback."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from pvr_keras import files
from pvr_keras.cli import folders
from pvr_keras.errors import ConfigError, DamagedFile

REPO = pathlib.Path(__file__).resolve().parents[1]
VALUES = {"model": "mlp", "seed": 0, "window": 2}


@pytest.mark.parametrize(
    "template",
    [
        "/x/{model.name}",
        "{seed[0]}",
        "{}",
        "{0}",
        "{seed.real}",
        "{model!r:>{width}}",
        "runs/" + "a" * 300,
        "{nope}",
    ],  # fmt: skip
)
def test_an_out_template_that_is_not_fields_or_too_long_is_a_config_error(template):
    with pytest.raises(ConfigError, match="--out"):
        folders.format_out(template, VALUES)


def test_plain_placeholders_and_format_specs_still_work():
    assert folders.format_out("runs/{model}-w{window}-s{seed:02d}", VALUES) == "runs/mlp-w2-s00"


@pytest.mark.parametrize("plant", ["fifo", "folder"])
def test_a_fifo_or_folder_at_a_lock_is_refused_in_one_line(tmp_path, plant):
    lock = tmp_path / ".lock"
    os.mkfifo(lock) if plant == "fifo" else lock.mkdir()
    with pytest.raises(DamagedFile, match="is not a plain file"):
        with files.Lock(lock):
            pass
    assert lock.exists()  # not removed: the library leaves what it did not make


def _evaluate(*args, cwd):
    return subprocess.run([sys.executable, str(REPO / "tools" / "evaluate.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd)  # fmt: skip


def test_evaluate_refuses_a_record_source_that_is_not_a_path_and_a_long_path(tmp_path):
    from pvr_keras.runconfig import Run
    from pvr_keras.training import records, runs

    run = Run.make("token", width=0.125)
    folder = tmp_path / "run"
    folder.mkdir()
    runs.model_builder(run)().save(folder / "model.keras")
    record = {"format": records.FORMAT, "format_version": records.FORMAT_VERSION,
              "status": "complete", "config": {**run.to_dict(), "model": "nets.py:mlp"},
              "model_source": 5, "final": {}, "history": {}}  # fmt: skip
    (folder / "record.json").write_text(json.dumps(record))
    for args in ([str(folder)], [str(tmp_path / ("b" * 300))]):
        done = _evaluate(*args, cwd=tmp_path)
        assert done.returncode in (1, 2), done.stderr[-2000:]
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]
