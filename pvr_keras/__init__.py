"""pvr-keras: Pointer Value Retrieval tasks, models and experiments for Keras 3.

    import pvr_keras
    pvr_keras.tasks.TokenTask(window=2)      # subpackages load on first use
    pvr_keras.models.mixer()

Layers, each importing only from those above it (``tests/test_layout.py`` checks it):

- ``errors``, ``files``: the errors recipes report, files written whole; ``engines``: which
  backend, input and XLA setting train a run (the measured-fastest unless one is named);
- ``registry`` (models and task kinds by name or reference), ``tasks`` (the rules, NumPy);
- ``runconfig`` (one run config: task, model, data, training recipe, system; a run's
  identity and id), ``legacy`` (runs read back from records, old layouts too), ``kinds``
  (one spec per task kind);
- ``data`` (tf.data pipelines and their JAX twins), ``models`` (the six architectures),
  ``figures`` (every plot), ``analysis`` (noise sensitivity, CKA, fast/slow learners,
  logits, holdout);
- ``training`` (the fit glue, run records, one run function for every kind);
  ``benchmarks`` (named, versioned configs with canonical splits, framework-free sources,
  text prompts, a scorer and a manifest of split hashes), ``tfds`` (the same configs as the
  TFDS builder ``pvr``; ``import pvr_keras.tfds`` registers it);
- ``sweeps`` (grids of runs), ``tuning`` (keras-tuner);
- ``cli`` (flags, presets and the recipe runner).

``import pvr_keras`` alone imports neither Keras nor TensorFlow.
"""

import importlib

__version__ = "0.1.0"  # the one version source (pyproject reads it)

SUBPACKAGES = (
    "analysis", "benchmarks", "cli", "data", "engines", "figures", "kinds", "legacy",
    "models", "registry", "runconfig", "sweeps", "tasks", "training", "tuning",
)  # fmt: skip
__all__ = ["__version__", *SUBPACKAGES]


def __getattr__(name):
    if name in SUBPACKAGES:
        return importlib.import_module(f"pvr_keras.{name}")
    raise AttributeError(f"module 'pvr_keras' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(SUBPACKAGES))
