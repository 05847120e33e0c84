"""Every file the library writes: whole, never through a link, nothing left half-written.

A file is written under a temporary name created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` in
its own folder and then renamed over the target: readers see the old file or the new one,
never a mix, even after a kill at any moment; a symbolic link planted at the target or at
the temporary name is replaced (or refused), never written through. A full disk is a
``DiskFull`` error naming the file, with the temporary file removed and the old file kept.
Locks and append-only files are opened with ``O_NOFOLLOW`` too (``open_file``).
"""

import contextlib
import errno
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import stat
import tempfile

from pvr_keras.errors import DamagedFile, DiskFull, RunBusy, UnsafePath

TEMP_PREFIX = ".tmp"  # temporary files and folders of writers: ".<name>.tmp<pid>", ".tmp*"
CHUNK = 1 << 20
MAX_READ_BYTES = 256 << 20  # what ``read_plain`` reads at most unless told
MAX_JSON_DEPTH = 64  # how deeply a JSON file the library reads may nest


FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # no room: the disk, a file size limit, a quota


def _full(path, error):
    return DiskFull(
        f"no space left on the device writing {path} "
        f"({getattr(error, 'strerror', None) or error}); nothing was replaced: the last "
        f"complete file is kept. Free some space and run again."
    )


def check_size_limit(size, what):
    """Refuses (``DiskFull``) to write a file of about ``size`` bytes larger than this
    process's file size limit (``ulimit -f``), before a writer meets it half-way (HDF5 then
    crashes the process instead of raising)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft != resource.RLIM_INFINITY and size > soft:
        raise DiskFull(
            f"{what} needs about {size / 1e6:.1f} MB, more than this process's file size "
            f"limit ({soft / 1e6:.3f} MB, ulimit -f); nothing was replaced: raise the limit "
            f"and run again"
        )


def is_full(error):
    """Whether ``error`` says there is no room to write: a full disk, a quota, or a file size
    limit (``ulimit -f``; pyarrow raises such an ``OSError`` without its ``errno``)."""
    if isinstance(error, OSError) and error.errno in FULL:
        return True
    return isinstance(error, Exception) and _says_full(error)


@contextlib.contextmanager
def room(path, what=None):
    """Turns a full disk, a quota or a file size limit met while writing ``path`` into a
    one-line ``DiskFull`` naming it (whatever library was writing); ``what``: a writer of a
    folder of its own (an export) names that instead, nothing of it left."""
    try:
        yield
    except DiskFull:
        raise
    except Exception as error:  # noqa: BLE001 - TensorFlow's writers raise their own errors
        if not is_full(error):
            raise
        if what is None:
            raise _full(path, error) from None
        raise DiskFull(
            f"no space left writing {what} ({str(error)[-80:]}); nothing was written there. "
            f"Free some space and run again."
        ) from None


def _says_full(error):
    return any(os.strerror(code) in str(error) for code in FULL)


def create(path):
    """A new file at ``path`` opened for writing in binary (``O_EXCL``, no link followed): for
    a writer that streams into a folder of its own (an export being built)."""
    return os.fdopen(open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb")


def open_file(path, flags, mode=0o644):
    """``os.open`` that never follows a symbolic link at ``path`` (``UnsafePath`` if one is
    there)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafePath(
                f"{path} is a symbolic link; the library does not write through links "
                f"(remove it and run again)"
            ) from None
        if is_full(error):
            raise _full(path, error) from None
        raise


def write_bytes(path, data):
    """Writes ``data`` to ``path`` whole (temporary file, fsync, rename); returns the path."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}{TEMP_PREFIX}{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # a leftover of this pid (or a planted link): unlink never follows
    fd = open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:CHUNK]) :]
        os.fsync(fd)
    except BaseException as error:
        os.close(fd)
        os.unlink(tmp)
        if is_full(error):
            raise _full(path, error) from None
        raise
    os.close(fd)
    os.replace(tmp, path)  # a link at ``path`` is replaced by the file, not written through
    return path


def write_text(path, text):
    """Writes ``text`` (UTF-8) to ``path`` whole; returns the path."""
    return write_bytes(path, text.encode())


def write_csv(path, rows):
    """Writes rows (lists) as CSV to ``path`` whole."""
    import csv

    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return write_text(path, out.getvalue())


def save_figure(fig, path, **kwargs):
    """Saves a matplotlib figure as PNG at ``path`` whole (rendered in memory first)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", **kwargs)
    return write_bytes(path, out.getvalue())


class Lock:
    """An exclusive lock held while a process works on what ``path`` guards (``with
    Lock(path)``): a second process asking for it fails at once with ``RunBusy``, naming the
    process that holds it (``busy``). The lock is an ``flock`` on the file ``path`` (opened
    without following a link), so the operating system drops it when its process dies and
    a killed process never leaves a stale one; leaving removes the file.

    Raises (on enter):
        RunBusy: another process holds the lock.
        UnsafePath: the lock file is a symbolic link.
    """

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self._file = None

    def busy(self, holder):
        """The message of ``RunBusy`` when ``holder`` (``pid N on HOST``) holds the lock."""
        return f"{self.path} is held by {holder}"

    def __enter__(self):
        import fcntl
        import socket

        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                fd = open_file(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK)
            except IsADirectoryError:
                fd = None
            if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode):
                if fd is not None:
                    os.close(fd)
                raise DamagedFile(
                    f"{self.path} is not a plain file (a folder, FIFO or device) where the "
                    f"library keeps a lock: remove it and run again"
                )
            handle = os.fdopen(fd, "r+")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                handle.close()
                raise RunBusy(self.busy(holder)) from None
            if self._still_named(handle):
                break
            # The holder removed the file between our open and our lock (it finished):
            # this lock is on a file nobody else will see; take the one at the path now.
            handle.close()
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
            handle.flush()
        except BaseException as error:  # a full disk: the lock file made is not left behind
            self.path.unlink(missing_ok=True)
            handle.close()
            if is_full(error):
                raise _full(self.path, error) from None
            raise
        self._file = handle
        return self

    def _still_named(self, handle):
        try:
            named = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        mine = os.fstat(handle.fileno())
        return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)

    def __exit__(self, *exc):
        # Removed while still held, so that whoever opens the path next makes a new file.
        self.path.unlink(missing_ok=True)
        self._file.close()  # closing releases the lock
        self._file = None


@contextlib.contextmanager
def temp_folder(parent, prefix=TEMP_PREFIX):
    """A fresh private folder (mode 0700, ``O_EXCL``) inside ``parent`` for a writer that
    makes files by name (Keras saves), removed afterwards whatever happens (a kill -9
    leaves it: ``clean_temporaries``). Its name is ``prefix`` and random lowercase letters,
    digits or ``_``; a ``prefix`` of a writer's own (a dot, a name, ``TEMP_PREFIX``) lets
    that writer find its own leftovers."""
    parent = pathlib.Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    folder = pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def clean_temporaries(folder, prefix=None):
    """Removes what killed writers left in ``folder`` (its own entries only: temporary files
    and folders; with ``prefix``, only the folders ``temp_folder(folder, prefix)`` makes).
    Call it only while holding the lock of what the temporaries were written for. Returns
    what was removed."""
    folder = pathlib.Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    own = re.compile(re.escape(prefix) + r"[a-z0-9_]+") if prefix is not None else None
    for entry in folder.iterdir():
        name = entry.name
        if own is not None:
            found = own.fullmatch(name)
        else:  # ".tmp*" (a temporary folder), ".<file>.tmp<pid>", "<name>.tmp" (older)
            found = (
                name.startswith(TEMP_PREFIX)
                or (name.startswith(".") and TEMP_PREFIX in name)
                or (name.endswith(".tmp"))
            )
        if found:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(name)
    return removed


def sha256(path, max_bytes=None):
    """The SHA-256 of a plain file's bytes, hex (opened as ``read_plain`` opens one: no link,
    no FIFO or device; with ``max_bytes``, a larger file is ``DamagedFile``)."""
    return _copy_plain(path, None, max_bytes)


def _copy_plain(path, target, max_bytes):
    """Streams the plain file ``path`` into the open binary file ``target`` (None: nowhere)
    and returns the SHA-256 of what was streamed."""
    fd, info = _open_plain(path)
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as file:
        if max_bytes is not None and info.st_size > max_bytes:
            raise DamagedFile(f"{path} is larger than {max_bytes} bytes ({info.st_size})")
        done = 0
        for block in iter(lambda: file.read(CHUNK), b""):
            done += len(block)
            if max_bytes is not None and done > max_bytes:
                raise DamagedFile(f"{path} is larger than {max_bytes} bytes")
            digest.update(block)
            if target is not None:
                target.write(block)
    return digest.hexdigest()


@contextlib.contextmanager
def private_copy(path, max_bytes=None, sha256=None):
    """A copy of the plain file ``path`` in a private temporary folder, for a reader that
    opens files by name (Keras's ``load_weights``, ``load_model``): what it reads is what
    was checked here (no link, no FIFO or device, at most ``max_bytes``; with ``sha256``,
    those bytes exactly), never a file swapped in after the check. Yields the copy's path
    (same name); the folder is removed afterwards.

    Raises:
        FileNotFoundError, UnsafePath, DamagedFile: as ``read_plain``; DamagedFile too when
            the bytes do not have the SHA-256 ``sha256``.
    """
    path = pathlib.Path(path)
    with tempfile.TemporaryDirectory(prefix="pvr-read-") as folder:
        copy = pathlib.Path(folder) / path.name
        with os.fdopen(open_file(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            digest = _copy_plain(path, out, max_bytes)
        if sha256 is not None and digest != sha256:
            raise DamagedFile(f"{path} does not have the SHA-256 it should ({digest[:12]}...)")
        yield copy


def _link(path):
    return UnsafePath(f"{path} is a symbolic link; the library reads no file through a link")


def _open_inside(path, inside, flags):
    """``os.open(path, flags)`` for a ``path`` written as ``inside/...``: refused
    (``UnsafePath``) when a ``..`` or a symbolic link below ``inside`` would lead out of it.
    Each folder on the way is opened relative to the one above it, never through a link, so
    what is checked is what is opened."""
    path, inside = pathlib.Path(path), pathlib.Path(inside)
    try:
        parts = path.relative_to(inside).parts
    except ValueError:
        parts = ()
    if not parts or ".." in parts:
        raise UnsafePath(f"{path} is not inside {inside}; only files in it are read")
    folder = os.open(inside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(parts[:-1], 1):
            try:
                inner = os.open(part, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise _link(inside.joinpath(*parts[:depth])) from None
                error.filename = str(inside.joinpath(*parts[:depth]))
                raise
            os.close(folder)
            folder = inner
            if not stat.S_ISDIR(os.fstat(folder).st_mode):
                raise DamagedFile(f"{inside.joinpath(*parts[:depth])} is not a folder")
        try:
            return os.open(parts[-1], flags, dir_fd=folder)
        except OSError as error:
            error.filename = str(path)
            raise
    finally:
        os.close(folder)


def _open_plain(path, inside=None):
    """A read-only descriptor of ``path`` if it is a plain file (checked on the open file:
    no link followed, no FIFO or device blocked on), and its ``os.fstat``; with ``inside``,
    opened through ``_open_inside``."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags) if inside is None else _open_inside(path, inside, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _link(path) from None
        if error.errno in (errno.ENOTDIR, errno.ENXIO):  # a path under a file, a socket
            raise DamagedFile(f"{path} is not a plain file") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise DamagedFile(f"{path} is not a plain file (a folder, FIFO, socket or device)")
    return fd, info


def read_plain(path, max_bytes=MAX_READ_BYTES, *, inside=None, check=None):
    """The bytes of ``path``, read once, if it is a plain file of at most ``max_bytes``.

    Every reader of a file the library did not just write goes through here: the file type
    is checked on the open file before a byte is read, so a FIFO, a device or a folder never
    blocks or floods a reader, and no link is followed. With ``inside`` (a folder, ``path``
    written as ``inside/...``), no ``..`` and no link on the way down from ``inside`` either:
    a name taken from a document (a value marker's study) reads nothing outside that folder.
    ``check(info)``, when given, sees the open file's ``os.fstat`` before a byte is read and
    refuses it by raising (a file another user may have written).

    Raises:
        FileNotFoundError: nothing is there.
        UnsafePath: a symbolic link is there (with ``inside``: on the way, or a ``..``).
        DamagedFile: not a plain file, or larger than ``max_bytes``.
    """
    fd, info = _open_plain(path, inside)
    if info.st_size > max_bytes:
        os.close(fd)
        raise DamagedFile(f"{path} is larger than {max_bytes} bytes ({info.st_size})")
    if check is not None:  # sees the open file's ``os.fstat`` (its owner, its mode) first
        try:
            check(info)
        except BaseException:
            os.close(fd)
            raise
    with os.fdopen(fd, "rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DamagedFile(f"{path} is larger than {max_bytes} bytes")
    return data


NPY_KINDS = "biuf"  # the dtypes read_npy reads: bool, signed and unsigned integers, floats


def read_npy(path, max_bytes=MAX_READ_BYTES, check=None):
    """The array in the NumPy ``.npy`` file ``path``, its header read and checked before a
    byte of its data.

    The file is opened as ``read_plain`` opens one (a plain file, no link). Its header (format
    1.0 or 2.0) must give real numbers (bool, integers, floats: no object, complex,
    timedelta, datetime, string or structured dtype), a shape of non-negative sizes whose
    data fits ``max_bytes``, and exactly the data bytes the file holds. ``check(shape,
    dtype)``, when given, sees the header first and refuses it by raising ``ValueError``.
    Only then is the data read, in one bounded read (no pickle is ever loaded).

    Raises:
        FileNotFoundError: nothing is there.
        UnsafePath: a symbolic link is there.
        DamagedFile: not a plain file, not a .npy array of real numbers, larger than
            ``max_bytes``, or shorter or longer than its header says.
    """
    import math

    import numpy as np
    from numpy.lib import format as npy

    fd, info = _open_plain(path)
    with os.fdopen(fd, "rb") as file:
        try:
            version = npy.read_magic(file)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(file)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(file)
            else:
                raise ValueError(f"format version {version[0]}.{version[1]}")
        except (ValueError, SyntaxError, TypeError, RecursionError) as error:
            reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise DamagedFile(f"{path} is not a NumPy .npy array ({reason})") from None
        if dtype.kind not in NPY_KINDS or dtype.hasobject or dtype.fields or dtype.subdtype:
            raise DamagedFile(f"{path} is not a NumPy .npy array of real numbers (its dtype "
                              f"is {dtype})")  # fmt: skip
        if any(size < 0 for size in shape):
            raise DamagedFile(f"{path} is not a NumPy .npy array (shape {shape})")
        if check is not None:
            check(shape, dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > max_bytes:
            raise DamagedFile(f"{path} claims an array of shape {shape} and dtype {dtype} "
                              f"({nbytes:,} bytes): more than {max_bytes:,} bytes")  # fmt: skip
        held = info.st_size - file.tell()
        if held != nbytes:
            raise DamagedFile(f"{path} holds {held:,} bytes of data; its header (shape "
                              f"{shape}, dtype {dtype}) says {nbytes:,}")  # fmt: skip
        data = bytearray(nbytes)
        view, done = memoryview(data), 0
        while done < nbytes:
            got = file.readinto(view[done : done + CHUNK])
            if not got:
                raise DamagedFile(f"{path} ended {nbytes - done:,} bytes early")
            done += got
    array = np.frombuffer(data, dtype=dtype, count=math.prod(shape))
    return array.reshape(shape, order="F" if fortran else "C")


def json_depth(value):
    """How deeply a parsed JSON value nests (0 for a number or string), without recursion.
    Only containers are visited one by one: a long list of numbers (a learning curve) costs
    one pass in C."""
    deepest, stack = 0, [(value, 0)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        items = item.values() if isinstance(item, dict) else item
        if items:
            deepest = max(deepest, depth + 1)
            stack.extend((v, depth + 1) for v in items if isinstance(v, dict | list))
    return deepest


def parse_json(data, where, max_depth=MAX_JSON_DEPTH):
    """``data`` (bytes or text) parsed as JSON; ``DamagedFile`` naming ``where`` when it is
    not JSON, not UTF-8, or nests deeper than ``max_depth``."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise DamagedFile(f"{where} nests deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise DamagedFile(f"{where} is not whole JSON ({reason})") from None
    if json_depth(value) > max_depth:
        raise DamagedFile(f"{where} nests deeper than {max_depth} levels")
    return value


def read_json(path, max_bytes=MAX_READ_BYTES, max_depth=MAX_JSON_DEPTH, *, inside=None,
              check=None):  # fmt: skip
    """The JSON value in the plain file ``path`` (``read_plain``, then ``parse_json``)."""
    return parse_json(read_plain(path, max_bytes, inside=inside, check=check), path, max_depth)
