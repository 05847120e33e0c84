"""The cluster of a multi-host run, read from its environment and checked before any engine
starts: ``TF_CONFIG`` on TensorFlow, Keras's ``KERAS_DISTRIBUTION_*`` variables on JAX
(``training.distribute.setup`` reads them). Nothing here imports a framework.
"""

import os

from pvr_keras import files

JAX_CLUSTER_VARS = (
    "KERAS_DISTRIBUTION_JOB_ADDRESSES",
    "KERAS_DISTRIBUTION_NUM_PROCESSES",
    "KERAS_DISTRIBUTION_PROCESS_ID",
)
TF_CONFIG_JOBS = ("chief", "worker")


def parse_tf_config(text):
    """Checks a ``TF_CONFIG`` for multi-worker training; returns (cluster, task type, index).

    Raises:
        ValueError: not JSON, no ``cluster`` of "host:port" lists for ``chief``/``worker``
            jobs, or a ``task`` that is not one of them.

    Example:
        >>> parse_tf_config('{"cluster": {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]},'
        ...                 ' "task": {"type": "worker", "index": 1}}')[1:]
        ('worker', 1)
    """
    where = "TF_CONFIG"
    try:
        config = files.parse_json(text, where)
    except ValueError as e:
        raise ValueError(f"{where} must be JSON; received {text[:200]!r} ({e})") from None
    if not isinstance(config, dict) or not isinstance(config.get("cluster"), dict):
        raise ValueError(
            f'{where} must be {{"cluster": {{"worker": ["host:port", ...]}}, "task": '
            f'{{"type": "worker", "index": i}}}}; received {text!r}'
        )
    cluster = config["cluster"]
    for job, addresses in cluster.items():
        if job not in TF_CONFIG_JOBS:
            raise ValueError(
                f"{where} cluster jobs must be among {', '.join(TF_CONFIG_JOBS)} for "
                f"MultiWorkerMirroredStrategy; received job {job!r}"
            )
        if (
            not isinstance(addresses, list)
            or not addresses
            or not all(isinstance(a, str) and a.rpartition(":")[2].isdigit() for a in addresses)
        ):
            raise ValueError(
                f'{where} cluster["{job}"] must be a non-empty list of "host:port"; '
                f"received {addresses!r}"
            )
    task = config.get("task")
    if not isinstance(task, dict) or task.get("type") not in cluster:
        raise ValueError(
            f"{where} task must name a job of the cluster ({', '.join(cluster)}) and an index; "
            f"received {task!r}"
        )
    index = task.get("index")
    size = len(cluster[task["type"]])
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < size:
        raise ValueError(
            f"{where} task index must be an integer in [0, {size}) for job "
            f"{task['type']!r}; received {index!r}"
        )
    return cluster, task["type"], index


def parse_jax_cluster(environ=None):
    """Reads Keras's multi-process variables; returns None or (addresses, count, index).

    Raises:
        ValueError: some but not all of ``JAX_CLUSTER_VARS`` set, or values that are not
            "host:port", a positive count, and an index in [0, count).
    """
    environ = os.environ if environ is None else environ
    given = {name: environ.get(name) for name in JAX_CLUSTER_VARS}
    if not any(given.values()):
        return None
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise ValueError(
            f"a multi-process JAX run needs all of {', '.join(JAX_CLUSTER_VARS)}; "
            f"missing {', '.join(missing)}"
        )
    addresses, count, index = given.values()
    if not all(a.rpartition(":")[2].isdigit() for a in addresses.split(",")):
        raise ValueError(
            f'KERAS_DISTRIBUTION_JOB_ADDRESSES must be "host:port" (the coordinator, process '
            f"0), or a comma-separated list of them; received {addresses!r}"
        )
    if not count.isdigit() or int(count) < 1:
        raise ValueError(
            f"KERAS_DISTRIBUTION_NUM_PROCESSES must be a positive integer; received {count!r}"
        )
    if not index.isdigit() or int(index) >= int(count):
        raise ValueError(
            f"KERAS_DISTRIBUTION_PROCESS_ID must be an integer in [0, {count}); received {index!r}"
        )
    return addresses, int(count), int(index)
