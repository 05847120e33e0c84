"""Grids on a cluster: every grid's runs as jobs of submitit (SLURM job arrays; its local and
debug executors on one machine) or Ray, resumable, in one command.

    python recipes/token_pvr.py --seed 0 1 2 3 --launcher submitit --submitit.cluster local
    python recipes/token_sweep.py --sweep size_window --preset paper --launcher submitit \\
        --submitit.partition gpu --submitit.gpus-per-job 1 --submitit.timeout-min 240
    python recipes/fast_slow.py --launcher ray --ray.address auto

A job is the recipe's own command line for some of the grid's runs (``jobs``), so a launched
run is the run a local grid trains: the same id, folder, record and ``results.jsonl`` line,
the engine measured on the worker, and the launcher, job id and host in its ``starts``. The
submitting command watches ``results.jsonl`` and reports each run as its line lands, and a job
that fails by its runs' ids while the others go on (``driver``). ``--submitit.detach`` submits
and returns; the same command again collects. ``--dry-run`` prints what the grid costs
(``cost``). The flags are read beside a recipe's own and kept out of its config (``flags``);
the executors are in ``executors``.
"""

from pvr_keras.launch.driver import Detached, DryRun, JobDone, JobsFailed, launch_grid, read_jobs
from pvr_keras.launch.flags import LAUNCHERS, Launch, add_flags, check, from_args, of
from pvr_keras.launch.jobs import Job, JobFailed, job_of

__all__ = [
    "LAUNCHERS", "Detached", "DryRun", "Job", "JobDone", "JobFailed", "JobsFailed", "Launch",
    "add_flags", "check", "from_args", "job_of", "launch_grid", "of", "read_jobs",
]  # fmt: skip
