"""The repository's scripts (recipes/, tools/) as modules, for tests to call their functions."""

import contextlib
import importlib.util
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def _beside(relative):
    """The script's folder first on the import path while it loads, as ``python relative``
    has it: a tool imports the tools beside it by module name. Afterwards the folder stays at
    the end of the path, for the imports a tool makes inside its functions, behind every
    installed package (``tools/evaluate.py`` must not hide the ``evaluate`` package)."""
    folder = str((REPO / relative).parent)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)
        if folder not in sys.path:
            sys.path.append(folder)


def load(relative):
    """``recipes/fast_slow.py`` (relative to the repository root) as a fresh module named
    after its path (``recipes_fast_slow``), kept out of ``sys.modules``."""
    name = "_".join(pathlib.PurePath(relative).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    module = importlib.util.module_from_spec(spec)
    with _beside(relative):
        spec.loader.exec_module(module)
    return module


def exit_status(relative, *argv):
    """Runs a script's ``__main__`` block in this process, as ``python relative argv...``
    would (its own error handling included), and returns its exit status: a script's
    one-line errors tested without the start-up of a subprocess."""
    import runpy

    saved = sys.argv
    sys.argv = [str(REPO / relative), *map(str, argv)]
    try:
        with _beside(relative):
            runpy.run_path(str(REPO / relative), run_name="__main__")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (done.code is not None)
    finally:
        sys.argv = saved
    return 0
