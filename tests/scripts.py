"""The repository's scripts (recipes/, tools/) as modules, for tests to call their functions."""

import importlib.util
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def load(relative):
    """``recipes/fast_slow.py`` (relative to the repository root) as a fresh module named
    after its path (``recipes_fast_slow``), kept out of ``sys.modules``."""
    name = "_".join(pathlib.PurePath(relative).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exit_status(relative, *argv):
    """Runs a script's ``__main__`` block in this process, as ``python relative argv...``
    would (its own error handling included), and returns its exit status: a script's
    one-line errors tested without the start-up of a subprocess."""
    import runpy
    import sys

    saved = sys.argv
    sys.argv = [str(REPO / relative), *map(str, argv)]
    try:
        runpy.run_path(str(REPO / relative), run_name="__main__")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (done.code is not None)
    finally:
        sys.argv = saved
    return 0
