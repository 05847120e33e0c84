"""Where jobs go: submitit (a SLURM job array, or its local and debug executors) or Ray (one
task per job). Each gives handles with ``job_id``, ``done()``, ``error()`` (None, or one
line) and ``log`` (where the job's output is), and tells whether a job submitted by an
earlier command (its id kept in ``OUT/launch/``) is still queued or running."""

import contextlib
import os
import pathlib
import sys
import time

from pvr_keras import files
from pvr_keras.launch.flags import cluster_of, ray_address

TIMEOUT_MIN = 24 * 60  # a job's time limit where none is given (submitit's local default is 2)
LIVE_SLURM = ("PENDING", "RUNNING", "REQUEUED", "CONFIGURING", "COMPLETING", "RESIZING",
              "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED")  # fmt: skip


def _one_line(error):
    """The line that says why a job failed: its ``JobFailed`` message where the error holds
    the job's traceback (submitit's ``FailedJobError``), else the error's last line."""
    found = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in reversed(found):
        if "JobFailed: " in line:
            return line.split("JobFailed: ", 1)[1][:500]
    return (found[-1] if found else type(error).__name__)[:500]


class SubmititHandle:
    def __init__(self, job, cluster):
        self.job, self.cluster = job, cluster
        self.job_id = str(job.job_id)
        self.log = str(job.paths.stderr)
        self._error = None
        self._done = False

    def done(self):
        if self._done:
            return True
        if self.cluster == "debug":  # the debug executor runs the job here, when asked
            # (its result() would open pdb on a failed job; exception() returns the error)
            error = self.job.exception()
            self._error = None if error is None else _one_line(error)
            self._done = True
            return True
        if not self.job.done():
            return False
        try:
            self.job.result()
        except Exception as error:  # submitit's FailedJobError holds the job's traceback
            self._error = _one_line(error)
        self._done = True
        return True

    def error(self):
        return self._error


class Submitit:
    """Jobs through ``submitit.AutoExecutor`` (``map_array``: a SLURM job array)."""

    name = "submitit"

    def __init__(self, launch, out):
        import submitit

        self.cluster = cluster_of(launch)
        self.folder = pathlib.Path(launch.folder or pathlib.Path(out) / "launch" / "submitit")
        self.folder = self.folder.absolute()
        self.executor = submitit.AutoExecutor(folder=self.folder, cluster=self.cluster)
        params = {"timeout_min": launch.timeout_min or TIMEOUT_MIN, "nodes": 1,
                  "tasks_per_node": 1, "gpus_per_node": launch.gpus_per_job,
                  "cpus_per_task": launch.cpus_per_job, "name": "pvr"}  # fmt: skip
        if self.cluster == "slurm":
            params.update(slurm_partition=launch.partition,
                          slurm_array_parallelism=launch.array_parallelism)  # fmt: skip
        self.executor.update_parameters(**params)
        # The local executor starts every job at once: here, at most this many run together.
        cores = os.cpu_count() or 1
        self.parallel = None
        if self.cluster == "local":
            self.parallel = launch.array_parallelism or max(
                1, cores // launch.cpus_per_job if launch.cpus_per_job else 1
            )

    def where(self):
        return f"submitit {self.cluster} executor (logs in {self.folder})"

    def submit(self, jobs):
        if not jobs:
            return []
        if self.cluster == "local":  # its job processes outlive this one: not on its output
            with _children_quiet():
                found = self.executor.map_array(_call, jobs)
        else:
            found = self.executor.map_array(_call, jobs)
        return [SubmititHandle(job, self.cluster) for job in found]

    def after_stop(self):
        return "the submitted jobs go on" if self.cluster != "debug" else "no job runs now"

    def in_flight(self, job_id):
        """Whether a job submitted earlier is still queued or running."""
        if self.cluster == "debug":
            return False
        if self.cluster == "local":  # the job's id is its controller's process id
            return _local_alive(job_id)
        import submitit

        try:
            state = submitit.SlurmJob(self.folder, job_id).state
        except Exception:
            return False
        return str(state).upper() in LIVE_SLURM

    def close(self):
        pass


def _call(job):
    return job()


@contextlib.contextmanager
def _children_quiet():
    """Processes started inside get /dev/null for stdout and stderr, not this process's: the
    local executor's jobs (which write their own log files) would otherwise hold a pipe this
    process writes to open until they end, and a caller reading it to its end would wait."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _local_alive(job_id):
    """Whether the local executor's controller ``job_id`` (a process id) still runs."""
    try:
        cmdline = files.read_plain(f"/proc/{int(job_id)}/cmdline", 1 << 16)
    except (OSError, ValueError):  # no such process, or not an id (DamagedFile: ValueError)
        return False
    return b"submitit" in cmdline


class RayHandle:
    def __init__(self, ref, ray):
        self.ref, self.ray = ref, ray
        self.job_id = ref.task_id().hex()
        self.log = "Ray's worker logs (logs/worker-*.out in the Ray session folder)"
        self._error, self._done = None, False

    def done(self):
        if self._done:
            return True
        ready, _ = self.ray.wait([self.ref], timeout=0)
        if not ready:
            return False
        try:
            self.ray.get(self.ref)
        except Exception as error:  # RayTaskError wraps the job's JobFailed
            cause = getattr(error, "cause", None)
            self._error = _one_line(cause if cause is not None else error)
        self._done = True
        return True

    def error(self):
        return self._error


class Ray:
    """Jobs as Ray tasks (one per job, no retries: a job killed with its driver is
    resubmitted by the next command, and resumes)."""

    name = "ray"

    def __init__(self, launch, out):
        import ray

        self.ray = ray
        address = ray_address(launch)
        # The jobs' own output stays in Ray's worker logs; this command prints each run as
        # it is recorded, and a failed job's last line.
        kwargs = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
        if address is None:  # a Ray of this machine, for this grid: a small object store
            kwargs.update(object_store_memory=100 << 20, num_cpus=os.cpu_count() or 1)
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as error:
            from pvr_keras.errors import ConfigError

            raise ConfigError(f"--ray.address {address}: {_one_line(error)}") from None
        self.address = address
        self.remote = ray.remote(num_cpus=launch.cpus_per_run if launch.cpus_per_run is not None
                                 else 1, num_gpus=launch.gpus_per_run or 0,
                                 max_retries=0)(_call)  # fmt: skip

    def where(self):
        return f"Ray at {self.address}" if self.address else "a Ray started on this machine"

    def submit(self, jobs):
        return [RayHandle(self.remote.remote(job), self.ray) for job in jobs]

    def after_stop(self):
        return "its Ray tasks end with it"

    def in_flight(self, job_id):
        return False  # a Ray task ends with its driver: the next command resubmits its runs

    def close(self):
        self.ray.shutdown()


def make(launch, out):
    """The executor of ``launch`` (submitit or Ray), for results in ``out``."""
    return {"submitit": Submitit, "ray": Ray}[launch.launcher](launch, out)


def poll_interval(started):
    """Seconds between looks at running jobs: often at first, then every 10 s."""
    return 1.0 if time.perf_counter() - started < 60 else 10.0
