"""TensorFlow's GPUs: hidden under the JAX backend, memory growth under TensorFlow (faked
device lists: these machines have no GPU)."""

import pytest
import tensorflow as tf

from pvr_keras.data import tf_setup

FAKE_GPUS = [
    tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU"),
    tf.config.PhysicalDevice("/physical_device:GPU:1", "GPU"),
]


@pytest.fixture
def fake(monkeypatch):
    calls = []
    monkeypatch.setattr(tf_setup, "_DONE", [])
    monkeypatch.setattr(
        tf.config, "list_physical_devices", lambda kind=None: FAKE_GPUS if kind == "GPU" else []
    )
    monkeypatch.setattr(
        tf.config, "set_visible_devices", lambda devices, kind: calls.append(("visible", kind))
    )
    monkeypatch.setattr(
        tf.config.experimental,
        "set_memory_growth",
        lambda device, on: calls.append(("growth", device.name, on)),
    )
    return calls


def test_jax_backend_hides_tensorflows_gpus(fake):
    assert tf_setup.configure_devices("jax").startswith("hid 2 GPU(s)")
    assert fake == [("visible", "GPU")]
    assert tf_setup.configure_devices("tensorflow").startswith("hid")  # once per process
    assert fake == [("visible", "GPU")]


def test_tensorflow_backend_grows_gpu_memory(fake):
    assert tf_setup.configure_devices("tensorflow") == "memory growth on 2 GPU(s)"
    assert fake == [("growth", g.name, True) for g in FAKE_GPUS]


def test_too_late_warns(fake, monkeypatch):
    def initialised(devices, kind):
        raise RuntimeError("Visible devices cannot be modified after being initialized")

    monkeypatch.setattr(tf.config, "set_visible_devices", initialised)
    with pytest.warns(UserWarning, match="initialised before pvr_keras"):
        assert tf_setup.configure_devices("jax").startswith("too late")


def test_no_gpu_changes_nothing(monkeypatch):
    monkeypatch.setattr(tf_setup, "_DONE", [])
    assert tf_setup.configure_devices() == "no GPU"  # this machine
