"""Hyperparameter search with keras-tuner: a HyperModel over the builders, distributed search.

from pvr_keras import tuning
hypermodel = tuning.PVRHyperModel(TokenTask(window=2), 50_000, epochs=10)
tuner = tuning.make_tuner("hyperband", hypermodel, directory="runs/tune")
tuning.search(tuner)

The names below load on first use: ``tuning.distributed.check_settings`` runs before Keras
and keras-tuner are imported (a recipe checks its flags first).
"""

import importlib

_EXPORTS = {
    "check_settings": "distributed",
    "configure": "distributed",
    "search": "distributed",
    "wait_for_chief": "distributed",
    "BATCH_SIZES": "hypermodels",
    "LEARNING_RATES": "hypermodels",
    "OBJECTIVE": "hypermodels",
    "OPTIMIZERS": "hypermodels",
    "TUNERS": "hypermodels",
    "PVRHyperModel": "hypermodels",
    "make_optimizer": "hypermodels",
    "make_tuner": "hypermodels",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pvr_keras.tuning' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pvr_keras.tuning.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
