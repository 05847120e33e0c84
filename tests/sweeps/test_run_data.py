"""A token ``Run`` trains on the data its fields describe: every task field, the seed and the
sizes reach the streams ``training.train`` makes of the run it is given (the real
``train_run``, with ``training.train`` replaced by a stand-in that keeps its arguments; the
streams, model and recipe made of them as ``training.train`` makes them)."""

import dataclasses

import numpy as np
import pytest

from pvr_keras import data, models, training
from pvr_keras.runconfig import Run
from pvr_keras.sweeps.engine import train_run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import inputs, runs

SIZES = dict(num_examples=600, test_examples=300, batch_size=128)
TASK_FIELDS = ("window", "aggregation", "window_mode", "pointer", "holdout_values")
# Each changes the examples a run trains or is tested on.
CASES = [
    {"pointer": False},
    {"aggregation": "median", "window": 3},
    {"window_mode": "restricted", "window": 4},
    {"window": 3, "holdout": 2},
    {"window": 3, "holdout": 6, "holdout_values": (1, 2, 3)},
    {"seed": 5},
]


def _captured(monkeypatch, tmp_path, run):
    calls = []
    monkeypatch.setattr(training, "train", lambda *args, **kwargs: calls.append((args, kwargs)))
    # tf.data streams on either backend (device input makes the same examples: test_device).
    train_run(run, tmp_path / run.run_id, input="tfdata")
    (args, kwargs), given = calls[0], calls[0][1]["run"]
    assert args == () and given == run and kwargs["input"] == "tfdata"
    train_data = inputs.run_data(given, kwargs["input"])  # what training.train makes of them
    return runs.model_builder(given), train_data, given.train, kwargs


def _arrays(dataset):
    xs, ys = zip(*((x.numpy(), y.numpy()) for x, y in dataset), strict=True)
    return np.concatenate(xs), np.concatenate(ys)


def _expected(fields, n, split, holdout=None):
    """The examples ``fields`` describe, made without ``Run``."""
    task = TokenTask(**{k: v for k, v in fields.items() if k in TASK_FIELDS})
    holdout = fields.get("holdout", 0) if holdout is None else holdout
    return data.token_arrays(task, n, split=split, seed=fields.get("seed", 0), holdout=holdout)


@pytest.mark.parametrize("fields", CASES, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
def test_every_task_field_reaches_the_data(monkeypatch, tmp_path, fields):
    run = Run.make("token", **SIZES, **fields)
    _, train_data, _, kwargs = _captured(monkeypatch, tmp_path, run)
    assert kwargs["run"].seed == run.seed and kwargs["run"].to_dict() == run.to_dict()
    assert train_data.num_examples == SIZES["num_examples"]
    n, n_test = SIZES["num_examples"], SIZES["test_examples"]

    x_test, y_test = _arrays(train_data.test)
    want_test = _expected(fields, n_test, "test")
    np.testing.assert_array_equal(x_test, want_test[0])
    np.testing.assert_array_equal(y_test, want_test[1])
    x_eval, y_eval = _arrays(train_data.train_eval)
    want_train = _expected(fields, n, "train")
    np.testing.assert_array_equal(x_eval, want_train[0])
    np.testing.assert_array_equal(y_eval, want_train[1])
    # The stream fit trains on: the same examples (one epoch, shuffled, in batches of 128).
    steps = -(-n // SIZES["batch_size"])
    x_fit, y_fit = _arrays(train_data.make_train(0).take(steps))
    assert len(x_fit) == n
    order = np.lexsort(x_fit.T[::-1])
    want = np.lexsort(want_train[0].T[::-1])
    np.testing.assert_array_equal(x_fit[order], want_train[0][want])
    np.testing.assert_array_equal(y_fit[order], want_train[1][want])
    if fields.get("holdout"):  # plus the IID test set of a holdout run
        x_iid, _ = _arrays(train_data.final_evals["iid_test"])
        np.testing.assert_array_equal(x_iid, _expected(fields, n_test, "test", holdout=0)[0])
    else:
        assert train_data.final_evals == {}
    # And the field matters: the default run's test set is another one (tokens or labels).
    x_default, y_default = _expected({}, n_test, "test")
    assert not (np.array_equal(x_test, x_default) and np.array_equal(y_test, y_default))


def test_the_recipe_fields_reach_the_recipe(monkeypatch, tmp_path):
    overrides = dict(epochs=7, warmup_epochs=2, min_steps=30, batch_size=64, learning_rate=0.2)
    run = Run.make("token", num_examples=600, test_examples=100, **overrides)
    _, train_data, recipe, _ = _captured(monkeypatch, tmp_path, run)
    assert recipe == dataclasses.replace(training.TOKEN, **overrides)
    x, _ = next(iter(train_data.make_train(0)))
    assert x.shape == (64, 11)
    assert recipe.num_epochs(600) == 7 and recipe.steps_per_epoch(600) == 10


def test_the_model_fields_reach_the_model(monkeypatch, tmp_path):
    run = Run.make("token", model="mlp", model_kwargs={"embed_dim": 4, "widths": (8, 6)}, **SIZES)
    build_model, *_ = _captured(monkeypatch, tmp_path, run)
    model = build_model()
    assert model.name == "mlp"
    assert model.count_params() == models.mlp(embed_dim=4, widths=(8, 6)).count_params()
    assert model.get_layer("pre_logits").output.shape == (None, 6)
