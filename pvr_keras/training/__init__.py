"""Training: the fit glue with run records, resume after a kill, and the paper's training
settings (``TOKEN``, ``VISUAL``: ``pvr_keras.hyperparams``).

The names below load on first use, so that ``pvr_keras.training`` imports without Keras or
TensorFlow.
"""

import importlib

_EXPORTS = {
    "TrainData": "inputs",
    "compile_model": "compiling",
    "train": "loop",
    "RECIPES": "pvr_keras.hyperparams",
    "TOKEN": "pvr_keras.hyperparams",
    "VISUAL": "pvr_keras.hyperparams",
    "TrainRecipe": "pvr_keras.hyperparams",
    "read_record": "records",
    "WarmupCosine": "schedules",
    "run": "runs",
    "run_population": "population",
    "load_model": "evaluate",
    "load_run": "evaluate",
    "FinishedRun": "evaluate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pvr_keras.training' has no attribute {name!r}")
    module = _EXPORTS[name]
    module = module if module.startswith("pvr_keras.") else f"pvr_keras.training.{module}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
