"""Two processes on 127.0.0.1 train one model together (the backend of this test session).

TensorFlow: ``MultiWorkerMirroredStrategy`` from ``TF_CONFIG``; JAX: ``jax.distributed`` via
``keras.distribution.initialize`` (``KERAS_DISTRIBUTION_*``) and a ``DataParallel`` mesh.
"""

import json
import os
import socket
import subprocess
import sys

import keras
import numpy as np
import pytest

import pvr_keras.models  # noqa: F401  (registers the model classes for load_model)
from pvr_keras import training
from pvr_keras.training import distribute, read_record, records

BACKEND = keras.backend.backend()
SETUP = """
from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import train_data

RUN = Run.make("token", window=1, num_examples=1105, test_examples=1001, epochs=2,
               warmup_epochs=1, min_steps=0, batch_size=128, learning_rate=0.1)


def data():
    # 1105 and 1001 examples: ragged last batches (81 and 1001) in training and evaluation.
    return train_data("token", TokenTask(window=1), 1105, test_examples=1001, batch_size=128)


def build():
    return models.get("mlp", widths=(32, 32), embed_dim=8)
"""
WORKER = """
import sys
from pvr_keras.training import distribute
placement = distribute.setup()  # first, before TensorFlow or JAX run anything
from pvr_keras import training
{setup}
training.train(RUN, sys.argv[1], build_model=build, data=data(), distribution=placement,
               verbose=0, save_model=True)
"""


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _cluster_env(index, ports):
    if BACKEND == "tensorflow":
        cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
        return {
            "TF_CONFIG": json.dumps(
                {"cluster": cluster, "task": {"type": "worker", "index": index}}
            )
        }
    return {
        "KERAS_DISTRIBUTION_JOB_ADDRESSES": f"127.0.0.1:{ports[0]}",
        "KERAS_DISTRIBUTION_NUM_PROCESSES": str(len(ports)),
        "KERAS_DISTRIBUTION_PROCESS_ID": str(index),
    }


@pytest.mark.slow
def test_two_processes_train_one_model(tmp_path):
    """Measured: both processes end with bit-identical weights and histories; the loss curve
    matches a one-process run of the same data and steps to ~3e-6 (TF) and ~1e-6 (JAX)."""
    out = tmp_path / "run"
    ports = _free_ports(2)
    procs = []
    for index in range(2):
        env = dict(os.environ, KERAS_BACKEND=BACKEND, TF_CPP_MIN_LOG_LEVEL="3")
        env.update(_cluster_env(index, ports))
        log = open(tmp_path / f"process{index}.log", "w")
        code = WORKER.format(setup=SETUP)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", code, str(out)], env=env, stdout=log, stderr=log
            )
        )
    try:
        # The one-process reference runs here meanwhile: same data, same steps.
        namespace = {}
        exec(SETUP, namespace)  # the workers' data and model, in this process
        single = training.train(
            namespace["RUN"],
            tmp_path / "single",
            build_model=namespace["build"],
            data=namespace["data"](),
            verbose=0,
        )
        for proc in procs:
            proc.wait(timeout=300)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    logs = [(tmp_path / f"process{i}.log").read_text()[-3000:] for i in range(2)]
    assert [p.returncode for p in procs] == [0, 0], logs
    chief, other = read_record(out), read_record(out / "process1")
    engine = {"tensorflow": distribute.MULTI_WORKER, "jax": distribute.DATA_PARALLEL}[BACKEND]
    for index, record in enumerate((chief, other)):
        assert record["distribution"]["engine"] == engine
        assert record["distribution"]["num_processes"] == 2
        assert record["distribution"]["num_replicas"] == 2
        assert record["distribution"]["process_index"] == index
        assert record["steps_per_epoch"] == single["steps_per_epoch"] == 9
    assert chief["history"] == {
        **other["history"],
        **{c: chief["history"][c] for c in records.TIMING_COLUMNS},
    }
    weights = [
        keras.saving.load_model(folder / "model.keras").get_weights()
        for folder in (out, out / "process1")
    ]
    for a, b in zip(*weights, strict=True):
        np.testing.assert_array_equal(a, b)
    for key in ("train_loss", "test_loss"):
        np.testing.assert_allclose(chief["history"][key], single["history"][key], rtol=1e-4)
    for key in ("train_accuracy", "train_eval_accuracy", "test_accuracy"):
        np.testing.assert_allclose(chief["history"][key], single["history"][key], atol=1.5e-3)
