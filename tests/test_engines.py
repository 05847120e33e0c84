"""Which engine trains a run when none is named, and the XLA setting of a compiled model."""

import keras
import pytest

from pvr_keras import engines, models


def test_a_named_backend_always_wins():
    assert engines.choose("jax", environ={"KERAS_BACKEND": "tensorflow"}, gpu=False)[0] == "jax"
    assert engines.choose(None, environ={"KERAS_BACKEND": "jax"}, gpu=False) == (
        "jax",
        "named by KERAS_BACKEND",
    )
    assert engines.choose(None, environ={"KERAS_BACKEND": "tensorflow"}, gpu=True)[0] == (
        "tensorflow"
    )


def test_none_named_a_cpu_trains_on_tensorflow():
    backend, why = engines.choose(None, environ={}, gpu=False)
    assert backend == "tensorflow" and "CPU" in why and "bench_engines" in why


def test_none_named_a_gpu_trains_on_jax_where_jax_has_cuda(monkeypatch):
    found = {"jax_cuda12_plugin": object()}
    monkeypatch.setattr(engines.importlib.util, "find_spec", found.get)
    assert engines.choose(None, environ={}, gpu=True)[0] == "jax"
    monkeypatch.setattr(engines.importlib.util, "find_spec", {}.get)
    backend, why = engines.choose(None, environ={}, gpu=True)
    assert backend == "tensorflow" and "CUDA plugin" in why


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="a TensorFlow setting")
def test_on_a_tensorflow_cpu_dense_models_get_xla_and_convolutions_do_not():
    """As measured by tools/bench_engines.py: XLA for the token models, graph mode with
    oneDNN for the CNNs; a layer that XLA cannot compile leaves Keras's choice."""
    assert engines.jit_compile(models.get("mlp", widths=(8,), embed_dim=2)) is True
    cnn = models.get("resnet18", input_shape=(32, 32, 1), width=4)
    assert engines.jit_compile(cnn) is False

    class NoJit(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.supports_jit = False

        def call(self, x):
            return x

    inputs = keras.Input((3,))
    assert engines.jit_compile(keras.Model(inputs, NoJit()(inputs))) is None


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="a JAX setting")
def test_on_jax_keras_keeps_its_own_choice():
    assert engines.jit_compile(models.get("mlp", widths=(8,), embed_dim=2)) is None
