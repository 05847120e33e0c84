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
import shutil
import stat
import tempfile

from pvr_keras.errors import DamagedFile, DiskFull, UnsafePath

TEMP_PREFIX = ".tmp"  # temporary files and folders of writers: ".<name>.tmp<pid>", ".tmp*"
CHUNK = 1 << 20
MAX_READ_BYTES = 256 << 20  # what ``read_plain`` reads at most unless told
MAX_JSON_DEPTH = 64  # how deeply a JSON file the library reads may nest


def _full(path, error):
    return DiskFull(
        f"no space left on the device writing {path} ({error.strerror}); nothing was "
        f"replaced: the last complete file is kept. Free some space and run again."
    )


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
        if error.errno == errno.ENOSPC:
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
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
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


@contextlib.contextmanager
def temp_folder(parent):
    """A fresh private folder (mode 0700, ``O_EXCL``) inside ``parent`` for a writer that
    makes files by name (Keras saves), removed afterwards whatever happens."""
    parent = pathlib.Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    folder = pathlib.Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def clean_temporaries(folder):
    """Removes what killed writers left in ``folder`` (its own entries only: temporary files
    and folders). Call it only while holding the folder's lock. Returns what was removed."""
    folder = pathlib.Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        name = entry.name
        # ".tmp*" (a temporary folder), ".<file>.tmp<pid>", and "<name>.tmp" (older layouts)
        if (
            name.startswith(TEMP_PREFIX)
            or (name.startswith(".") and TEMP_PREFIX in name)
            or (name.endswith(".tmp"))
        ):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(name)
    return removed


def sha256(path):
    """The SHA-256 of a file's bytes, hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


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


def read_plain(path, max_bytes=MAX_READ_BYTES, *, inside=None):
    """The bytes of ``path``, read once, if it is a plain file of at most ``max_bytes``.

    Every reader of a file the library did not just write goes through here: the file type
    is checked on the open file before a byte is read, so a FIFO, a device or a folder never
    blocks or floods a reader, and no link is followed. With ``inside`` (a folder, ``path``
    written as ``inside/...``), no ``..`` and no link on the way down from ``inside`` either:
    a name taken from a document (a value marker's study) reads nothing outside that folder.

    Raises:
        FileNotFoundError: nothing is there.
        UnsafePath: a symbolic link is there (with ``inside``: on the way, or a ``..``).
        DamagedFile: not a plain file, or larger than ``max_bytes``.
    """
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
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DamagedFile(f"{path} is not a plain file (a folder, FIFO, socket or device)")
        raise DamagedFile(f"{path} is larger than {max_bytes} bytes ({info.st_size})")
    with os.fdopen(fd, "rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DamagedFile(f"{path} is larger than {max_bytes} bytes")
    return data


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


def read_json(path, max_bytes=MAX_READ_BYTES, max_depth=MAX_JSON_DEPTH, *, inside=None):
    """The JSON value in the plain file ``path`` (``read_plain``, then ``parse_json``)."""
    return parse_json(read_plain(path, max_bytes, inside=inside), path, max_depth)
