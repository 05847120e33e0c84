"""JAX with device input needs no TensorFlow: a recipe trains where TensorFlow is not installed
(a GPU machine with JAX alone), and asking such a machine for tf.data or the TensorFlow backend
is one clear line, not an import error deep in a run."""

import os
import pathlib
import subprocess
import sys

import keras
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
# Hides TensorFlow (and what needs it) from the import system, as on a machine without it.
HIDE = """
import importlib.machinery as m
_find = m.PathFinder.find_spec.__func__
def find_spec(cls, name, path=None, target=None):
    if name.split(".")[0] in ("tensorflow", "tensorflow_datasets", "keras_tuner"):
        return None
    return _find(cls, name, path, target)
m.PathFinder.find_spec = classmethod(find_spec)
"""


def _train(tmp_path, *flags):
    (tmp_path / "sitecustomize.py").write_text(HIDE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    env.pop("KERAS_BACKEND", None)
    task = ["--kind", "gotu", "--target", "x0x1", "--domain", "any_of:0,1", "--num-bits", "6"]
    size = ["--num-examples", "64", "--test-examples", "64", "--epochs", "1"]
    command = [sys.executable, "recipes/train.py", *task, *size, "--out", str(tmp_path / "o")]
    command += flags
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the JAX pass runs it")
def test_jax_device_input_trains_without_tensorflow(tmp_path):
    done = _train(tmp_path, "--backend", "jax", "--input", "device")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Keras on jax with device input" in done.stdout
    assert list((tmp_path / "o").rglob("record.json"))


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="the JAX pass runs it")
@pytest.mark.parametrize(
    "flags, what",
    [(("--backend", "jax", "--input", "tfdata"), "the tfdata input"),
     (("--backend", "tensorflow",), "the TensorFlow backend")],
)  # fmt: skip
def test_tfdata_or_the_tensorflow_backend_without_tensorflow_is_one_clear_line(
    tmp_path, flags, what
):
    done = _train(tmp_path, *flags)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"{what} needs TensorFlow, which is not installed here: install it, or train on JAX "
        "with --backend jax --input device"
    )
    assert "Traceback" not in done.stderr
