"""The submitting side of a launched grid with a stand-in executor (no jobs, no Keras): each
run submitted once, at most the executor's limit at once, runs of jobs still in flight
waited for and not submitted, a job that fails or ends without its runs reported by run id
while the others go on, a detached grid submitted and left."""

import pytest

from pvr_keras import sweeps
from pvr_keras.launch import Detached, Launch, driver, executors
from pvr_keras.sweeps.engine import Progress
from tests.sweeps.test_engine import GRID, fake_train

RUNS = GRID[:5]


class Handle:
    def __init__(self, executor, job, job_id):
        self.executor, self.job, self.job_id = executor, job, job_id
        self.polls, self.log = 0, f"log-{job_id}"

    def done(self):
        self.polls += 1
        if self.polls < 2:
            return False
        if self.executor.fail.get(self.job.runs[0]) == "silent":
            return True
        if self.executor.fail.get(self.job.runs[0]) is None:
            for run_id in self.job.runs:
                self.executor.record(run_id)
        return True

    def error(self):
        found = self.executor.fail.get(self.job.runs[0])
        return None if found in (None, "silent") else found


class Fake:
    """An executor that records a job's runs when its handle is polled twice."""

    name, cluster = "fake", None

    def __init__(self, results, parallel=None, alive=(), fail=None):
        self.results, self.parallel, self.alive = results, parallel, set(alive)
        self.fail = fail or {}
        self.submitted, self.running_max, self.handles = [], 0, []

    def record(self, run_id):
        run = next(r for r in RUNS if r.run_id == run_id)
        record = fake_train(run, self.results.run_dir(run_id), log=self.results.path / "log")
        self.results.append(sweeps.result_line(run, record, "t"))
        self.alive.discard(run_id)

    def submit(self, jobs):
        found = []
        for job in jobs:
            self.submitted.append(job.runs)
            found.append(Handle(self, job, f"j{len(self.submitted)}"))
        self.handles += found
        live = sum(1 for h in self.handles if h.polls < 2)
        self.running_max = max(self.running_max, live)
        return found

    def in_flight(self, job_id):
        return job_id in self.alive

    def where(self):
        return "a stand-in"

    def after_stop(self):
        return "stopped"

    def close(self):
        pass


def _launch(tmp_path, monkeypatch, fake_kwargs=None, launch=None, runs=RUNS):
    results = sweeps.ResultsDir(tmp_path / "r", create=True)
    fake = Fake(results, **(fake_kwargs or {}))
    monkeypatch.setattr(executors, "make", lambda launch, out: fake)
    monkeypatch.setattr(executors, "poll_interval", lambda started: 0.0)
    said = []
    progress = Progress("t", len(runs), 0, runs, said.append)
    trained, failed = driver.launch_grid(
        runs, runs, results, name="t", launch=launch or Launch(launcher="submitit"),
        script="recipe.py", argv=("--seed", "0"), population=1, progress=progress,
        log=said.append,
    )  # fmt: skip
    return fake, trained, failed, said, results


def test_each_run_is_submitted_once_and_at_most_the_limit_at_once(tmp_path, monkeypatch):
    fake, trained, failed, said, results = _launch(tmp_path, monkeypatch, {"parallel": 2})
    assert sorted(trained) == sorted(r.run_id for r in RUNS) and failed == []
    assert sorted(r for job in fake.submitted for r in job) == sorted(r.run_id for r in RUNS)
    assert fake.running_max == 2
    assert len(results.read()[0]) == len(RUNS)
    assert sum("runs done" in line for line in said) == len(RUNS)
    kept = driver.read_jobs(results.path / "launch" / "t.json")
    assert [e["runs"] for e in kept] == [list(job) for job in fake.submitted]


def test_runs_of_jobs_in_flight_are_waited_for_then_resubmitted_if_lost(tmp_path, monkeypatch):
    """An earlier job still in flight: its runs are not submitted. One that ends having
    recorded its run is collected; one that ends without it gets a new job."""
    results = sweeps.ResultsDir(tmp_path / "r", create=True)
    earlier = [{"job": "old", "runs": [RUNS[0].run_id, RUNS[1].run_id], "launcher": "fake",
                "cluster": None}]  # fmt: skip
    driver._write_jobs(results.path / "launch" / "t.json", earlier)
    alive = {"old"}

    class Ending(Fake):
        def in_flight(self, job_id):  # the earlier job records its first run, then ends
            if job_id == "old" and self.handles and all(h.polls >= 2 for h in self.handles):
                if RUNS[0].run_id not in {line["id"] for line in self.results.read()[0]}:
                    self.record(RUNS[0].run_id)
                return False
            return job_id in alive

    fake = Ending(results)
    monkeypatch.setattr(executors, "make", lambda launch, out: fake)
    monkeypatch.setattr(executors, "poll_interval", lambda started: 0.0)
    said = []
    trained, failed = driver.launch_grid(
        RUNS, RUNS, results, name="t", launch=Launch(launcher="submitit"), script="r.py",
        argv=(), population=1, progress=Progress("t", 5, 0, RUNS, said.append), log=said.append,
    )  # fmt: skip
    first = [job for job in fake.submitted[:3]]
    assert all(RUNS[0].run_id not in job and RUNS[1].run_id not in job for job in first)
    assert fake.submitted[-1] == (RUNS[1].run_id,)  # lost by the earlier job: submitted again
    assert sorted(trained) == sorted(r.run_id for r in RUNS) and failed == []
    assert "2 runs are in jobs still queued or running (old)" in said[0]


def test_a_failed_job_is_reported_by_run_id_and_the_others_go_on(tmp_path, monkeypatch):
    fail = {RUNS[1].run_id: "exit status 1 on host: boom", RUNS[3].run_id: "silent"}
    fake, trained, failed, said, results = _launch(tmp_path, monkeypatch, {"fail": fail})
    assert sorted(trained) == sorted(r.run_id for r in RUNS if r.run_id not in fail)
    assert [(f["runs"], f["error"]) for f in failed] == [
        ([RUNS[1].run_id], "exit status 1 on host: boom"),
        ([RUNS[3].run_id], "the job ended without recording its runs"),
    ]  # fmt: skip
    assert any(line.startswith(f"[t] {RUNS[1].run_id}: job j2 failed: exit status 1")
               and line.endswith("(log: log-j2)") for line in said)  # fmt: skip


def test_a_detached_grid_is_submitted_and_left(tmp_path, monkeypatch):
    with pytest.raises(Detached, match="5 jobs submitted, 0 runs in earlier jobs, 0 of 5 runs"):
        _launch(tmp_path, monkeypatch, {"parallel": 2},
                Launch(launcher="submitit", detach=True))  # fmt: skip
    # every job submitted at once (nothing stays here to submit the rest later)
    kept = driver.read_jobs(tmp_path / "r" / "launch" / "t.json")
    assert len(kept) == 5
