"""Files written whole: readers see the old file or the new one, never a mix, even after a
kill at any moment."""

import os
import pathlib


def atomic_write_text(path, text):
    """Writes ``text`` to ``path`` so readers see the old or the new file, never a mix."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
