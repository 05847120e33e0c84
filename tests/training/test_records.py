"""Run records: the NaN path of ``training.train``, and records of another format or version."""

import json
import math
import os

import numpy as np
import pandas as pd
import pytest

from pvr_keras import models, training
from pvr_keras.errors import DamagedFile, UnsafePath
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import read_record, records
from pvr_keras.training.inputs import train_data
from tests.bounded import within

RUN = Run.make("token", num_examples=640, test_examples=128, batch_size=64, epochs=3,
               warmup_epochs=0, min_steps=0, schedule="constant")  # fmt: skip


def _train(out, run, build=lambda: models.mlp(embed_dim=4, widths=(8,))):
    return training.train(run, out, build_model=build, verbose=0, save_model=False)


def test_a_run_whose_loss_becomes_nan_stops_and_is_recorded_failed(tmp_path):
    out = tmp_path / "nan"
    # SGD at rate 1e30: the weights overflow within a few steps, the loss becomes NaN.
    record = _train(out, RUN.replace(learning_rate=1e30))
    assert record["status"] == "nan" and record["failed"] is True
    assert "NaN" in record["failed_rule"]
    # The epoch's mean loss is NaN: the run stops after that epoch, which is still recorded.
    assert record["epochs_completed"] == 1 < record["epochs_planned"] == 3
    assert record["history"]["epoch"] == [1]
    assert math.isnan(record["final"]["train_loss"])
    assert read_record(out) == json.loads(json.dumps(record))
    assert pd.read_csv(out / "history.csv")["epoch"].tolist() == [1]
    assert not (out / "checkpoint").exists()
    # Finished (as NaN): the same call again returns the record and trains nothing.
    again = _train(out, RUN.replace(learning_rate=1e30))
    assert again["finished"] == record["finished"] and again["status"] == "nan"


def _write(path, **changes):
    record = {"format": records.FORMAT, "format_version": records.FORMAT_VERSION, "config": {}}
    record.update(changes)
    path.mkdir(parents=True, exist_ok=True)
    (path / "record.json").write_text(json.dumps(record))
    return record


def test_read_record_reads_its_format_and_version(tmp_path):
    record = _write(tmp_path / "run")
    assert read_record(tmp_path / "run") == record
    assert read_record(tmp_path / "run" / "record.json") == record
    with pytest.raises(FileNotFoundError):
        read_record(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"format_version": 2}, r"is not a pvr-keras/run-record v1 record \(format=.*version=2\)"),
        ({"format_version": "1"}, r"version='1'"),
        ({"format": "other"}, r"format='other'"),
        ({"format": None, "format_version": None}, r"format=None, version=None"),
    ],
)
def test_another_format_or_version_is_refused(tmp_path, changes, message):
    _write(tmp_path / "run", **changes)
    with pytest.raises(ValueError, match=message):
        read_record(tmp_path / "run")


def test_training_into_a_folder_of_another_record_version_is_refused(tmp_path):
    _write(tmp_path / "run", format_version=records.FORMAT_VERSION + 1, config={"test": "records"})
    with pytest.raises(ValueError, match="is not a pvr-keras/run-record v1 record"):
        _train(tmp_path / "run", RUN)


def test_a_link_at_the_checkpoint_is_refused_before_any_training(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint").symlink_to(tmp_path / "elsewhere")

    def build():
        raise AssertionError("the model was built: the link was not refused first")

    with pytest.raises(UnsafePath, match="checkpoint is a symbolic link"):
        _train(tmp_path / "run", RUN, build)
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["checkpoint"]


def test_history_csv_is_what_pandas_reads(tmp_path):
    history = records.empty_history()
    for epoch in (1, 2):
        for column in records.HISTORY_COLUMNS:
            history[column].append(epoch if column == "epoch" else epoch / 10)
    history["test_loss"][1] = None
    records.write_record(tmp_path, {"history": history, "format": records.FORMAT})
    frame = pd.read_csv(tmp_path / "history.csv")
    assert list(frame.columns) == list(records.HISTORY_COLUMNS)
    assert frame["epoch"].tolist() == [1, 2] and frame["train_loss"].tolist() == [0.1, 0.2]
    assert math.isnan(frame["test_loss"][1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.csv", "record.json"]


def test_one_batch_size_per_run(tmp_path):
    """The streams and the recipe must agree on the batch (steps per epoch come from the
    recipe): a mismatch is refused before anything is written."""
    streams = train_data("token", TokenTask(), 512, test_examples=100, batch_size=128)
    run = Run.make("token", num_examples=512, test_examples=100)  # the recipe's batch: 1024
    with pytest.raises(ValueError, match="batch_size=128 but the recipe has batch_size=1024"):
        training.train(run, tmp_path / "run", build_model=models.mlp, data=streams)
    assert not (tmp_path / "run").exists()
    run = run.replace(batch_size=128, epochs=1, min_steps=0)
    ok = training.train(run, tmp_path / "ok", build_model=models.mlp, data=streams, verbose=0)
    assert ok["status"]


class Killed(BaseException):
    """Stands for SIGKILL inside an epoch."""


class _DieInEpoch(__import__("keras").callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise Killed


def test_every_resume_counts_and_a_resume_cleans_what_a_kill_left(tmp_path):
    """Epoch 1 finishes, then five starts die inside epoch 2 before it is checkpointed, then
    one finishes: six resumes, whatever the epochs saw. Temporary files a killed writer left
    in the run folder are removed by the next start. (And a finite run is not marked NaN.)"""
    out = tmp_path / "run"
    build = lambda: models.mlp(embed_dim=4, widths=(8,))  # noqa: E731

    def start(callbacks):
        return training.train(RUN, out, build_model=build, verbose=0, callbacks=callbacks,
                              save_model=True)  # fmt: skip

    with pytest.raises(Killed):
        start([_DieInEpoch(1)])
    for _ in range(5):
        with pytest.raises(Killed):
            start([_DieInEpoch(1)])
        assert read_record(out)["epochs_completed"] == 1
    stale = [".tmp4242.model.keras", ".history.csv.tmp4242", "checkpoint.tmp"]
    for name in stale:
        (out / name).write_text("left by a killed writer")
    (out / ".tmpdeadbeef").mkdir()
    record = start([])
    assert record["status"] == "complete" and record["resumed"] == 6
    assert record["history"]["epoch"] == [1, 2, 3] and record["epochs_completed"] == 3
    assert all(np.isfinite(record["history"]["train_loss"]))
    assert not any((out / name).exists() for name in [*stale, ".tmpdeadbeef"])
    from pvr_keras import files

    assert record["model_sha256"] == files.sha256(out / "model.keras")  # checked on load


@pytest.mark.parametrize("kind", ["fifo", "link", "folder", "deep"])
def test_a_record_that_is_no_plain_file_or_nests_too_deeply_is_refused_at_once(tmp_path, kind):
    run = tmp_path / "run"
    run.mkdir()
    path = run / "record.json"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "link":
        _write(tmp_path / "planted", config={"planted": True})
        path.symlink_to(tmp_path / "planted" / "record.json")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)  # json.loads: RecursionError
    error, message = {
        "link": (UnsafePath, "record.json is a symbolic link"),
        "deep": (DamagedFile, r"record.json is not a whole JSON record \(nests deeper"),
    }.get(kind, (DamagedFile, "record.json is not a plain file"))
    with within(5), pytest.raises(error, match=message):
        read_record(run)
