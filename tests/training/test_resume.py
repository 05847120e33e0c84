"""A run killed mid-epoch (SIGKILL, its own process) and started again (in the test process)
ends bit for bit where an uninterrupted run ends: the same batches in the same order, history,
weights, optimizer state. Runs under the backend of the test process (CI runs both); the same
killed run also resumes on the other backend (in a process of its own)."""

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import keras
import numpy as np
import pytest

from pvr_keras.training import read_record, records
from tests.training import resume_child as child
from tests.training.fingerprints import checkpoint_arrays, read_batch_log

REPO = pathlib.Path(__file__).resolve().parents[2]
CHILD = [sys.executable, str(pathlib.Path(child.__file__))]
ENV = dict(
    os.environ,
    PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    TF_CPP_MIN_LOG_LEVEL="3",
)
KILL_AT = (2, 3)  # after the 4th batch of the third epoch (0-based)
BACKEND = keras.backend.backend()
OTHER = "tensorflow" if BACKEND == "jax" else "jax"


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """The child's run folder, SIGKILLed on this process's backend where it stalls at
    ``KILL_AT`` (its batches before the kill in ``before.log`` beside it): each test resumes
    a copy of it (``_copy``)."""
    return _killed_at_stall(tmp_path_factory.mktemp("resume"), {**ENV, "KERAS_BACKEND": BACKEND})


def _copy(killed, tmp_path):
    out = tmp_path / "killed"
    shutil.copytree(killed, out)
    return out


def _killed_at_stall(tmp_path, env):
    """The child's run folder, SIGKILLed where it stalls at ``KILL_AT`` (its batches before
    the kill in ``before.log``)."""
    out, stalled = tmp_path / "killed", tmp_path / "stalled"
    proc = subprocess.Popen(
        [*CHILD, str(out), str(tmp_path / "before.log"), "--stall", *map(str, KILL_AT), stalled],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 300
    while not stalled.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    _, stderr = proc.communicate()
    assert stalled.exists(), f"the run never reached {KILL_AT}: {stderr[-3000:]!r}"
    return out


@pytest.mark.slow  # a process of its own, killed; ~15-30 s on 2 shared cores
def test_a_run_killed_mid_epoch_resumes_to_the_same_bits(uninterrupted_run, killed, tmp_path,
                                                        capsys):  # fmt: skip
    """Killed in its own process, the run is started again here (what it resumes from is in
    its folder), as the uninterrupted run was."""
    full_dir, full, full_batches = uninterrupted_run

    out = _copy(killed, tmp_path)
    record = read_record(out)
    assert record["status"] == "running" and record["epochs_completed"] == KILL_AT[0]
    assert record["backend"] == BACKEND
    before = read_batch_log(killed.parent / "before.log")
    assert len(before) == KILL_AT[0] * child.STEPS + KILL_AT[1] + 1  # mid-epoch

    capsys.readouterr()
    child.main([str(out), str(tmp_path / "after.log")])
    assert f"resuming after epoch {KILL_AT[0]}" in capsys.readouterr().out
    resumed = read_record(out)
    assert resumed["status"] == "complete" and resumed["resumed"] == 1
    after = read_batch_log(tmp_path / "after.log")
    # Before the kill, the uninterrupted run's batches; after it, the same from the last
    # completed epoch on (the part-epoch is trained again, on the same batches).
    restart = KILL_AT[0] * child.STEPS
    for got, want in zip(before + after, full_batches[: len(before)] + full_batches[restart:],
                         strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)
    for column, values in full["history"].items():
        if column not in records.TIMING_COLUMNS:
            assert resumed["history"][column] == values, column
    assert resumed["final"] == full["final"]
    got, want = checkpoint_arrays(out), checkpoint_arrays(full_dir)
    assert sorted(got) == sorted(want)
    for name in want:  # weights and optimizer variables (momentum, iteration count)
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.slow  # the killed run of the test above, resumed in a process of the other backend
def test_a_run_killed_on_one_backend_resumes_on_the_other(uninterrupted_run, killed, tmp_path):
    """A run's identity has no engine: killed on this process's backend (each CI leg's), it
    resumes on the other from its checkpoint (weights, optimizer state, data position), and
    its record names both starts."""
    _, full, full_batches = uninterrupted_run
    out = _copy(killed, tmp_path)

    done = subprocess.run(
        [*CHILD, str(out), str(tmp_path / "after.log")],
        env={**ENV, "KERAS_BACKEND": OTHER},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"resuming after epoch {KILL_AT[0]}" in done.stdout
    resumed = read_record(out)
    assert resumed["status"] == "complete" and resumed["resumed"] == 1
    assert [(s["epoch"], s["backend"]) for s in resumed["starts"]] == [
        (0, BACKEND),
        (KILL_AT[0], OTHER),
    ]
    assert resumed["backend"] == OTHER
    # The same batches from the last completed epoch on, and training that goes on from the
    # checkpoint's weights: each epoch's loss is the uninterrupted run's, up to the two
    # backends' float rounding (a fresh start would be far from it).
    after = read_batch_log(tmp_path / "after.log")
    for got, want in zip(after, full_batches[KILL_AT[0] * child.STEPS :], strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(
        resumed["history"]["train_loss"], full["history"]["train_loss"], rtol=1e-3
    )
