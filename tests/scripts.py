"""The repository's scripts (recipes/, tools/) as modules, for tests to call their functions."""

import importlib.util
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def load(relative, name=None):
    """``recipes/fast_slow.py`` (relative to the repository root) as a fresh module, named
    ``name`` (default: its path, e.g. ``recipes_fast_slow``)."""
    path = REPO / relative
    name = name or "_".join(pathlib.PurePath(relative).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
