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
