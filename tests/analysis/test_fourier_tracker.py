"""FourierTracker's epochs: 0 is the initial function (before the first step), as Abbe et al.'s
tracking starts; a resumed run keeps the epochs its file holds and adds no second epoch 0."""

import json

import keras
import numpy as np

from pvr_keras.analysis import boolean, fourier_tracking
from pvr_keras.tasks import FunctionTask

TASK = FunctionTask(num_bits=4, target="x0x1", domain="any_of:0,1")


def _model():
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1)])  # fmt: skip
    model.compile("sgd", "mse")
    return model


def _cube():
    rows = np.arange(16)
    return (1 - 2 * ((rows[:, None] >> np.arange(4)) & 1)).astype("float32")


def test_epoch_0_is_the_initial_function(tmp_path):
    model = _model()
    initial = boolean.model_values(model, 4)
    tracker = fourier_tracking.FourierTracker(TASK, tmp_path)
    x = _cube()
    model.fit(x, boolean.target_values(TASK)[:, None], epochs=2, verbose=0, callbacks=[tracker])
    found = fourier_tracking.read(tmp_path)
    assert sorted(map(int, found["epochs"])) == [0, 1, 2]
    expected = fourier_tracking.measures(initial, boolean.target_values(TASK), (),
                                         tracker.subsets, seen=tracker.seen)  # fmt: skip
    assert found["epochs"]["0"] == json.loads(json.dumps(expected))
    assert found["epochs"]["0"] != found["epochs"]["1"]  # one epoch of SGD moved it


def test_a_resumed_run_adds_no_epoch_0(tmp_path):
    model = _model()
    first = fourier_tracking.FourierTracker(TASK, tmp_path)
    y = boolean.target_values(TASK)[:, None]
    model.fit(_cube(), y, epochs=1, verbose=0, callbacks=[first])
    saved = fourier_tracking.read(tmp_path)
    saved["epochs"].pop("0")  # as a file written before epoch 0 was tracked
    (tmp_path / fourier_tracking.FILE).write_text(json.dumps(saved))
    again = fourier_tracking.FourierTracker(TASK, tmp_path)
    model.fit(_cube(), y, epochs=2, initial_epoch=1, verbose=0, callbacks=[again])
    assert sorted(map(int, fourier_tracking.read(tmp_path)["epochs"])) == [1, 2]
