import ipaddress
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

import grpc
import keras
import pytest
from keras_tuner.src.distribute import oracle_client

from pvr_keras import tuning
from pvr_keras.tuning import distributed

REPO = pathlib.Path(__file__).resolve().parents[2]
VARS = (distributed.ENV_TUNER_ID, distributed.ENV_ORACLE_IP, distributed.ENV_ORACLE_PORT)


@pytest.fixture
def clean_env(monkeypatch):
    """No keras-tuner variables; whatever configure sets is undone after the test."""
    for name in VARS:
        monkeypatch.setenv(name, "")  # records the original, so teardown restores it
        monkeypatch.delenv(name)
    monkeypatch.setattr(oracle_client, "TIMEOUT", oracle_client.TIMEOUT)
    return monkeypatch


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_alone_without_ids_or_port(clean_env):
    assert tuning.configure() == "single"
    assert not any(name in os.environ for name in VARS)


def test_chief_binds_loopback_by_default(clean_env):
    assert tuning.configure("chief", oracle_port=8123) == "chief"
    assert [os.environ[name] for name in VARS] == ["chief", "127.0.0.1", "8123"]


def test_environment_is_read(clean_env):
    clean_env.setenv(distributed.ENV_TUNER_ID, "chief")
    clean_env.setenv(distributed.ENV_ORACLE_PORT, "8124")
    clean_env.setenv(distributed.ENV_ORACLE_IP, "10.1.2.3")
    assert tuning.configure() == "chief"
    assert os.environ[distributed.ENV_ORACLE_IP] == "10.1.2.3"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tuner_id": "tuner0"}, "needs both a tuner id .* received tuner id 'tuner0', port None"),
        ({"oracle_port": 8000}, "needs both a tuner id"),
        ({"tuner_id": "chief", "oracle_port": "http"}, r"integer in \[1, 65535\]; received 'http'"),
        ({"tuner_id": "chief", "oracle_port": 0}, r"integer in \[1, 65535\]"),
        ({"tuner_id": "chief", "oracle_port": 70000}, r"integer in \[1, 65535\]"),
        ({"tuner_id": "chief", "oracle_port": True}, r"integer in \[1, 65535\]"),
        ({"tuner_id": "chief", "oracle_port": 8000, "chief_timeout": 0}, "must be > 0"),
        ({"tuner_id": "chief", "oracle_port": 8000, "chief_timeout": "1"}, "number of seconds"),
    ],
)
def test_bad_distributed_settings(clean_env, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tuning.configure(**kwargs)


def test_worker_without_chief_fails_in_bounded_time(clean_env):
    port = _free_port()  # nothing listens there
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=rf"chief not reachable at 127.0.0.1:{port} after 1.5 s"):
        tuning.configure("tuner0", oracle_port=port, chief_timeout=1.5)
    assert 1.4 < time.monotonic() - start < 10
    assert oracle_client.TIMEOUT == 1.5  # every later call to the chief is bounded too


def _listening_addresses(port):
    """Addresses listening on ``port`` (from /proc/net/tcp and tcp6; IPv4-mapped shown as IPv4)."""
    found = []
    for table in ("tcp", "tcp6"):
        for line in pathlib.Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)  # 32-bit words in host (little-endian) order
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            ip = ipaddress.ip_address(raw)
            found.append(str(getattr(ip, "ipv4_mapped", None) or ip))
    return found


def _trials(folder):
    """{trial id: trial.json dict} written so far (a half-written file is skipped)."""
    trials = {}
    for path in folder.glob("trial_*/trial.json"):
        try:
            trial = json.loads(path.read_text())
        except (json.JSONDecodeError, OSError):
            continue
        trials[trial["trial_id"]] = trial
    return trials


def _wait(condition, timeout, what, procs):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if any(p.poll() not in (None, 0) for p in procs):
            break
        time.sleep(0.05)
    raise AssertionError(f"timed out or crashed waiting for {what}")


@pytest.mark.slow
@pytest.mark.skipif(
    keras.backend.backend() == "jax",
    reason="keras-tuner's chief/worker protocol does not depend on the backend; under JAX each "
    "of the four processes imports JAX and TensorFlow and the test takes ~3 min here (it passes)",
)
def test_chief_and_two_workers_survive_a_killed_worker(tmp_path):
    """A chief and two workers on 127.0.0.1 finish the search although tuner1 is SIGKILLed
    while training its first trial and started again: keras-tuner gives the restarted
    worker the same trial (same id and values), it reruns it, and every trial completes."""
    port = _free_port()
    args = [
        *("--num-examples", "2048", "--val-examples", "256", "--epochs", "2"),
        *("--max-trials", "3", "--directory", str(tmp_path), "--project", "p"),
        *("--oracle-port", str(port), "--chief-timeout", "120"),
    ]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONUNBUFFERED="1")
    for name in VARS:
        env.pop(name, None)
    folder = tmp_path / "p"

    def start(tuner_id, tag=""):
        log = tmp_path / f"{tuner_id}{tag}.log"
        cmd = [sys.executable, str(REPO / "recipes" / "tune.py"), *args, "--tuner-id", tuner_id]
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        return proc, log

    chief, chief_log = start("chief")
    worker0, _ = start("tuner0")
    worker1, log1 = start("tuner1")
    procs = [chief, worker0, worker1]
    try:
        _wait(lambda: _listening_addresses(port), 120, "the chief to listen", procs)
        assert _listening_addresses(port) == ["127.0.0.1"]  # loopback only

        def tuner1_trial():
            try:
                ongoing = json.loads((folder / "oracle.json").read_text())["ongoing_trials"]
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                return None
            return ongoing.get("tuner1")

        # Kill tuner1 once it trains its first trial (Keras has printed a step).
        _wait(lambda: tuner1_trial() and "/step" in log1.read_text(), 180, "tuner1 to train", procs)
        killed = tuner1_trial()
        worker1.send_signal(signal.SIGKILL)
        worker1.wait(timeout=30)
        before = _trials(folder)[killed]
        assert before["status"] == "RUNNING"  # killed mid-trial
        # The search goes on: tuner0 completes a trial after the kill.
        done = {i for i, t in _trials(folder).items() if t["status"] == "COMPLETED"}
        _wait(
            lambda: {i for i, t in _trials(folder).items() if t["status"] == "COMPLETED"} - done,
            180,
            "tuner0 to complete a trial after the kill",
            [chief, worker0],
        )
        assert _trials(folder)[killed]["status"] == "RUNNING"  # still held for tuner1
        worker1, log1 = start("tuner1", tag="_restarted")
        procs = [chief, worker0, worker1]
        for proc in procs:
            proc.wait(timeout=240)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert [p.returncode for p in procs] == [0, 0, 0], chief_log.read_text()[-3000:]
    trials = _trials(folder)
    assert sorted(trials) == ["0", "1", "2"]  # max_trials: no extra trial for the killed one
    assert {t["status"] for t in trials.values()} == {"COMPLETED"}
    assert trials[killed]["hyperparameters"]["values"] == before["hyperparameters"]["values"]
    assert "the chief has no trials left" in log1.read_text()
    best = json.loads((folder / "best.json").read_text())
    assert best["role"] == "chief" and best["status"] == {"COMPLETED": 3}
    assert best["best"][0]["val_accuracy"] == max(t["score"] for t in trials.values())


class _Unavailable(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.DEADLINE_EXCEEDED


class _LosesChief:
    def search(self, *args, **kwargs):
        raise _Unavailable()


def test_a_lost_chief_is_reported(clean_env):
    clean_env.setenv(distributed.ENV_ORACLE_IP, "127.0.0.1")
    clean_env.setenv(distributed.ENV_ORACLE_PORT, "8125")
    clean_env.setattr(oracle_client, "TIMEOUT", 7.0)
    with pytest.raises(
        RuntimeError,
        match=r"lost the keras-tuner chief at 127.0.0.1:8125 "
        r"\(DEADLINE_EXCEEDED: no answer within 7 s\)\. Start the chief again",
    ):
        tuning.search(_LosesChief())
