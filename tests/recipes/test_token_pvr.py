import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from pvr_keras.training import read_record, records
from pvr_keras.training.records import HISTORY_COLUMNS

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import token_pvr  # noqa: E402

TINY = ["--num-examples", "3000", "--test-examples", "1000", "--min-steps", "0"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """(run folder, returned record, printed output) of a tiny run of the recipe."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("token_pvr") / "run"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        record = token_pvr.main([*TINY, "--epochs", "2", "--window", "2", "--out", str(out)])
    return out, record, printed.getvalue()


def test_recipe_end_to_end(finished):
    out, record, printed = finished
    for name in ("config.json", "record.json", "history.csv", "learning_curve.png", "model.keras"):
        assert (out / name).is_file(), name
    assert not (out / "checkpoint").exists()
    history = pd.read_csv(out / "history.csv")
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert history["epoch"].tolist() == [1, 2]
    assert history[["test_accuracy", "train_eval_accuracy"]].notna().all().all()
    saved = read_record(out)
    assert saved == json.loads(json.dumps(record))
    assert saved["status"] == "complete" and saved["resumed"] == 0
    assert saved["config"]["window"] == 2 and saved["num_params"] == 1_445_194
    assert saved["backend"] == os.environ.get("KERAS_BACKEND", "tensorflow")
    assert {"keras", "tensorflow", "jax", "numpy"} <= set(saved["versions"])
    assert "test accuracy" in printed
    # Started again, a finished run is not trained again.
    again = token_pvr.main([*TINY, "--epochs", "2", "--window", "2", "--out", str(out)])
    assert again["finished"] == saved["finished"]


def test_other_config_in_same_folder_is_refused(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished[0], out)  # a finished window-2 run
    with pytest.raises(ValueError, match="holds a run of another configuration"):
        token_pvr.main([*TINY, "--epochs", "2", "--window", "3", "--out", str(out)])


@pytest.mark.slow
def test_sigkill_and_resume(tmp_path, capsys):
    """Killed in a process of its own, the run resumes here (its checkpoint and record are all
    a resume reads)."""
    out = tmp_path / "run"
    argv = [*TINY, "--num-examples", "4096", "--epochs", "8", "--out", str(out)]
    cmd = [sys.executable, str(REPO / "recipes" / "token_pvr.py"), *argv]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline:
        try:
            if json.loads((out / "record.json").read_text())["epochs_completed"] >= 2:
                break
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the run did not complete two epochs in time")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = read_record(out)
    assert killed["status"] == "running" and 2 <= killed["epochs_completed"] < 8

    capsys.readouterr()
    returned = token_pvr.main(argv)
    record = read_record(out)
    assert json.loads(json.dumps(returned)) == record
    assert "resuming after epoch" in capsys.readouterr().out
    assert record["status"] == "complete" and record["resumed"] == 1
    assert record["epochs_completed"] == 8
    assert record["history"]["epoch"] == list(range(1, 9))  # whole, no epoch twice
    assert len(pd.read_csv(out / "history.csv")) == 8
    assert not (out / "checkpoint").exists()


def test_input_choice_is_recorded_and_changes_no_result(tmp_path):
    args = [*TINY, "--epochs", "1", "--window", "2"]
    if os.environ.get("KERAS_BACKEND", "tensorflow") != "jax":
        with pytest.raises(ValueError, match="needs the JAX backend; received backend"):
            token_pvr.main([*args, "--input", "device", "--out", str(tmp_path / "refused")])
        assert not (tmp_path / "refused").exists()  # refused before any work
        return
    default = token_pvr.main([*args, "--out", str(tmp_path / "default")])
    tfdata = token_pvr.main([*args, "--input", "tfdata", "--out", str(tmp_path / "tfdata")])
    assert default["input"] == "device" and tfdata["input"] == "tfdata"  # JAX: device default
    assert "input" not in default["config"]  # a run may resume on the other input
    for key, values in tfdata["history"].items():
        if key not in records.TIMING_COLUMNS:
            assert default["history"][key] == values, key
