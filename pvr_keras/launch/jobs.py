"""A job of a launched grid: the recipe's own command line, run on the worker for some of
the grid's runs, in a process of its own.

The job runs ``python RECIPE ARGS --launcher local`` in the submitting folder, with
``PVR_LAUNCH_JOB`` naming its runs, launcher, job id and host. That process is the local grid
restricted to those runs: it measures the engine on the machine that trains, claims each run
(``sweeps.claims``; a run that another live job holds is waited for, then skipped when that
job recorded it), trains into the same run folders, appends the same ``results.jsonl`` lines
and records the launcher, job id and host in the run's ``starts``. A job killed anywhere
(a time limit, a preemption, a kill of its launcher) leaves each run at its last epoch's
checkpoint, and the next job of that run resumes from it.
"""

import collections
import ctypes
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading

from pvr_keras.training.records import JOB_ENV

FAILED_RUN = 3  # a recipe's exit status for a run that finished but failed (cli.FAILED_RUN)
# What a launcher changes in a job's environment that would change a run: Ray sets
# OMP_NUM_THREADS to the task's CPUs (1 by default); the job sets it back to the submitting
# shell's value (or unsets it).
RESTORED = ("OMP_NUM_THREADS",)
TAIL_LINES = 20


class JobFailed(RuntimeError):
    """A job whose process ended with an error (its runs are not all recorded)."""


def _job_id(launcher):
    """This process's job id under ``launcher`` (None where it cannot be told)."""
    try:
        if launcher == "submitit":
            import submitit

            return str(submitit.JobEnvironment().job_id)
        if launcher == "ray":
            import ray

            return ray.get_runtime_context().get_task_id()
    except Exception:  # not inside a job of that launcher (the debug executor, a test)
        return None
    return None


def _die_with_parent():
    """In the job's child: end when the job's process ends (a launcher that kills or
    requeues the job kills the training with it; Linux only)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclasses.dataclass(frozen=True)
class Job:
    """One job: ``script`` (the recipe's path), ``argv`` (its flags without the launcher's),
    ``cwd`` (the submitting folder), ``runs`` (run ids), ``launcher`` and ``env`` (the
    submitting shell's values of ``RESTORED``: None, unset). Calling it trains its runs and
    returns ``{"runs", "status"}``; a process that fails raises ``JobFailed`` with its last
    line. ``checkpoint`` makes it a submitit ``Checkpointable``: at a time limit or a
    preemption submitit requeues the same job, which resumes its runs."""

    script: str
    argv: tuple
    cwd: str
    runs: tuple
    launcher: str
    env: tuple = ()  # ((name, value or None), ...)

    def command(self):
        return [sys.executable, self.script, *self.argv, "--launcher", "local"]

    def environment(self, environ=None, job_id=None):
        """The process's environment: this one, the restored variables, the job's runs."""
        env = dict(os.environ if environ is None else environ)
        for name, value in self.env:
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        env[JOB_ENV] = json.dumps(
            {
                "runs": list(self.runs),
                "launcher": self.launcher,
                "job": job_id,
                "host": socket.gethostname(),
            }
        )
        return env

    def __call__(self):
        if not os.path.isdir(self.cwd):
            raise JobFailed(
                f"the submitting folder {self.cwd} is not on this worker "
                f"({socket.gethostname()}): run from a shared filesystem"
            )
        env = self.environment(job_id=_job_id(self.launcher))
        process = subprocess.Popen(
            self.command(),
            cwd=self.cwd,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            preexec_fn=_die_with_parent,
        )
        tail = collections.deque(maxlen=TAIL_LINES)

        def forward():
            for line in process.stderr:
                sys.stderr.write(line)
                tail.append(line.rstrip())

        reader = threading.Thread(target=forward, daemon=True)
        reader.start()
        status = process.wait()
        reader.join(timeout=10)
        sys.stderr.flush()
        if status not in (0, FAILED_RUN):
            last = next((line for line in reversed(tail) if line.strip()), "no output")
            raise JobFailed(f"exit status {status} on {socket.gethostname()}: {last}")
        return {"runs": list(self.runs), "status": status}

    def checkpoint(self, *args, **kwargs):
        """submitit's requeue hook: the same job again (its runs resume from their folders)."""
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, *args, **kwargs)


def job_of(script, argv, runs, launcher):
    """A ``Job`` of ``runs`` submitted from this process's folder and environment."""
    return Job(
        script=os.path.abspath(script),
        argv=tuple(argv),
        cwd=os.getcwd(),
        runs=tuple(runs),
        launcher=launcher,
        env=tuple((name, os.environ.get(name)) for name in RESTORED),
    )
