import json
import os
import signal
import socket
import time

import pytest

from pvr_keras.errors import UnsafePath
from pvr_keras.sweeps import Claims
from tests.bounded import within
from tests.spawn import start


def _hold_a_claim(folder, ready):
    held = Claims(folder).try_claim("run-a")
    ready.write_text("yes" if held else "no")
    time.sleep(60)


def _claim_all(claims_folder, out):
    claims, won = Claims(claims_folder), []
    for i in range(40):
        if claims.try_claim(f"run{i}") is not None:  # kept (not released) till exit
            won.append(i)
    (out / str(os.getpid())).write_text(json.dumps(won))
    deadline = time.time() + 60
    while len(list(out.iterdir())) < 8 and time.time() < deadline:
        time.sleep(0.01)  # hold every claim until all workers have tried


def test_a_claim_is_exclusive_until_released(tmp_path):
    claims = Claims(tmp_path)
    first = claims.try_claim("run-a")
    assert first is not None and first.previous is None
    assert claims.try_claim("run-a") is None  # held (by this very process, even)
    assert claims.try_claim("run-b") is not None  # other runs are independent
    holder = claims.holder("run-a")
    assert holder["host"] == socket.gethostname() and holder["pid"] == os.getpid()
    assert holder["run"] == "run-a"
    first.release(done=False)  # gave up without a record: the claim file stays, stale
    again = claims.try_claim("run-a")
    assert again is not None and again.previous["pid"] == os.getpid()
    again.release(done=True)  # recorded: the claim file goes
    assert not claims.path("run-a").exists()
    again.release(done=True)  # twice is harmless


def test_a_live_worker_keeps_its_claim_and_a_killed_one_loses_it(tmp_path):
    claims = Claims(tmp_path)
    ready = tmp_path / "ready"

    worker = start(_hold_a_claim, tmp_path, ready)
    pid = worker.pid
    deadline = time.time() + 60
    while not ready.exists() and time.time() < deadline:
        time.sleep(0.02)
    assert ready.read_text() == "yes"
    assert claims.try_claim("run-a") is None  # the worker lives: its claim holds
    assert claims.holder("run-a")["pid"] == pid
    os.kill(pid, signal.SIGKILL)
    worker.join()
    taken = claims.try_claim("run-a")  # dead worker: its stale claim is taken over at once
    assert taken is not None and taken.previous["pid"] == pid
    assert claims.holder("run-a")["pid"] == os.getpid()
    taken.release(done=True)


def test_racing_workers_get_each_claim_once(tmp_path):
    """Eight processes claim the same 40 runs at once: every run goes to exactly one."""
    out = tmp_path / "won"
    out.mkdir()
    workers = [start(_claim_all, tmp_path / "claims", out) for _ in range(8)]
    for worker in workers:
        worker.join()
    won = [i for f in out.iterdir() for i in json.loads(f.read_text())]
    assert sorted(won) == list(range(40))


def test_a_claim_file_is_read_through_no_link_and_never_waited_on(tmp_path):
    """``holder`` (who holds a run, for the sweep's message) read a planted link through and
    waited forever on a FIFO; a claim 100,000 deep was a RecursionError (issue 47, 6-8)."""
    claims = Claims(tmp_path / "claims")
    claims.directory.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text('{"host": "TOPSECRET-123"}')
    claims.path("link").symlink_to(secret)
    with pytest.raises(UnsafePath, match="link.claim is a symbolic link"):
        claims.holder("link")
    os.mkfifo(claims.path("fifo"))
    with within(5):
        assert claims.holder("fifo") is None
    for name, text in [("deep", "[" * 60_000 + "]" * 60_000), ("list", "[1]"), ("cut", '{"h')]:
        claims.path(name).write_text(text)
        assert claims.holder(name) is None
        claim = claims.try_claim(name)  # a dead worker's claim: taken over
        assert list(claim.previous) == ["unreadable"] and claim.previous["unreadable"]
        claim.release(done=True)
    assert claims.holder("none") is None
