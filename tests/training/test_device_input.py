"""Training from device input (``inputs.*_train_data(input="device")``) through
``training.train`` and ``model.fit``: the same run as from tf.data, on one device and sharded
over two, and TensorFlow never started on a device.

The fit-level tests need the JAX backend (the batches are jax.Arrays made by jitted JAX
programs); under TensorFlow the choice is refused up front.
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import inputs, read_record, records

REPO = pathlib.Path(__file__).resolve().parents[2]
BACKEND = keras.backend.backend()
jax_only = pytest.mark.skipif(BACKEND != "jax", reason="device input runs on the JAX backend")

RUN = Run.make("token", num_examples=2001, test_examples=1001, epochs=3, warmup_epochs=1,
               min_steps=0, batch_size=128, learning_rate=0.1)  # fmt: skip


def _build():
    return models.get("mlp", widths=(32, 32), embed_dim=8)


def _run(tmp_path, input, holdout=0):
    # 2001 and 1001 examples: ragged last batches (81 and 1001) in training and evaluation.
    data = inputs.train_data("token",
        TokenTask(window=2), 2001, test_examples=1001, batch_size=128, holdout=holdout,
        input=input,
    )  # fmt: skip
    run = RUN.replace(window=2, holdout=holdout)
    return training.train(run, tmp_path / input, build_model=_build, data=data, verbose=0)


@jax_only
def test_device_input_trains_exactly_as_tfdata(tmp_path):
    device, tfdata = _run(tmp_path, "device", holdout=1), _run(tmp_path, "tfdata", holdout=1)
    assert device["input"] == "device" and tfdata["input"] == "tfdata"
    assert device["history"]["train_loss"][-1] < device["history"]["train_loss"][0]
    # The same examples in the same order through the same compiled steps: equal records.
    for key, values in tfdata["history"].items():
        if key not in records.TIMING_COLUMNS:
            assert device["history"][key] == values, key
    assert device["final"] == tfdata["final"]
    assert "iid_test_accuracy" in device["final"]


# One process for two tests (an import of JAX and TensorFlow each is seconds): first a run on
# one device from device input, then whether TensorFlow started; then the same data on two
# devices (the CPU split in two) from device input and from tf.data.
TWO_DEVICES = """
import json, sys
from pvr_keras.training import distribute
distribute.split_cpu(2)
placement = distribute.setup(2)
import numpy as np
from pvr_keras import models, training
from pvr_keras.kinds.token import jax_data as device
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import train_data
one = Run.make("token", num_examples=600, test_examples=300, epochs=1, min_steps=0,
               batch_size=128)
data = train_data("token", TokenTask(), 600, test_examples=300, batch_size=128, input="device")
training.train(one, f"{sys.argv[1]}/one", data=data, verbose=0,  # no distribution: one device
               build_model=lambda: models.get("mlp", widths=(16,), embed_dim=4))
tf_started = False
if "tensorflow" in sys.modules:  # imported by keras.utils.set_random_seed, to seed tf.random
    from tensorflow.python.eager import context
    tf_started = context.context()._context_handle is not None
run = Run.make("token", window=1, num_examples=2001, test_examples=1001, epochs=2,
               warmup_epochs=1, min_steps=0, batch_size=128, learning_rate=0.1)
for source in ("device", "tfdata"):
    data = train_data("token", TokenTask(window=1), 2001, test_examples=1001, batch_size=128,
                            input=source)
    training.train(run, f"{sys.argv[1]}/{source}", data=data, verbose=0,
                   build_model=lambda: models.get("mlp", widths=(32, 32), embed_dim=8),
                   distribution=placement)
stream = device.token_stream(TokenTask(), 2001, batch_size=128)
x, y, w = stream.with_distribution(placement.strategy)[15]  # the ragged batch, 81 -> 82 rows
print(json.dumps({
    "tf_started": tf_started,
    "shape": list(x.shape),
    "shards": sorted(str(s.device) for s in x.addressable_shards),
    "rows": [s.data.shape[0] for s in x.addressable_shards],
    "same_rows": bool((np.asarray(x)[:81] == np.asarray(stream[15][0])).all()),
    "weights": [float(w[0]), float(w[-1])],
}))
"""


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory):
    """(folder of its runs, report) of the ``TWO_DEVICES`` process."""
    out = tmp_path_factory.mktemp("two_devices")
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [sys.executable, "-c", TWO_DEVICES, str(out)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, json.loads(proc.stdout.strip().splitlines()[-1])


@jax_only
@pytest.mark.slow
def test_two_devices_each_make_their_share_and_train_as_tfdata(two_devices):
    out, report = two_devices
    assert report["shape"] == [82, 11] and report["rows"] == [41, 41]
    assert len(set(report["shards"])) == 2  # one share on each device
    assert report["same_rows"] and report["weights"] == [
        float(np.float32(82) / np.float32(81)),
        0.0,
    ]
    device, tfdata = (read_record(out / name) for name in ("device", "tfdata"))
    assert device["distribution"]["engine"] == tfdata["distribution"]["engine"]
    assert device["distribution"]["num_replicas"] == 2
    assert device["history"]["train_loss"] == tfdata["history"]["train_loss"]
    assert device["history"]["test_accuracy"] == tfdata["history"]["test_accuracy"]


@jax_only
def test_training_from_device_input_never_starts_tensorflow(two_devices):
    # Keras's set_random_seed imports TensorFlow when it is installed, but no TF op runs and
    # TF never creates its devices, so it never claims an accelerator's memory.
    out, report = two_devices
    one = read_record(out / "one")
    assert one["input"] == "device" and one["distribution"]["num_replicas"] == 1
    assert report["tf_started"] is False


@pytest.mark.skipif(BACKEND != "tensorflow", reason="the refusal is for the TensorFlow backend")
def test_device_input_on_tensorflow_says_why_and_what_to_use():
    with pytest.raises(ValueError, match="needs the JAX backend; received backend 'tensorflow'"):
        inputs.train_data(
            "token", TokenTask(), 100, test_examples=10, batch_size=10, input="device"
        )


def test_unknown_input_names_the_choices():
    with pytest.raises(ValueError, match="input must be one of tfdata, device; received 'gpu'"):
        inputs.check_input("gpu")
    assert inputs.default_input() == ("device" if BACKEND == "jax" else "tfdata")


TWO_PROCESSES = """
import sys
from pvr_keras.training import distribute
placement = distribute.setup()  # first, before JAX runs anything
from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import train_data
run = Run.make("token", window=1, num_examples=2001, test_examples=1001, epochs=2,
               warmup_epochs=1, min_steps=0, batch_size=128, learning_rate=0.1)
data = train_data("token", TokenTask(window=1), 2001, test_examples=1001, batch_size=128,
                        input="device")
training.train(run, sys.argv[1], data=data, distribution=placement, verbose=0,
               build_model=lambda: models.get("mlp", widths=(32, 32), embed_dim=8))
"""


@jax_only
@pytest.mark.slow
def test_two_processes_each_make_their_share_and_train_as_tfdata(tmp_path, two_devices):
    """jax.distributed over two processes on 127.0.0.1: each makes its rows of every batch
    on its own device; the run equals a one-process tf.data run of the same data and steps
    (the padding and the shares are training.distribute's): ``two_devices``'s, on two devices
    (which test_distribute.py holds against one device)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for index in range(2):
        env = dict(
            os.environ,
            KERAS_BACKEND="jax",
            TF_CPP_MIN_LOG_LEVEL="3",
            KERAS_DISTRIBUTION_JOB_ADDRESSES=f"127.0.0.1:{port}",
            KERAS_DISTRIBUTION_NUM_PROCESSES="2",
            KERAS_DISTRIBUTION_PROCESS_ID=str(index),
        )
        log = open(tmp_path / f"process{index}.log", "w")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", TWO_PROCESSES, str(tmp_path / "run")],
                env=env,
                cwd=REPO,
                stdout=log,
                stderr=log,
            )
        )
    try:
        for proc in procs:
            proc.wait(timeout=300)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    logs = [(tmp_path / f"process{i}.log").read_text()[-3000:] for i in range(2)]
    assert [p.returncode for p in procs] == [0, 0], logs
    chief, other = read_record(tmp_path / "run"), read_record(tmp_path / "run" / "process1")
    single = read_record(two_devices[0] / "tfdata")
    assert chief["config"] == single["config"]  # the same run
    for record in (chief, other):
        assert record["input"] == "device" and record["distribution"]["num_processes"] == 2
        assert record["history"]["train_loss"] == chief["history"]["train_loss"]
    np.testing.assert_allclose(
        chief["history"]["train_loss"], single["history"]["train_loss"], rtol=1e-4
    )
    np.testing.assert_allclose(
        chief["history"]["test_accuracy"], single["history"]["test_accuracy"], atol=1.5e-3
    )


@jax_only
@pytest.mark.parametrize("shuffle_batches", [False, True])
def test_fit_epochs_over_a_finite_stream_see_the_orders_tfdata_gives(shuffle_batches):
    # model.fit(stream, epochs=4), the way a Keras user calls it: a new order each epoch,
    # tf.data's four orders (tests/data/test_fit_order.py's fingerprint). With fit's default
    # shuffle=True Keras also permutes a PyDataset's batches: then each epoch still holds
    # exactly that epoch's examples, only the batches come in another order.
    from pvr_keras import data
    from pvr_keras.kinds.token import jax_data as device
    from tests.data.test_fit_order import BATCH, TASK, N, _model

    def orders(stream, epochs, initial_epoch=0):
        model = _model()
        history = model.fit(
            stream, epochs=epochs, initial_epoch=initial_epoch, shuffle=False, verbose=0
        )
        return history.history["order"]

    kwargs = dict(batch_size=BATCH, seed=4, shuffle=True)
    if not shuffle_batches:
        got = orders(device.token_stream(TASK, N, **kwargs), 4)
        assert got == orders(data.token_dataset(TASK, N, **kwargs), 4)
        assert len(set(got)) == 4
        resumed = orders(device.token_stream(TASK, N, first_epoch=2, **kwargs), 4, 2)
        assert resumed == got[2:]
        return
    stream = device.token_stream(TASK, N, **kwargs)
    seen = []

    class Epochs(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append(stream.next_epoch)

    _model().fit(stream, epochs=3, verbose=0, callbacks=[Epochs()])  # fit's default shuffle
    assert seen == [0, 1, 2] and stream.next_epoch == 3  # one epoch's order per fit epoch
