"""The submitting side of a launched grid: the runs not yet recorded, as jobs (one per run, or
per population), submitted, watched through ``results.jsonl`` and collected.

The run folders stay the one truth: a run is done when its line is in ``results.jsonl``. The
jobs submitted are kept in ``OUT/launch/<name>.json`` (their ids and runs), so that the same
command again does not submit a run whose job is still queued or running (a detached grid, or
a launcher that was killed): it waits for those, and submits the runs of jobs that ended
without recording them, which resume from their checkpoints.
"""

import json
import pathlib
import time

from pvr_keras import files
from pvr_keras.errors import DamagedFile, UnsafePath
from pvr_keras.launch import executors
from pvr_keras.launch.jobs import job_of

FORMAT = "pvr-keras/launched-jobs"
MAX_BYTES = 16 << 20


class Detached(Exception):
    """A detached grid's jobs are submitted; the same command again collects them."""


class DryRun(Exception):
    """``--dry-run`` printed a grid's cost (``summary``: runs and ``cost``); nothing ran."""

    def __init__(self, summary):
        super().__init__(f"{summary['total']} runs: a dry run")
        self.summary = summary


class JobDone(Exception):
    """A launched job trained its runs: its recipe stops there (the submitting command draws
    the figures and analyses the grid)."""


class JobsFailed(RuntimeError):
    """Jobs of a launched grid ended without recording their runs (the others went on)."""


def _jobs_file(out, name):
    return pathlib.Path(out) / "launch" / f"{name}.json"


def read_jobs(path, log=print):
    """The jobs kept in ``path``: a list of ``{"job", "runs", "launcher", "cluster"}``. The
    file is read as untrusted: a link, a FIFO, a file that is not such a list is ignored
    (said in one line), and so is each entry that is not one."""
    try:
        found = files.read_json(path, MAX_BYTES)
    except FileNotFoundError:
        return []
    except (DamagedFile, UnsafePath, OSError) as error:
        log(f"warning: {path} ignored ({str(error).splitlines()[0][:200]})")
        return []
    if not isinstance(found, dict) or found.get("format") != FORMAT:
        log(f"warning: {path} ignored (not a {FORMAT} file)")
        return []
    kept = []
    for entry in found.get("jobs") if isinstance(found.get("jobs"), list) else []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("job"), str)
            and isinstance(entry.get("runs"), list)
            and all(isinstance(r, str) for r in entry["runs"])
            and isinstance(entry.get("launcher"), str)
        ):
            kept.append(entry)
    return kept


def _write_jobs(path, jobs):
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_text(path, json.dumps({"format": FORMAT, "jobs": jobs}, indent=1) + "\n")


def launch_grid(runs, mine, results, *, name, launch, script, argv, population, progress,
                log=print):  # fmt: skip
    """Trains the runs of ``mine`` (``runs``' share here: a shard) that ``results`` (a
    ``sweeps.ResultsDir``) has no line of, as jobs of ``launch``; each job runs ``script``
    with ``argv`` for its runs. Returns ``(trained, failed_jobs)``: the ids recorded
    meanwhile and ``[{"runs", "job", "error", "log"}]`` of the jobs that ended without
    recording theirs.

    Raises:
        Detached: ``launch.detach``, once the jobs are submitted.
    """
    from pvr_keras.training import population as populations

    executor = executors.make(launch, results.path)
    try:
        return _launch(runs, mine, results, executor, name, launch, script, argv, population,
                       progress, log, populations)  # fmt: skip
    except KeyboardInterrupt:
        log(f"[{name}] stopped: {executor.after_stop()}; the same command again collects the "
            f"finished runs and submits the missing ones (they resume)")  # fmt: skip
        raise
    finally:
        executor.close()


def _launch(runs, mine, results, executor, name, launch, script, argv, size, progress, log,
            populations):  # fmt: skip
    recorded = results.recorded_ids()
    todo = [run for run in mine if run.run_id not in recorded]
    path = _jobs_file(results.path, name)
    kept = read_jobs(path, log)
    cluster = getattr(executor, "cluster", None)
    waiting = {}  # run id -> the earlier job still queued or running that holds it
    for entry in kept:
        if entry["launcher"] != executor.name or entry.get("cluster") != cluster:
            continue
        left = [r for r in entry["runs"] if r not in recorded]
        if left and executor.in_flight(entry["job"]):
            waiting.update({r: entry["job"] for r in left})
    if waiting:
        log(f"[{name}] {len(waiting)} runs are in jobs still queued or running "
            f"({', '.join(sorted(set(waiting.values())))}): waiting for them, not submitting "
            f"them again")  # fmt: skip
    fresh = [run for run in todo if run.run_id not in waiting]
    groups = populations.groups(fresh, size) if size > 1 else [[run] for run in fresh]

    def make(ids):
        return job_of(script, argv, ids, executor.name)

    jobs = [make([run.run_id for run in group]) for group in groups]
    limit = len(jobs) if launch.detach or not executor_limit(executor) else executor_limit(executor)
    handles = _submit(executor, jobs[:limit], kept, path, cluster)
    queued = jobs[limit:]
    if jobs:
        log(f"[{name}] submitted {len(handles)} of {len(jobs)} jobs ({len(fresh)} runs) to "
            f"{executor.where()}" + (f"; the others as these end (at most {limit} at once)"
                                     if queued else ""))  # fmt: skip
    if launch.detach and (jobs or waiting):
        raise Detached(
            f"[{name}] {len(jobs)} jobs submitted, {len(waiting)} runs in earlier jobs, "
            f"{len(recorded & {r.run_id for r in mine})} of {len(mine)} runs recorded: run "
            f"the same command again to collect the finished runs and submit the missing ones"
        )
    return _watch(results, mine, handles, queued, waiting, executor, kept, path, cluster, name,
                  progress, log, make)  # fmt: skip


def executor_limit(executor):
    return getattr(executor, "parallel", None)


def _submit(executor, jobs, kept, path, cluster):
    handles = executor.submit(jobs)
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for job, handle in zip(jobs, handles, strict=True):
        kept.append({"job": handle.job_id, "runs": list(job.runs), "launcher": executor.name,
                     "cluster": cluster, "submitted": now})  # fmt: skip
    if handles:
        _write_jobs(path, kept)
    return handles


def _watch(results, mine, handles, queued, waiting, executor, kept, path, cluster, name,
           progress, log, make):  # fmt: skip
    """Waits for every job (submitting the queued ones as slots free), printing each run as
    its line lands; returns ``(trained, failed_jobs)``."""
    by_id = {run.run_id: run for run in mine}
    seen = set(results.recorded_ids())
    trained, failed = [], []
    started = time.perf_counter()
    live = list(handles)
    while True:
        _report(results, by_id, seen, trained, progress)
        for handle in [h for h in live if h.done()]:
            live.remove(handle)
            _report(results, by_id, seen, trained, progress)
            entry = next((e for e in kept if e["job"] == handle.job_id), {"runs": []})
            lost = [r for r in entry["runs"] if r not in seen]
            error = handle.error()
            if error is None and lost:  # ended well, yet without a line of its runs
                error = "the job ended without recording its runs"
            if error is not None:
                failed.append({"runs": lost or entry["runs"], "job": handle.job_id,
                               "error": error, "log": handle.log})  # fmt: skip
                for run_id in lost or entry["runs"]:
                    log(f"[{name}] {run_id}: job {handle.job_id} failed: {error} "
                        f"(log: {handle.log})")  # fmt: skip
        while queued and len(live) < (executor_limit(executor) or len(queued)):
            live += _submit(executor, [queued.pop(0)], kept, path, cluster)
        alive = {job: executor.in_flight(job) for job in set(waiting.values())}
        for run_id, job in list(waiting.items()):
            if run_id in seen:
                del waiting[run_id]
            elif not alive[job]:  # it ended without recording the run
                _report(results, by_id, seen, trained, progress)
                if run_id not in seen:
                    del waiting[run_id]
                    queued.append(make([run_id]))  # ended without it: submitted again
        if not live and not queued and not waiting:
            break
        time.sleep(executors.poll_interval(started))
    _report(results, by_id, seen, trained, progress)
    return trained, failed


def _report(results, by_id, seen, trained, progress):
    """One progress line for each run of the grid newly recorded in ``results``."""
    lines, _ = results.read()
    for line in lines:
        run_id = line.get("id")
        if run_id in by_id and run_id not in seen:
            seen.add(run_id)
            trained.append(run_id)
            progress.finished(by_id[run_id], line)
