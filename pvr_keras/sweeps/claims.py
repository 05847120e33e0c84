"""Per-run claims, so that workers sharing one results directory never train a run twice.

The rule. A claim is the file ``claims/<run id>.claim``, created with ``O_CREAT | O_EXCL``,
and it is *live* while the worker that holds it keeps an exclusive ``flock`` on it; the worker
holds the lock for the whole run. The kernel drops the lock when that process ends in any way
(exit, exception, SIGKILL, OOM kill), so a claim file nobody holds a lock on was left by a
dead worker: it is *stale*, and the next worker takes it over at once, taking the lock and
writing itself in (host, pid, time; the previous holder is reported). There is no timeout to
tune and no heartbeat. A claim file is removed only after its run's record is appended, so a
worker that takes over a claim always checks the results first and skips a recorded run.

Across machines the results directory must be on a filesystem with working locks (local disk;
NFSv4, where a crashed client's locks are freed when its lease expires, ~90 s). Where locks do
not work, split the grid with ``--shard i/n`` into separate results directories instead.
"""

import errno
import fcntl
import json
import os
import pathlib
import socket
import time

from pvr_keras.errors import DamagedFile
from pvr_keras.files import open_file, parse_json, read_plain

CLAIM_BYTES = 65_536  # what a claim file is read up to (it holds host, pid and a time)


class Claim:
    """A held claim: the open, locked claim file of one run."""

    def __init__(self, fd, path, previous):
        self.fd = fd
        self.path = path
        self.previous = previous  # the stale claim's contents when taken over, else None

    def release(self, done):
        """Drops the claim; ``done=True`` (the run is recorded) also removes the file."""
        if self.fd is None:
            return
        if done:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        os.close(self.fd)  # closing drops the lock
        self.fd = None


class Claims:
    """Claims of the runs of one results directory (``claims/`` in it)."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)

    def path(self, run_id):
        return self.directory / f"{run_id}.claim"

    def holder(self, run_id):
        """The contents of a run's claim file (who holds or held it: a dict), or None (no
        claim, or one that says nothing readable). Read with ``files.read_plain``: a link
        there is refused (``UnsafePath``), a FIFO never waited on."""
        path = self.path(run_id)
        try:
            found = parse_json(read_plain(path, CLAIM_BYTES) or b"null", path)
        except (FileNotFoundError, DamagedFile):
            return None
        return found if isinstance(found, dict) else None

    def try_claim(self, run_id):
        """Claims ``run_id`` if no live worker holds it.

        Returns:
            A ``Claim`` (new, or taken over from a dead worker), or None when a live worker
            (this process included) holds it.

        Raises:
            OSError: the filesystem does not support locks (then use shards instead).
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(run_id)
        for _ in range(5):  # retries only when the file is replaced under us
            try:
                fd = open_file(path, os.O_RDWR | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                try:
                    fd = open_file(path, os.O_RDWR)
                except FileNotFoundError:
                    continue  # removed since: try to create it
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return None  # a live worker holds it
                raise OSError(
                    error.errno,
                    f"cannot lock claim file {path} ({error.strerror}); this filesystem does "
                    f"not support the locks claims need: split the sweep with --shard i/n "
                    f"into separate results directories instead",
                ) from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the file we locked was removed (its run finished): start again
                os.close(fd)
                continue
            old = os.pread(fd, CLAIM_BYTES, 0)
            previous = None
            if old:
                try:
                    previous = parse_json(old, path)  # not nested deeper than a record
                except DamagedFile:
                    previous = None
                if not isinstance(previous, dict):
                    previous = {"unreadable": old[:200].decode(errors="replace")}
            mine = json.dumps(
                {"run": run_id, "host": socket.gethostname(), "pid": os.getpid(), "since": _now()}
            ).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, mine, 0)
            os.fsync(fd)
            return Claim(fd, path, previous)
        return None

    def clean(self, recorded):
        """Removes claim files of recorded runs left by workers killed after recording."""
        removed = 0
        for path in self.directory.glob("*.claim") if self.directory.is_dir() else ():
            run_id = path.name[: -len(".claim")]
            if run_id in recorded:
                claim = self.try_claim(run_id)
                if claim is not None:
                    claim.release(done=True)
                    removed += 1
        return removed


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
