"""Training: the paper's recipes, the fit glue with run records, and resume after a kill.

The names below load on first use, so that ``pvr_keras.training.recipe`` can be imported
without Keras or TensorFlow.
"""

import importlib

_EXPORTS = {
    "TrainData": "loop",
    "compile_model": "compiling",
    "train": "loop",
    "RECIPES": "recipe",
    "TOKEN": "recipe",
    "VISUAL": "recipe",
    "TrainRecipe": "recipe",
    "read_record": "records",
    "WarmupCosine": "schedules",
    "run": "runs",
    "load_model": "evaluate",
    "load_run": "evaluate",
    "FinishedRun": "evaluate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pvr_keras.training' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pvr_keras.training.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
