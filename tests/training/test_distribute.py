import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from pvr_keras import training
from pvr_keras.runconfig import Run
from pvr_keras.training import distribute, read_record

REPO = pathlib.Path(__file__).resolve().parents[2]
BACKEND = keras.backend.backend()


def _visible():
    """What setup(devices=N) picks from in this process."""
    if BACKEND == "jax":
        import jax

        return len(jax.devices())
    gpus = tf.config.list_logical_devices("GPU")
    return len(gpus or tf.config.list_logical_devices("CPU"))


def test_default_is_plain_keras_on_a_cpu_host():
    placement = distribute.setup()
    if placement.engine != distribute.SINGLE:
        pytest.skip(f"this host has accelerators: {placement.devices}")
    assert placement.num_replicas == 1 and len(placement.devices) == 1 and placement.is_chief
    assert placement.describe() == {
        "engine": "single-device",
        "num_replicas": 1,
        "num_processes": 1,
        "process_index": 0,
        "devices": list(placement.devices),
    }
    ds = tf.data.Dataset.from_tensors((np.zeros((3, 11), "int32"), np.zeros(3, "int32")))
    assert placement.distribute(ds) is ds  # one device: data untouched


def test_more_devices_than_exist_names_both_numbers():
    asked = _visible() + 1
    with pytest.raises(ValueError, match=rf"devices={asked} asks .* has: {_visible()} visible"):
        distribute.setup(asked)


@pytest.mark.parametrize("devices", [0, -2, 1.5, "2", True, [0, 1]])
def test_bad_devices(devices):
    with pytest.raises(ValueError, match="devices must be None .* or a positive integer"):
        distribute.setup(devices)


def test_split_cpu_only_before_the_backend_starts():
    distribute.setup()  # lists devices: the backend is initialised from here on
    with pytest.raises(RuntimeError, match="split_cpu must run before .* initialises its devices"):
        distribute.split_cpu(2)
    with pytest.raises(ValueError, match="positive integer"):
        distribute.split_cpu(0)


def test_train_checks_devices_before_any_work(tmp_path, monkeypatch):
    from pvr_keras.training import inputs

    def no_streams(*args, **kwargs):
        raise AssertionError("streams were made before the devices were checked")

    monkeypatch.setattr(inputs, "run_data", no_streams)
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="asks for more devices"):
        training.train(Run.make("token", devices=_visible() + 1), out)
    assert not out.exists()


@pytest.mark.parametrize("recipe", ["token_pvr", "block_iid", "block_holdout", "image_sequence"])
def test_recipes_check_the_devices_flag_before_any_work(tmp_path, recipe):
    sys.path.insert(0, str(REPO / "recipes"))
    main = __import__(recipe).main

    asked = _visible() + 3
    with pytest.raises(ValueError, match=rf"devices={asked} asks for more devices"):
        main(["--devices", str(asked), "--out", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()


GOOD = {"cluster": {"worker": ["127.0.0.1:2222", "localhost:2223"]}, "task": {"type": "worker"}}


def _tf_config(**changes):
    config = json.loads(json.dumps(GOOD))
    config["task"]["index"] = 1
    for key, value in changes.items():
        config[key] = value
    return json.dumps(config)


def test_parse_tf_config():
    cluster, task_type, index = distribute.parse_tf_config(_tf_config())
    assert cluster == GOOD["cluster"] and (task_type, index) == ("worker", 1)
    chief = {
        "cluster": {"chief": ["h:1"], "worker": ["h:2"]},
        "task": {"type": "chief", "index": 0},
    }
    assert distribute.parse_tf_config(json.dumps(chief))[1:] == ("chief", 0)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "TF_CONFIG must be JSON"),
        ('["worker"]', "TF_CONFIG must be"),
        ('{"task": {"type": "worker", "index": 0}}', "TF_CONFIG must be"),
        (_tf_config(cluster={"ps": ["h:1"]}), "jobs must be among chief, worker"),
        (_tf_config(cluster={"worker": []}), "non-empty list of"),
        (_tf_config(cluster={"worker": ["127.0.0.1"]}), "non-empty list of"),
        (_tf_config(cluster={"worker": "h:1"}), "non-empty list of"),
        (_tf_config(task={"type": "chief", "index": 0}), "task must name a job"),
        (_tf_config(task={"type": "worker", "index": 2}), r"integer in \[0, 2\)"),
        (_tf_config(task={"type": "worker", "index": True}), r"integer in \[0, 2\)"),
        (_tf_config(task={"type": "worker"}), r"integer in \[0, 2\)"),
    ],
)
def test_malformed_tf_config(text, message):
    with pytest.raises(ValueError, match=message):
        distribute.parse_tf_config(text)


def test_parse_jax_cluster():
    names = distribute.JAX_CLUSTER_VARS
    assert distribute.parse_jax_cluster({}) is None
    env = dict(zip(names, ("127.0.0.1:1234", "2", "1"), strict=True))
    assert distribute.parse_jax_cluster(env) == ("127.0.0.1:1234", 2, 1)
    for bad, message in [
        ({names[0]: "127.0.0.1:1234"}, "needs all of"),
        ({**env, names[0]: "127.0.0.1"}, 'must be "host:port"'),
        ({**env, names[1]: "two"}, "positive integer"),
        ({**env, names[1]: "0"}, "positive integer"),
        ({**env, names[2]: "2"}, r"integer in \[0, 2\)"),
        ({**env, names[2]: "-1"}, r"integer in \[0, 2\)"),
    ]:
        with pytest.raises(ValueError, match=message):
            distribute.parse_jax_cluster(bad)


def test_setup_refuses_a_malformed_cluster_environment(monkeypatch):
    # Checked before any engine starts, so this process is left as it was.
    if BACKEND == "tensorflow":
        monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1"]}}')
        match = "TF_CONFIG task must name a job"
    else:
        monkeypatch.setenv("KERAS_DISTRIBUTION_NUM_PROCESSES", "2")
        match = "needs all of"
    with pytest.raises(ValueError, match=match):
        distribute.setup()


def _batches(sizes, extra_dims=()):
    """Batches of the given sizes; example i has x = i (broadcast) and y = i."""
    out, start = [], 0
    for size in sizes:
        y = np.arange(start, start + size, dtype="int32")
        x = np.broadcast_to(y.reshape((-1,) + (1,) * len(extra_dims)), (size, *extra_dims))
        out.append((np.ascontiguousarray(x), y))
        start += size
    return tf.data.Dataset.from_generator(
        lambda: iter(out),
        output_signature=(
            tf.TensorSpec((None, *extra_dims), tf.int32),
            tf.TensorSpec((None,), tf.int32),
        ),
    )


@pytest.mark.parametrize("replicas", [2, 3, 4])
def test_padding_keeps_every_example_once_and_means_exact(replicas):
    sizes = [8, 7, 1, 5]
    placement = distribute.Placement(distribute.MIRRORED, ("a",) * replicas, replicas)
    batches = list(placement.distribute(_batches(sizes, (11,))).as_numpy_iterator())
    assert len(batches) == len(sizes)  # same number of steps
    for (x, y, w), size in zip(batches, sizes, strict=True):
        padded = -(-size // replicas) * replicas
        assert x.shape == (padded, 11) and y.shape == w.shape == (padded,)
        np.testing.assert_array_equal(w[size:], 0)
        np.testing.assert_allclose(w[:size], padded / size, rtol=1e-6)
        # Keras's default reduction divides sum(w * loss) by the padded batch size: with these
        # weights it is the plain mean over the real examples; a weighted metric likewise.
        values = np.random.default_rng(size).random(padded)
        np.testing.assert_allclose((w * values).sum() / padded, values[:size].mean(), rtol=1e-6)
        accuracy = keras.metrics.SparseCategoricalAccuracy()
        logits = keras.ops.one_hot(np.where(np.arange(padded) % 2 == 0, y % 10, 0), 10)
        accuracy.update_state(y % 10, logits, sample_weight=w)
        expected = np.mean((np.arange(size) % 2 == 0) | (y[:size] % 10 == 0))
        assert float(accuracy.result()) == pytest.approx(expected, abs=1e-6)
    real = np.concatenate([y[w > 0] for _, y, w in batches])
    np.testing.assert_array_equal(real, np.arange(sum(sizes)))


def test_each_process_feeds_its_share_of_the_padded_batch():
    sizes, processes = [8, 7, 3], 2
    shares = []
    for index in range(processes):
        placement = distribute.Placement(
            distribute.DATA_PARALLEL, ("cpu:0",), 2 * processes, processes, index
        )
        shares.append(list(placement.distribute(_batches(sizes)).as_numpy_iterator()))
    for step, size in enumerate(sizes):
        x = np.concatenate([shares[i][step][0] for i in range(processes)])
        w = np.concatenate([shares[i][step][2] for i in range(processes)])
        padded = -(-size // 4) * 4
        assert len(x) == padded and all(len(s[step][0]) == padded // 2 for s in shares)
        np.testing.assert_array_equal(
            x[w > 0], np.arange(sum(sizes[:step]), sum(sizes[: step + 1]))
        )


def test_only_the_chief_writes_the_run_folder(tmp_path):
    chief = distribute.Placement(distribute.MULTI_WORKER, ("cpu",), 2, 2, 0)
    other = dataclasses.replace(chief, process_index=1)
    assert chief.run_dir(tmp_path) == tmp_path
    assert other.run_dir(tmp_path) == tmp_path / "process1"


TWO_DEVICES = """
import json, sys
from pvr_keras.training import distribute
distribute.split_cpu(2)
from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import train_data

run = Run.make("token", window=1, num_examples=4001, test_examples=1001, epochs=4,
               warmup_epochs=1, min_steps=0, batch_size=128, learning_rate=0.1)
for devices in (1, 2):
    # 4001 and 1001 examples: every epoch ends with a ragged batch of 33, the evaluations
    # with one of 1001, neither divisible by 2.
    data = train_data("token", TokenTask(window=1), 4001, test_examples=1001, batch_size=128)
    training.train(run.replace(devices=devices), f"{sys.argv[1]}/devices{devices}", data=data,
                   build_model=lambda: models.get("mlp", widths=(32, 32), embed_dim=8),
                   verbose=0)
"""


@pytest.mark.slow
def test_two_devices_follow_the_one_device_run(tmp_path):
    """2 logical CPU devices (MirroredStrategy / DataParallel) against 1, same data and steps.

    Measured: losses agree to ~1e-5 relative and accuracies to ~1e-7 after 4 epochs (128
    steps) on both backends; without the padding, TensorFlow's uneven ragged batches gave
    1.6e-4 and 0.5% (a JAX ragged batch fails outright).
    """
    env = dict(os.environ, KERAS_BACKEND=BACKEND, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [sys.executable, "-c", TWO_DEVICES, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    one, two = (read_record(tmp_path / f"devices{n}") for n in (1, 2))
    engine = {"tensorflow": distribute.MIRRORED, "jax": distribute.DATA_PARALLEL}[BACKEND]
    assert one["distribution"]["engine"] == distribute.SINGLE
    assert two["distribution"]["engine"] == engine
    assert two["distribution"]["num_replicas"] == 2 and len(two["distribution"]["devices"]) == 2
    assert two["steps_per_epoch"] == one["steps_per_epoch"] == 32
    assert two["status"] == one["status"] == "complete"
    h1, h2 = one["history"], two["history"]
    assert h1["epoch"] == h2["epoch"] == [1, 2, 3, 4]
    assert h1["train_loss"][-1] < h1["train_loss"][0] - 0.05  # it learns: a real comparison
    for key in ("train_loss", "test_loss"):
        np.testing.assert_allclose(h2[key], h1[key], rtol=1e-4, err_msg=key)
    for key in ("train_accuracy", "train_eval_accuracy", "test_accuracy"):
        np.testing.assert_allclose(h2[key], h1[key], atol=1.5e-3, err_msg=key)


BLOCK_HOLDOUT_TWO_DEVICES = """
import sys
from pvr_keras.training import distribute
distribute.split_cpu(2)
sys.path.insert(0, sys.argv[1])
import block_holdout
block_holdout.main(["--model", sys.argv[4], "--width", "1", "--num-examples", "101",
                    "--test-examples", "51", "--train-eval-examples", "51", "--epochs", "1",
                    "--devices", "2", "--data-dir", sys.argv[2], "--out", sys.argv[3]])
"""
# One convolution for VGG11-BN's eight: what is checked is where the runs ran, and tracing
# VGG's layers on two replicas took a third of the test's time. (The two-device tests run in
# processes of their own: a second MirroredStrategy in one process fails, its collective ops
# colliding with the first's.)
NETS = """
import keras


def tiny_cnn(input_shape, num_classes=10):
    images = keras.Input(input_shape)
    x = keras.layers.Conv2D(4, 3, strides=4, name="block0_conv")(images)
    x = keras.layers.BatchNormalization(name="block0_bn")(x)
    x = keras.layers.GlobalAveragePooling2D()(keras.layers.ReLU(name="block0")(x))
    x = keras.layers.Dense(8, activation="relu", name="pre_logits")(x)
    return keras.Model(images, keras.layers.Dense(num_classes, name="logits")(x))
"""


@pytest.mark.slow
def test_block_holdout_on_two_devices(tmp_path, tfds_dir):
    """The visual recipes pass --devices through: both runs on 2 replicas, ragged batches of
    1 and 51 examples included, and the logit analysis written."""
    env = dict(os.environ, KERAS_BACKEND=BACKEND, TF_CPP_MIN_LOG_LEVEL="3")
    out = tmp_path / "run"
    (tmp_path / "nets.py").write_text(NETS)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCK_HOLDOUT_TWO_DEVICES,
            str(REPO / "recipes"),
            str(tfds_dir),
            out,
            f"{tmp_path}/nets.py:tiny_cnn",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    engine = {"tensorflow": distribute.MIRRORED, "jax": distribute.DATA_PARALLEL}[BACKEND]
    for name in ("holdout", "iid"):
        record = read_record(out / name)
        assert record["status"] == "complete"
        assert record["distribution"]["engine"] == engine
        assert record["distribution"]["num_replicas"] == 2
        assert "devices" not in record["config"]  # a killed run may resume on other devices
    summary = json.loads((out / "logits.json").read_text())
    assert set(summary["models"]) == {"IID", "holdout"}
    assert "model trained holdout" in proc.stdout


@pytest.mark.parametrize("replicas", [1, 2])
def test_several_jax_devices_read_batch_logs_on_the_dispatching_thread(replicas):
    """Keras hands batch-end logs to a thread pool where it can; with several JAX devices a
    second thread launching programs can deadlock XLA's CPU all-reduce, so a placement over
    several devices keeps every batch-end callback on the thread that runs ``fit``."""
    import threading

    class Where(keras.callbacks.Callback):
        async_safe = True  # on its own it would leave Keras's thread pool on

        def __init__(self):
            super().__init__()
            self.threads = set()

        def on_train_batch_end(self, batch, logs=None):
            self.threads.add(threading.get_ident())

    placement = distribute.Placement(
        distribute.DATA_PARALLEL, devices=("cpu:0",) * replicas, num_replicas=replicas
    )
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile("sgd", "mse")
    where = Where()
    x = np.zeros((64, 3), "float32")
    model.fit(x, x[:, :2], batch_size=8, verbose=0, callbacks=[*placement.callbacks(), where])
    on_main = where.threads == {threading.get_ident()}
    if replicas > 1:
        assert on_main, where.threads
    elif BACKEND == "jax":  # the thread pool Keras uses on one device: the test can fail
        assert not on_main
