"""pvr-keras: Pointer Value Retrieval tasks, models and experiments for Keras 3.

    import pvr_keras
    pvr_keras.tasks.TokenTask(window=2)      # subpackages load on first use
    pvr_keras.models.mixer()

Subpackages: ``tasks`` (the rules, NumPy), ``data`` (tf.data pipelines), ``models`` (the six
architectures), ``training`` (recipes, fit glue, run records), ``analysis`` (noise
sensitivity, CKA, fast/slow learners, logits, holdout), ``sweeps`` (grids of runs),
``tuning`` (keras-tuner), ``config`` (recipe configs). ``import pvr_keras`` alone imports
neither Keras nor TensorFlow.
"""

import importlib

__version__ = "0.1.0"  # the one version source (pyproject reads it)

SUBPACKAGES = ("analysis", "config", "data", "models", "sweeps", "tasks", "training", "tuning")
__all__ = ["__version__", *SUBPACKAGES]


def __getattr__(name):
    if name in SUBPACKAGES:
        return importlib.import_module(f"pvr_keras.{name}")
    raise AttributeError(f"module 'pvr_keras' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(SUBPACKAGES))
