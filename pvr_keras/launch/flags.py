"""The launcher flags of every grid (``--launcher``, ``--submitit.*``, ``--ray.*``,
``--dry-run``): read beside a recipe's own flags, kept out of its config (where a grid trains
is no part of what it is), and checked before anything is submitted."""

import argparse
import dataclasses
import importlib.util
import os
import pathlib
import socket
import tempfile

from pvr_keras.errors import ConfigError

LAUNCHERS = ("local", "submitit", "ray")
CLUSTERS = ("slurm", "local", "debug")  # submitit's executors
EXTRA = "cluster"  # pip install -e ".[cluster]"
PACKAGES = {"submitit": "submitit", "ray": "ray"}  # the module each launcher imports
RAY_WAIT_S = 10.0  # how long a Ray address may take to answer before it is refused


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _count(text):
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def _share(text):  # a Ray resource: a fraction of a CPU or GPU is allowed
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"
_count.__name__ = "non-negative integer"
_share.__name__ = "non-negative number"

# (launcher, option, type or None for a switch, choices, help)
OPTIONS = (
    (
        "submitit",
        "cluster",
        str,
        CLUSTERS,
        "submitit's executor (default: submitit's choice, SLURM where its commands are here)",
    ),
    (
        "submitit",
        "folder",
        str,
        None,
        "where submitit keeps its jobs and logs (default: OUT/launch/submitit)",
    ),
    ("submitit", "partition", str, None, "the SLURM partition"),
    (
        "submitit",
        "timeout-min",
        _positive_int,
        None,
        "each job's time limit in minutes; a job that reaches it requeues itself and resumes its "
        "runs from their last checkpoints (default: 1440)",
    ),
    ("submitit", "gpus-per-job", _count, None, "GPUs of each job (default: 0)"),
    ("submitit", "cpus-per-job", _positive_int, None, "CPUs of each job (default: the cluster's)"),
    (
        "submitit",
        "array-parallelism",
        _positive_int,
        None,
        "jobs running at once (default: SLURM's limit; the local executor: one per "
        "--submitit.cpus-per-job of this machine's cores, else 1)",
    ),
    (
        "submitit",
        "detach",
        None,
        None,
        "submit and return; the same command again collects the finished runs and submits the "
        "missing ones",
    ),
    (
        "ray",
        "address",
        str,
        None,
        "the Ray cluster (default: RAY_ADDRESS, else a Ray started here for this grid)",
    ),
    ("ray", "cpus-per-run", _share, None, "CPUs Ray reserves for each job (default: 1)"),
    ("ray", "gpus-per-run", _share, None, "GPUs Ray reserves for each job (default: 0)"),
)


def _dest(launcher, option):
    return f"launch__{launcher}__{option.replace('-', '_')}"


@dataclasses.dataclass(frozen=True)
class Launch:
    """Where a grid's runs train: ``launcher`` (``local``: here, one after another, the
    default; ``submitit``; ``ray``), its options (``None``: not given), ``dry_run`` (print
    the grid's cost, submit nothing) and ``given``: the launcher flags given, as typed."""

    launcher: str = "local"
    cluster: str | None = None
    folder: str | None = None
    partition: str | None = None
    timeout_min: int | None = None
    gpus_per_job: int | None = None
    cpus_per_job: int | None = None
    array_parallelism: int | None = None
    detach: bool = False
    address: str | None = None
    cpus_per_run: float | None = None
    gpus_per_run: float | None = None
    dry_run: bool = False
    given: tuple = ()

    @property
    def remote(self):
        """Whether the runs train in jobs (any launcher but ``local``)."""
        return self.launcher != "local"


class _Abbreviated(argparse.Action):
    """A launcher flag that reached a recipe's parser: only an abbreviation of it can (``of``
    takes the flags given in full first), and an abbreviation is refused."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{self.option_strings[0]} was abbreviated: give the launcher's flags in full")


def add_flags(parser, *, dry_run=True, help_only=False):
    """Adds the launcher flags to ``parser`` (an argparse parser), in a group of their own;
    ``dry_run``: also ``--dry-run`` (a recipe that has its own leaves it out). ``help_only``:
    the flags are shown in ``--help`` and refused if they reach the parser (``of`` reads
    them first)."""
    group = parser.add_argument_group(
        "where the runs train (docs/scaling.md, 'A study on SLURM' and 'A study on Ray')"
    )

    def add(names, dest, text, kind=None, choices=None, switch=False):
        if help_only:
            shown = "{" + ",".join(choices) + "}" if choices else dest.split("__")[-1].upper()
            group.add_argument(
                *names,
                action=_Abbreviated,
                dest=dest,
                help=text,
                nargs=0 if switch else None,
                metavar=None if switch else shown,
            )
        elif switch:
            group.add_argument(
                *names, action="store_const", const=True, default=None, dest=dest, help=text
            )
        else:
            group.add_argument(
                *names, type=kind, choices=choices, default=None, dest=dest, help=text
            )

    add(
        ["--launcher"],
        "launch__launcher",
        "local: here, one run after another (default); "
        "submitit: one job per run (or population) as a job array; ray: one Ray task per run",
        choices=LAUNCHERS,
    )
    for launcher, option, kind, choices, text in OPTIONS:
        add(
            [f"--{launcher}.{option}"],
            _dest(launcher, option),
            text,
            kind,
            choices,
            switch=kind is None,
        )
    if dry_run:
        add(
            ["--dry-run"],
            "launch__dry_run",
            "print the grid's runs, steps and estimated time, and stop",
            switch=True,
        )


def parser(*, dry_run=True):
    """A parser of the launcher flags alone (``strip``, ``of``)."""
    found = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_flags(found, dry_run=dry_run)
    return found


def from_args(args):
    """The ``Launch`` of parsed ``args`` (a namespace holding the launcher flags)."""
    values, given = {}, []
    launcher = getattr(args, "launch__launcher", None)
    if launcher is not None:
        given.append("--launcher")
    for name, option, _, _, _ in OPTIONS:
        value = getattr(args, _dest(name, option), None)
        if value is not None:
            values[option.replace("-", "_")] = value
            given.append(f"--{name}.{option}")
    dry = bool(getattr(args, "launch__dry_run", None))
    return Launch(launcher=launcher or "local", dry_run=dry, given=tuple(given), **values)


def of(argv, *, dry_run=True):
    """``(Launch, the rest of argv)``: the launcher flags of a command line and the command
    line without them (the job's own command line)."""
    args, rest = parser(dry_run=dry_run).parse_known_args(list(argv))
    return from_args(args), rest


def check(launch, out, *, full=True):
    """Refuses, in one line and before anything is submitted, a launcher option of another
    launcher, a launcher whose package is not installed, and (``full``: a grid about to be
    submitted, not ``--dry-run``) an ``out`` the workers could not see and a Ray address that
    does not answer.

    Raises:
        ConfigError: what is wrong.
    """
    mine = [g for g in launch.given if g.startswith("--") and "." in g]
    other = [g for g in mine if not g.startswith(f"--{launch.launcher}.")]
    if other:
        raise ConfigError(
            f"{other[0]} is a flag of --launcher {other[0][2:].split('.')[0]}; this command's "
            f"launcher is {launch.launcher}"
        )
    if not launch.remote:
        return
    module = PACKAGES[launch.launcher]
    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            f"--launcher {launch.launcher} needs the {module} package, which is not installed: "
            f'pip install -e ".[{EXTRA}]"'
        )
    if launch.launcher == "submitit" and launch.detach and launch.cluster == "debug":
        raise ConfigError(
            "--submitit.detach with --submitit.cluster debug: the debug executor runs each job "
            "in this process when it is waited for, so a detached grid would train nothing"
        )
    if not full:
        return
    if launch.launcher == "submitit" and cluster_of(launch) not in ("local", "debug"):
        _shared(out, f"--submitit.cluster {cluster_of(launch)}")
    if launch.launcher == "ray":
        address = ray_address(launch)
        if address is not None:
            host = _answers(address)
            if host not in (None, "localhost", "127.0.0.1", "::1", socket.gethostname()):
                _shared(out, f"--ray.address {address}")


def cluster_of(launch):
    """The submitit executor a launch uses: the one named, else submitit's own choice."""
    if launch.cluster:
        return launch.cluster
    from submitit import AutoExecutor

    try:
        return AutoExecutor.which()
    except RuntimeError:
        return "local"


def ray_address(launch):
    """The Ray cluster to join (``--ray.address``, else ``RAY_ADDRESS``); None: start one here."""
    found = launch.address or os.environ.get("RAY_ADDRESS") or None
    return None if found in (None, "local") else found


def _shared(out, where):
    """A folder the workers of a cluster cannot see (a local temporary folder) is refused."""
    out = pathlib.Path(out).absolute()
    local = {
        pathlib.Path(tempfile.gettempdir()).resolve(),
        pathlib.Path("/tmp"),
        pathlib.Path("/dev/shm"),
    }
    for folder in local:
        if out == folder or folder in out.resolve().parents or folder in out.parents:
            raise ConfigError(
                f"--out {out} is in this machine's temporary folder {folder}, which the workers "
                f"of {where} do not see: put the results on a filesystem they share"
            )


def _answers(address):
    """A Ray address that is ``host:port`` (or ``ray://host:port``) must accept a connection
    within ``RAY_WAIT_S``; ``auto`` is looked up by Ray itself. Returns the host (None for
    ``auto``)."""
    if address == "auto":
        return None
    text = address.split("://", 1)[-1]
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"--ray.address {address}: give auto, host:port or ray://host:port (a Ray head's "
            f"address)"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_WAIT_S).close()
    except OSError as error:
        raise ConfigError(
            f"--ray.address {address} does not answer ({error.strerror or error}, waited up to "
            f"{RAY_WAIT_S:.0f} s): start the Ray head there (ray start --head) or give its address"
        ) from None
    return host.strip("[]")
