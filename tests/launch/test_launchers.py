"""Grids launched as jobs on one machine (submitit's local and debug executors, a local Ray):
the same run ids, records and results lines as the local grid; a launcher killed mid-grid and
run again finishes every run once, the killed ones resumed; a detached grid collected by the
same command; a failed job reported by run id while the others go on."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from tests import scripts

pytestmark = pytest.mark.slow

RECIPE = str(scripts.REPO / "recipes" / "token_pvr.py")
TINY = ["--num-examples", "300", "--test-examples", "200", "--train-eval-examples", "200",
        "--epochs", "2", "--min-steps", "0", "--batch-size", "100",
        "--warmup-epochs", "0"]  # fmt: skip
SEEDS = ["--seed", "0", "1", "2", "3"]
POPULATION = ["--population", "2"]  # a job per population of 2 (2 jobs, not 4: CI's time)


def _launch(cwd, *argv, timeout=600, **kwargs):
    """The recipe in a process of its own, run from ``cwd`` (a relative --out is there)."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return subprocess.run([sys.executable, RECIPE, *argv], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True, **kwargs)  # fmt: skip


def _lines(out):
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len({line["id"] for line in lines}) == len(lines), "a run recorded twice"
    return {line["id"]: line for line in lines}


def _record(out, run_id):
    return json.loads((out / "runs" / run_id / "record.json").read_text())


@pytest.fixture(scope="module")
def local_grid(tmp_path_factory):
    """The 4-run grid trained here, in populations of 2 (the reference)."""
    out = tmp_path_factory.mktemp("local") / "grid"
    recipe = scripts.load("recipes/token_pvr.py")
    summary = recipe.main([*TINY, *SEEDS, *POPULATION, "--out", str(out)])
    return out, summary


@pytest.mark.parametrize(
    "launcher",
    [["--launcher", "submitit", "--submitit.cluster", "local", "--submitit.array-parallelism", "2"],
     ["--launcher", "submitit", "--submitit.cluster", "debug"],
     ["--launcher", "ray", "--ray.cpus-per-run", "1"]],
    ids=["submitit-local", "submitit-debug", "ray"],
)  # fmt: skip
def test_a_launched_grid_is_the_local_grid(launcher, local_grid, tmp_path):
    reference, summary = local_grid
    flags = [*TINY, *SEEDS, *POPULATION, *launcher, "--out", "grid"]  # relative: made here
    done = _launch(tmp_path, *flags)
    assert done.returncode == (3 if summary["failed"] else 0), done.stderr[-2000:]
    out = tmp_path / "grid"
    mine, theirs = _lines(out), _lines(reference)
    assert sorted(mine) == sorted(theirs) and len(mine) == 4
    jobs = json.loads((out / "launch" / "grid.json").read_text())["jobs"]
    assert sorted(len(job["runs"]) for job in jobs) == [2, 2]  # one job a population
    for run_id, line in mine.items():
        for key in ("train_loss", "test_loss", "test_accuracy", "train_accuracy"):
            assert line[key] == pytest.approx(theirs[run_id][key], rel=1e-5, abs=1e-6), key
        assert line["run_dir"] == theirs[run_id]["run_dir"]
        [start] = _record(out, run_id)["starts"]
        assert start["launcher"] == launcher[1] and start["host"] and start["epoch"] == 0
        assert start["population"] == 2  # trained as a population on the worker
        if launcher[-1] != "debug":  # the debug executor's jobs have no id of their own
            assert start["job"]
        # Everything a local run writes, in the same place.
        files = sorted(p.name for p in (out / "runs" / run_id).iterdir())
        assert files == sorted(p.name for p in (reference / "runs" / run_id).iterdir())
        assert "model.keras" in files
    assert "4/4 runs done" in done.stdout
    assert not list((out / "claims").glob("*.claim"))


def _checkpointed(out, run_id):
    """The epoch of a run's last checkpoint (0: none yet). A record says an epoch ended
    before that epoch's checkpoint is written: a kill in between resumes from the one before."""
    try:
        return json.loads((out / "runs" / run_id / "checkpoint" / "state.json").read_text())[
            "epoch"
        ]
    except (FileNotFoundError, NotADirectoryError, ValueError, KeyError):
        return 0


def _epochs_done(out):
    """The checkpointed epochs of the runs in ``out``."""
    runs = (out / "runs").iterdir() if (out / "runs").is_dir() else ()
    return [_checkpointed(out, path.name) for path in runs]


def test_a_killed_launcher_and_its_jobs_resume_and_train_nothing_twice(tmp_path):
    """The launcher and its jobs killed with SIGKILL (one process group) while a run is
    past its first epoch; the same command again finishes every run once, the killed one
    resumed from its checkpoint (its ``starts``)."""
    flags = [*TINY, "--num-examples", "6000", "--epochs", "4", "--seed", "0", "1",
             "--launcher", "submitit", "--submitit.cluster", "local",
             "--submitit.array-parallelism", "2", "--out", "grid"]  # fmt: skip
    out = tmp_path / "grid"
    process = subprocess.Popen([sys.executable, RECIPE, *flags], cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    deadline = time.time() + 300
    while time.time() < deadline and not any(0 < e < 4 for e in _epochs_done(out)):
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert any(0 < e < 4 for e in _epochs_done(out)), "no run was killed mid-way"
    time.sleep(1)
    done = _launch(tmp_path, *flags)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    lines = _lines(out)
    assert len(lines) == 2
    starts = {run_id: _record(out, run_id)["starts"] for run_id in lines}
    resumed = [s for s in starts.values() if len(s) > 1 and s[-1]["epoch"] > 0]
    assert resumed, starts
    for found in starts.values():  # each start of a job that is no more goes on from the last
        epochs = [s["epoch"] for s in found]
        assert epochs == sorted(epochs) and len({s["job"] for s in found}) == len(found)
        assert _record(out, next(iter(lines)))["epochs_completed"] == 4
    assert not list((out / "claims").glob("*.claim"))


def test_a_detached_grid_is_collected_and_a_failed_job_is_reported_by_run_id(tmp_path):
    """--submitit.detach returns once submitted; the same command again waits for the jobs
    still running (submitting nothing twice) and collects them. A job whose run fails (a link
    planted where its checkpoint goes) is reported by run id; the other run is recorded."""
    flags = [*TINY, "--num-examples", "6000", "--epochs", "4", "--seed", "0", "1",  # ~20 s a run
             "--launcher", "submitit", "--submitit.cluster",
             "local", "--submitit.array-parallelism", "2", "--out", "grid"]  # fmt: skip
    recipe = scripts.load("recipes/token_pvr.py")
    runs = recipe.COMMAND.parse_all([*flags[:-2], "--out", str(tmp_path / "grid")]).runs()
    broken = tmp_path / "grid" / "runs" / runs[0].run_id
    broken.mkdir(parents=True)
    (broken / "checkpoint").symlink_to(tmp_path)
    first = _launch(tmp_path, *flags, "--submitit.detach")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "run the same command again to collect" in first.stdout
    second = _launch(tmp_path, *flags)
    assert second.returncode == 1
    # The run still training is waited for, not submitted again (the failing one may have
    # ended already: then it is submitted again, and fails again).
    assert "runs are in jobs still queued or running" in second.stdout, second.stdout
    err = second.stderr.strip().splitlines()[-1]
    assert err.startswith("token_pvr.py: error: [grid] 1 runs not recorded, their jobs failed: "
                          f"{runs[0].run_id}") and "symbolic link" in err  # fmt: skip
    lines = _lines(tmp_path / "grid")
    assert list(lines) == [runs[1].run_id]
    assert len(_record(tmp_path / "grid", runs[1].run_id)["starts"]) == 1
    jobs = json.loads((tmp_path / "grid" / "launch" / "grid.json").read_text())["jobs"]
    assert [r for job in jobs for r in job["runs"]].count(runs[1].run_id) == 1


def test_studies_pass_the_launcher_flags_to_every_grid(tmp_path):
    """tools/studies/figure11_reduced.sh RESULTS --launcher ... gives each of its sweeps the
    flags (a dry run: nothing trains)."""
    done = subprocess.run(
        ["bash", "tools/studies/figure11_reduced.sh", str(tmp_path / "r"), "--launcher",
         "submitit", "--submitit.cluster", "local", "--dry-run"],
        cwd=scripts.REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("training steps") == 7 and not pathlib.Path(tmp_path / "r").exists()


def _task_of(controller):
    """The submitit task process the local executor's controller ``controller`` runs."""
    for status in pathlib.Path("/proc").glob("[0-9]*/status"):
        try:
            ppid = int(next(line for line in status.read_text().splitlines()
                            if line.startswith("PPid:")).split()[1])  # fmt: skip
            cmdline = (status.parent / "cmdline").read_bytes()
        except (OSError, StopIteration, ValueError):
            continue
        if ppid == controller and b"submitit.core._submit" in cmdline:
            return int(status.parent.name)
    return None


def _epochs_of(out, run_id):
    return _checkpointed(out, run_id)


def test_a_preempted_job_requeues_itself_and_its_run_resumes(tmp_path):
    """The signal submitit's jobs get before a time limit or a preemption (USR2) makes the job
    checkpoint itself and requeue (the local executor runs it again); its run resumes from its
    last epoch, in the same job, and the grid finishes."""
    flags = [*TINY, "--num-examples", "6000", "--epochs", "4", "--seed", "0", "1",
             "--launcher", "submitit", "--submitit.cluster", "local",
             "--submitit.array-parallelism", "2", "--out", "grid"]  # fmt: skip
    out = tmp_path / "grid"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    process = subprocess.Popen([sys.executable, RECIPE, *flags], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    deadline, task = time.time() + 300, None
    while time.time() < deadline and task is None:  # a run past its first epoch, not its last
        time.sleep(0.2)
        path = out / "launch" / "grid.json"
        jobs = json.loads(path.read_text())["jobs"] if path.exists() else []
        running = [(job["runs"][0], int(job["job"])) for job in jobs
                   if 0 < _epochs_of(out, job["runs"][0]) < 3]  # fmt: skip
        if running:
            run_id, controller = running[0]
            task = _task_of(controller)
    assert task is not None
    os.kill(task, signal.SIGUSR2)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode in (0, 3), stderr[-2000:]
    assert len(_lines(out)) == 2
    starts = _record(out, run_id)["starts"]
    assert len(starts) == 2 and starts[1]["epoch"] > 0, starts
    assert starts[0]["job"] == starts[1]["job"] == str(controller)  # requeued, not resubmitted
    assert " failed: " not in stdout  # no job failed
