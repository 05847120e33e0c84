"""pvr-keras: Pointer Value Retrieval tasks, models and experiments for Keras 3.

    import pvr_keras
    pvr_keras.tasks.TokenTask(window=2)      # subpackages load on first use
    pvr_keras.models.mixer()

Layers, lowest first, each importing only from its own layer or those above it in this list
(``tests/test_layout.py`` holds the list as ``LAYERS`` and checks both the imports and this
text):

- ``checks`` (the argument checks and limits every layer shares), ``errors``, ``files`` (the
  errors recipes report, files written whole), ``fields`` (config fields with help),
  ``compat`` (private third-party APIs), ``engines`` (which backend, input and XLA setting
  train a run), ``calibration`` (the backends timed on this machine, cached);
- ``references`` (code found by ``"module:name"`` / ``"file.py:name"``, and when it may be
  imported), ``registry`` (models by name or reference), ``tasks`` (the rules, NumPy),
  ``hyperparams`` (a run's train section and the paper's settings of it);
- ``kinds`` (one spec per task kind, and the registry; a built-in kind is one folder,
  ``kinds/<name>/``, one module a role, each standing at its role's layer: its task and rule
  with the rules, its generators with the data, its benchmark hooks with the benchmarks);
- ``runconfig`` (one run config: task, model, data, train section, system; a run's identity
  and id), ``legacy`` (runs read back from records, old layouts too);
- ``data`` (tf.data pipelines and their JAX twins), ``models`` (the six architectures),
  ``testing`` (the shared model test), ``figures`` (every plot), ``analysis`` (noise
  sensitivity, CKA, fast/slow learners, logits, holdout), ``counterfactuals`` (the
  high-level causal models, counterfactual pairs, interchange interventions and IIA);
- ``training`` (the fit glue, run records, one run function for every kind),
  ``benchmarks`` (named, versioned configs with canonical splits, framework-free sources,
  text prompts, a scorer and a manifest of split hashes), ``tfds`` (the same configs as the
  TFDS builder; ``import pvr_keras.tfds`` registers it), ``reasoning_gym`` (the text configs
  as reasoning-gym datasets with curricula; ``import pvr_keras.reasoning_gym`` registers
  them);
- ``sweeps`` (grids of runs), ``tuning`` (keras-tuner), ``launch`` (a grid's runs as jobs
  of submitit or Ray);
- ``cli`` (flags, presets and the runner of the scripts in ``recipes/``).

``import pvr_keras`` alone imports neither Keras nor TensorFlow.
"""

import importlib

__version__ = "0.1.0"  # the one version source (pyproject reads it)

SUBPACKAGES = (
    "analysis", "benchmarks", "calibration", "checks", "cli", "counterfactuals", "data",
    "engines", "figures",
    "hyperparams",
    "kinds", "legacy", "models", "references", "registry", "runconfig", "sweeps", "tasks",
    "testing", "training", "tuning",
)  # fmt: skip
__all__ = ["__version__", *SUBPACKAGES]


def __getattr__(name):
    if name in SUBPACKAGES:
        return importlib.import_module(f"pvr_keras.{name}")
    raise AttributeError(f"module 'pvr_keras' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(SUBPACKAGES))
