"""Which engine trains a run: the Keras backend, its input and XLA, as measured fastest.

``choose(backend)`` picks the backend before Keras is imported: the one named (``--backend``
or ``KERAS_BACKEND`` always wins), else the measured-fastest for the platform:

- a CPU: TensorFlow with tf.data input. ``tools/bench_engines.py`` on a 2-core CPU times it
  fastest, or within noise of the fastest, on every model of the paper (against JAX: the
  1/8-width MLP-Mixer 3.5-4.2x faster, ResNet18 2-2.4x, the Transformer 1.3-2x, the paper's
  MLP within noise; README "Choosing the backend").
- an NVIDIA GPU with JAX's CUDA plugin installed: JAX with device input, the choice that
  ``tools/gpu_check.sh`` measures (until it measures otherwise).

``jit_compile(model)`` is the XLA setting of a compiled model on TensorFlow, set by
``training.compile_model``: on a CPU, XLA for models without convolutions (the token and
Boolean models: 1.1-2x faster per step than TensorFlow's graph mode, whose kernels run one
op at a time) and graph mode with oneDNN for convolutional ones (XLA's CPU convolutions are
1.1-2.2x slower there); Keras's own choice elsewhere (XLA on a GPU, none under tf.distribute).
Neither changes a run's identity: a run resumes on either engine.
"""

import importlib.util
import os
import pathlib

CPU_BACKEND = "tensorflow"
GPU_BACKEND = "jax"
CUDA_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin")


def has_nvidia_gpu():
    """Whether the machine has an NVIDIA GPU with its driver loaded (no framework imported)."""
    gpus = pathlib.Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def choose(backend=None, *, environ=None, gpu=None):
    """``(backend, why)``: the Keras backend to train on and one line saying why.

    Args:
        backend: the backend the user named (``--backend``), or None.
        environ: the environment to read ``KERAS_BACKEND`` from (default ``os.environ``).
        gpu: whether an NVIDIA GPU is there (default: ``has_nvidia_gpu()``).
    """
    environ = os.environ if environ is None else environ
    if backend:
        return backend, "named by --backend"
    if environ.get("KERAS_BACKEND"):
        return environ["KERAS_BACKEND"], "named by KERAS_BACKEND"
    gpu = has_nvidia_gpu() if gpu is None else gpu
    if gpu:
        if any(importlib.util.find_spec(p) is not None for p in CUDA_PLUGINS):
            return GPU_BACKEND, "none named; the fastest measured on a GPU: tools/gpu_check.sh"
        return CPU_BACKEND, (
            "none named; a GPU is here but JAX has no CUDA plugin: pip install -e '.[jax-cuda]'"
        )
    return CPU_BACKEND, "none named; the fastest measured on a CPU: tools/bench_engines.py"


def describe(backend, input_source, why):
    """The one line a recipe prints about its engine."""
    return f"engine: Keras on {backend} with {input_source} input ({why})"


def _layers(layer):
    """``layer`` and every layer inside it."""
    yield layer
    for inner in getattr(layer, "layers", ()):
        yield from _layers(inner)


def jit_compile(model):
    """The ``jit_compile`` setting for a compiled ``model`` (see the module docstring):
    True, False, or None to leave Keras's own choice."""
    import keras

    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf

    if tf.config.list_logical_devices("GPU") or tf.distribute.has_strategy():
        return None
    layers = list(_layers(model))
    if not all(getattr(layer, "supports_jit", True) for layer in layers):
        return None  # a layer XLA cannot compile (Keras's own flag): Keras decides
    conv = (keras.layers.Conv1D, keras.layers.Conv2D, keras.layers.Conv3D)
    return not any(isinstance(layer, conv) for layer in layers)
