"""Distributed search with keras-tuner's own chief/worker mode, on loopback unless told otherwise.

keras-tuner runs one oracle, the chief (``KERASTUNER_TUNER_ID=chief``), which hands out trials
over gRPC at ``KERASTUNER_ORACLE_IP:KERASTUNER_ORACLE_PORT``, and any number of workers
(``KERASTUNER_TUNER_ID=tuner0``, ``tuner1``, ...) that train them. All share the tuner's
directory. ``configure`` sets these variables from arguments or the environment, defaults the
address to 127.0.0.1 (the chief binds exactly that address), and bounds how long a worker waits
for its chief: keras-tuner's client would wait up to an hour per call.

A worker killed mid-trial (measured with keras-tuner 1.4.8): the chief keeps that trial
RUNNING, assigned to the dead worker's id, and the other workers go on with new trials. When
a worker with the same ``KERASTUNER_TUNER_ID`` starts again, the chief hands it the same trial
(same trial id and hyperparameters) and it trains it again from the start. The chief finishes
only once every trial has ended, so a dead worker must be restarted (any supervisor that
restarts failed processes with the same environment does it).

A chief that dies: each worker fails within about twice ``chief_timeout`` with a message
(``search``). Started again on the same directory and project, the chief reloads the search
and queues the trials that were running for retry; restarted workers then finish it.
"""

import os

ENV_TUNER_ID = "KERASTUNER_TUNER_ID"
ENV_ORACLE_IP = "KERASTUNER_ORACLE_IP"
ENV_ORACLE_PORT = "KERASTUNER_ORACLE_PORT"
LOOPBACK = "127.0.0.1"
CHIEF_TIMEOUT = 120.0


def check_settings(tuner_id=None, oracle_port=None, chief_timeout=CHIEF_TIMEOUT):
    """Checks the distributed settings (arguments, else ``KERASTUNER_*``) without acting on
    them: both a tuner id and a port, or neither; a port in 1..65535; a timeout > 0.
    Returns ``(tuner_id, port)``, both None for a search in this process alone.

    Raises:
        ValueError: what is wrong.
    """
    tuner_id = tuner_id or os.environ.get(ENV_TUNER_ID)
    port = oracle_port if oracle_port is not None else os.environ.get(ENV_ORACLE_PORT)
    if tuner_id is None and port is None:
        return None, None
    if tuner_id is None or port is None:
        raise ValueError(
            "distributed tuning needs both a tuner id (chief, tuner0, ...) and the chief's "
            f"port ({ENV_TUNER_ID}, {ENV_ORACLE_PORT}); received tuner id {tuner_id!r}, "
            f"port {port!r}"
        )
    port = _check_port(port)
    if isinstance(chief_timeout, bool) or not isinstance(chief_timeout, int | float):
        raise ValueError(f"chief_timeout must be a number of seconds; received {chief_timeout!r}")
    if not chief_timeout > 0:
        raise ValueError(f"chief_timeout must be > 0 seconds; received {chief_timeout!r}")
    return str(tuner_id), port


def configure(tuner_id=None, oracle_ip=None, oracle_port=None, *, chief_timeout=CHIEF_TIMEOUT):
    """Sets keras-tuner's distributed variables for this process and returns its role.

    With neither a tuner id nor a port (as arguments or ``KERASTUNER_*`` variables) the search
    runs in this process alone. A worker waits at most ``chief_timeout`` seconds for the chief
    here, and at most that long for each later answer from it.

    Args:
        tuner_id: ``chief`` (an id containing "chief", keras-tuner's rule) or a worker id
            such as ``tuner0``; ids must be unique among workers.
        oracle_ip: address the chief binds and workers dial; default 127.0.0.1.
        oracle_port: the chief's port.
        chief_timeout: seconds a worker waits for the chief before failing.

    Returns:
        ``"single"``, ``"chief"`` or ``"worker"``.

    Raises:
        ValueError: a tuner id without a port or the reverse, a bad port or timeout.
        TimeoutError: a worker whose chief does not answer within ``chief_timeout``.

    Example:
        >>> configure("tuner0", oracle_port=8000, chief_timeout=60)   # doctest: +SKIP
        'worker'
    """
    ip = oracle_ip or os.environ.get(ENV_ORACLE_IP) or LOOPBACK
    tuner_id, port = check_settings(tuner_id, oracle_port, chief_timeout)
    if tuner_id is None:
        return "single"
    os.environ[ENV_TUNER_ID] = str(tuner_id)
    os.environ[ENV_ORACLE_IP] = ip
    os.environ[ENV_ORACLE_PORT] = str(port)
    if "chief" in str(tuner_id):
        return "chief"
    from pvr_keras import compat

    compat.set_chief_timeout(chief_timeout)  # keras-tuner's own wait is an hour per call
    wait_for_chief(ip, port, chief_timeout)
    return "worker"


def _check_port(port):
    try:
        value = int(port)
    except (TypeError, ValueError):
        value = None
    if value is None or isinstance(port, bool) or not 1 <= value <= 65535:
        raise ValueError(f"oracle port must be an integer in [1, 65535]; received {port!r}")
    return value


def wait_for_chief(ip, port, timeout):
    """Waits until the chief's gRPC server at ``ip:port`` accepts connections.

    Raises:
        TimeoutError: nothing answered within ``timeout`` seconds.
    """
    import grpc

    channel = grpc.insecure_channel(f"{ip}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        raise TimeoutError(
            f"keras-tuner chief not reachable at {ip}:{port} after {timeout:g} s "
            f"({ENV_TUNER_ID}={os.environ.get(ENV_TUNER_ID)}): start the chief "
            f"({ENV_TUNER_ID}=chief) on that address and port first, check "
            f"{ENV_ORACLE_IP}/{ENV_ORACLE_PORT}, or allow a longer chief timeout"
        ) from None
    finally:
        channel.close()


def search(tuner, *args, **kwargs):
    """``tuner.search`` with a clear error when a worker loses its chief.

    On the chief this serves trials until every trial has ended; on a worker it trains trials
    until the chief has none left; alone it runs the whole search.
    """
    import grpc

    from pvr_keras import compat

    try:
        return tuner.search(*args, **kwargs)
    except grpc.RpcError as e:
        address = f"{os.environ.get(ENV_ORACLE_IP)}:{os.environ.get(ENV_ORACLE_PORT)}"
        raise RuntimeError(
            f"lost the keras-tuner chief at {address} ({e.code().name}: no answer within "
            f"{compat.chief_timeout():g} s). Start the chief again on the same directory and "
            "project (it reloads the search and queues unfinished trials for retry), then the "
            "workers"
        ) from e
