"""FourierTracker's epochs: 0 is the initial function (before the first step), as Abbe et al.'s
tracking starts; a resumed run keeps the epochs its file holds and adds no second epoch 0. A
cube too large to list is sampled: its estimates against the exact numbers."""

import json

import keras
import numpy as np
import pytest

from pvr_keras.analysis import boolean, fourier_tracking, sampled_tracking
from pvr_keras.analysis.unseen import expansion_at, mdi_expansion, seen_mask, task_mdi
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


# A cube too large to list: estimates on a sample (sampled_tracking), against the exact ones.
TASK15 = FunctionTask(num_bits=15, target="x0x1", domain="any_of:0,1")
EXACT_KEYS = ["subsets", "subset_bits", "target_coefficients", "frozen", "mdi_coefficients",
              "epochs"]  # fmt: skip
EPOCH_KEYS = ["half_mse", "in_distribution_half_mse", "coefficients", "seen_mse", "unseen_mse",
              "unseen_mse_to_mdi", "leak", "degree_profile"]  # fmt: skip


def _rows(x):
    return ((x < 0).astype(np.int64) << np.arange(x.shape[1])).sum(axis=1)


def _mixture(d, a):
    """A Keras model of a * x0x1 + (1 - a) * (x0 + x1 - 1): a * the truth + (1 - a) * the MDI
    of 2parity; no weights."""
    inputs = keras.Input((d,))
    x0, x1 = inputs[:, :1], inputs[:, 1:2]
    outputs = keras.layers.Lambda(lambda x: a * x[0] * x[1] + (1 - a) * (x[0] + x[1] - 1))([x0, x1])
    return keras.Model(inputs, outputs)


def _track(task, folder, model, **kwargs):
    """The tracker's fourier.json after its epoch 0 on ``model``."""
    tracker = fourier_tracking.FourierTracker(task, folder, mdi=mdi_expansion(task), **kwargs)
    tracker.set_model(model)
    tracker.on_train_begin()
    return fourier_tracking.read(folder)


def test_sampled_measures_agree_with_the_exact_ones_within_their_standard_errors():
    """A noisy function on 2parity's cube at d = 15: each estimate within 4 Monte-Carlo
    standard errors of the exact number (a fixed seed); the leak of a * truth + (1 - a) * MDI
    is 1 - a exactly, sampled or not (a ratio on the same points)."""
    task = TASK15
    target, seen, mdi = boolean.target_values(task), seen_mask(task), task_mdi(task)
    subsets = [0, 1, 2, 3, 5]  # 1, x0, x1, x0x1, x0x2
    noise = np.random.default_rng(0).normal(0, 0.5, target.size)
    learned = 0.3 * target + 0.7 * mdi + noise
    exact = fourier_tracking.measures(learned, target, (), subsets, seen=seen, mdi=mdi)
    x = sampled_tracking.sample_points(15, 2**14, seed=1)
    at = mdi_expansion(task)
    values, mdi_x, seen_x = learned[_rows(x)], expansion_at(at, x), task.seen(x)
    found = sampled_tracking.sampled_measures(values, x, task.label(x), seen_x, subsets, mdi=mdi_x)
    assert set(found) == set(exact) and found["degree_profile"] is None
    chars = sampled_tracking.characters_at(x, subsets)
    for i, c in enumerate(exact["coefficients"]):
        se = np.std(values * chars[:, i]) / np.sqrt(len(x))
        assert abs(found["coefficients"][i] - c) < 4 * se, (subsets[i], found["coefficients"][i])
    error = (values - task.label(x)) ** 2
    unseen = ~seen_x
    for key, parts, scale in [
        ("half_mse", error, 0.5), ("in_distribution_half_mse", error[seen_x], 0.5),
        ("seen_mse", error[seen_x], 1.0), ("unseen_mse", error[unseen], 1.0),
        ("unseen_mse_to_mdi", (values - mdi_x)[unseen] ** 2, 1.0),
    ]:  # fmt: skip
        se = scale * np.std(parts) / np.sqrt(len(parts))
        assert abs(found[key] - exact[key]) < 4 * se, (key, found[key], exact[key])
    # the leak: a ratio of two means over the unseen points; its delta-method standard error
    gap = (task.label(x) - mdi_x)[unseen]
    top, bottom = (task.label(x)[unseen] - values[unseen]) * gap, gap**2
    se = np.std(top - found["leak"] * bottom) / (np.sqrt(unseen.sum()) * bottom.mean())
    assert abs(found["leak"] - exact["leak"]) < 4 * se and abs(exact["leak"] - 0.7) < 0.01
    for a, expected in [(0.3, 0.7), (0.0, 1.0), (1.0, 0.0)]:  # no noise: exact, sampled or not
        mixed = (a * target + (1 - a) * mdi)[_rows(x)]
        leak = sampled_tracking.sampled_measures(mixed, x, task.label(x), seen_x, subsets,
                                                 mdi=mdi_x)["leak"]  # fmt: skip
        assert leak == pytest.approx(expected, abs=1e-12)


def test_a_sampled_tracker_stores_estimates_and_says_so(tmp_path):
    """The tracker on a sample of 2parity's d = 15 cube: the Keras model 0.3 * truth + 0.7 *
    MDI has leak 0.7 and coefficients within 4 standard errors of (-0.7, 0.7, 0.7, 0.3); the
    exact coefficients of the target and the MDI; the sample's size and unseen share."""
    found = _track(TASK15, tmp_path, _mixture(15, 0.3), points=4096, sample_seed=5)
    seen = found["evaluation"]["seen_points"]
    assert found["evaluation"] == {"kind": "sampled", "points": 4096, "seed": 5,
                                   "seen_points": seen, "unseen_points": 4096 - seen}  # fmt: skip
    assert abs(found["evaluation"]["unseen_points"] - 1024) < 4 * np.sqrt(4096 * 3 / 16)
    assert found["subsets"] == [0, 1, 2, 3]
    assert found["target_coefficients"] == [0.0, 0.0, 0.0, 1.0]
    assert found["mdi_coefficients"] == pytest.approx([-1.0, 1.0, 1.0, 0.0], abs=1e-12)
    epoch = found["epochs"]["0"]
    assert list(epoch) == EPOCH_KEYS and epoch["degree_profile"] is None
    assert epoch["leak"] == pytest.approx(0.7, abs=1e-6)  # float32 outputs
    se = np.sqrt(0.49 * 3 + 0.09) / np.sqrt(4096)  # sqrt(E f^2 / N) bounds each one
    assert np.all(np.abs(np.subtract(epoch["coefficients"], [-0.7, 0.7, 0.7, 0.3])) < 4 * se)
    assert epoch["unseen_mse"] == pytest.approx(0.7**2 * 16, rel=1e-5)  # f - g = 0.7 * 4 there
    assert epoch["seen_mse"] == pytest.approx(0.0, abs=1e-10)
    # one fixed sample: the same seed, the same numbers
    assert _track(TASK15, tmp_path / "again", _mixture(15, 0.3), points=4096,
                  sample_seed=5)["epochs"] == found["epochs"]  # fmt: skip


def test_a_cube_too_large_to_list_is_sampled(tmp_path):
    task = FunctionTask(num_bits=40, target="x0x1", domain="any_of:0,1", draw="uniform")
    found = _track(task, tmp_path, _mixture(40, 0.3))
    assert found["evaluation"]["kind"] == "sampled"
    assert found["evaluation"]["points"] == sampled_tracking.SAMPLE_POINTS
    assert found["epochs"]["0"]["leak"] == pytest.approx(0.7, abs=1e-6)


def test_the_exact_tracker_keeps_its_file(tmp_path):
    """d = 15, the cube listed: the keys of fourier.json as before sampling existed, no
    ``evaluation``, and the numbers of ``measures`` on the whole cube."""
    model = _mixture(15, 0.3)
    tracker = fourier_tracking.FourierTracker(TASK15, tmp_path, mdi=task_mdi(TASK15))
    tracker.set_model(model)
    tracker.on_train_begin()
    found = fourier_tracking.read(tmp_path)
    assert list(found) == EXACT_KEYS and list(found["epochs"]["0"]) == EPOCH_KEYS
    values = boolean.model_values(model, 15)
    expected = fourier_tracking.measures(values, boolean.target_values(TASK15), (), [0, 1, 2, 3],
                                         seen=seen_mask(TASK15), mdi=task_mdi(TASK15))  # fmt: skip
    assert found["epochs"]["0"] == json.loads(json.dumps(expected))
    # the MDI given as its expansion: the same file
    again = fourier_tracking.FourierTracker(TASK15, tmp_path / "e", mdi=mdi_expansion(TASK15))
    again.set_model(model)
    again.on_train_begin()
    assert fourier_tracking.read(tmp_path / "e") == found  # task_mdi's own route


def test_sampled_tracking_bad_input(tmp_path):
    with pytest.raises(ValueError, match="the sample size must be"):
        fourier_tracking.FourierTracker(TASK15, tmp_path, points=0)
    with pytest.raises(ValueError, match="the sample size must be"):
        sampled_tracking.sample_points(15, sampled_tracking.MAX_SAMPLE_POINTS + 1)
    with pytest.raises(ValueError, match="not a mask of the cube's rows"):
        fourier_tracking.FourierTracker(TASK15, tmp_path, points=64, seen=seen_mask(TASK15))
    with pytest.raises(ValueError, match="as its Fourier expansion"):
        fourier_tracking.FourierTracker(TASK15, tmp_path, points=64, mdi=task_mdi(TASK15))
    with pytest.raises(ValueError, match="give a polynomial target"):
        fourier_tracking.FourierTracker(FunctionTask(num_bits=30, target="majority:0,1,2"),
                                        tmp_path)  # fmt: skip
    with pytest.raises(ValueError, match="one sample; received lengths 3, 2"):
        sampled_tracking.sampled_measures(np.zeros(3), np.ones((2, 4)), np.zeros(3),
                                          np.ones(3, bool), [1])  # fmt: skip
