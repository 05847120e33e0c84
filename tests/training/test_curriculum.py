"""The Degree-Curriculum (Abbe et al. 2023): the stage rule against their loop written out, the
examples each epoch trains on, the stages in the record, a run that crashes mid-stage and
resumes bit for bit, and bad input."""

import math

import keras
import numpy as np
import pytest

from pvr_keras.hyperparams import TrainRecipe
from pvr_keras.runconfig import Run, identity
from pvr_keras.training import curriculum, load_run, runs


def _their_loop(weights, leap, eps, d, losses, batch):
    """Their main.py's curriculum on given per-epoch losses: (radius per epoch, steps)."""
    r = 0
    while r == 0 or not any(w <= r for w in weights):
        r += leap
    radii, steps = [], 0
    for loss in losses:
        radii.append(r)
        steps += math.ceil(sum(w <= r for w in weights) / batch)
        if loss < eps:
            if not r < d:
                break
            r += leap
    return radii, steps


def _ours(weights, leap, eps, d, losses, batch):
    state = {"leap": leap, "eps": eps, "radius": curriculum.first_radius(weights, leap),
             "epochs": 0, "total_steps": 0, "reached_eps": False, "stopped": False,
             "stages": [{"radius": 0, "first_epoch": 0, "first_step": 0, "epochs": 0,
                         "steps": 0}]}  # fmt: skip
    radii = []
    for loss in losses:
        if state["stopped"]:
            break
        radii.append(state["radius"])
        steps = math.ceil(int((np.asarray(weights) <= state["radius"]).sum()) / batch)
        state = {**state, "total_steps": state["total_steps"] + steps}
        state = curriculum.next_state(state, loss, d)
    return radii, state["total_steps"]


@pytest.mark.parametrize("seed", range(6))
def test_the_stage_rule_is_their_loop(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 12))
    weights = rng.integers(int(rng.integers(0, d)), d + 1, size=int(rng.integers(1, 60)))
    leap = int(rng.integers(1, d + 1))
    losses = rng.choice([0.5, 1e-4], size=40, p=[0.6, 0.4])
    expected = _their_loop(weights.tolist(), leap, 1e-3, d, losses, 8)
    assert _ours(weights, leap, 1e-3, d, losses, 8) == expected


def test_the_first_radius_skips_empty_balls():
    assert curriculum.first_radius([5, 7, 9], 2) == 6
    assert curriculum.first_radius([0, 9], 4) == 4
    with pytest.raises(ValueError, match="at least one"):
        curriculum.first_radius([], 1)
    for leap in (0, -2, 1.5):
        with pytest.raises(ValueError, match="leap must be an integer >= 1"):
            curriculum.first_radius([5, 7], leap)


def test_each_epoch_trains_on_the_ball_in_its_own_order():
    weights = np.array([0, 3, 1, 5, 2, 2, 4, 0])
    one = curriculum.epoch_order(weights, 2, seed=0, epoch=0)
    assert sorted(one.tolist()) == [0, 2, 4, 5, 7]
    again = curriculum.epoch_order(weights, 2, seed=0, epoch=0)
    np.testing.assert_array_equal(one, again)
    others = {tuple(curriculum.epoch_order(weights, 2, seed=0, epoch=e)) for e in range(8)}
    assert len(others) > 1  # reshuffled each epoch


def _run(epochs=14, **more):
    return Run.make(
        "gotu", num_bits=6, target="parity:all", model="gotu_mlp",
        model_kwargs={"widths": (32, 16)}, num_examples=96, test_examples=64,
        train_eval_examples=64, optimizer="adam", learning_rate=1e-2, batch_size=16,
        epochs=epochs, curriculum_leap=2, curriculum_eps=0.6, **more,
    )  # fmt: skip


class _Crash(keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._current == self.epoch and batch == 1:
            raise RuntimeError("killed")

    def on_epoch_begin(self, epoch, logs=None):
        self._current = epoch


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("curriculum") / "full"
    record = runs.run(_run(), out, callbacks=[])
    return out, record


def test_the_stages_are_recorded_with_the_examples_each_trains_on(uninterrupted):
    out, record = uninterrupted
    state = record["curriculum"]
    from pvr_keras import data

    x, _ = data.boolean_arrays(_run().task, 96, seed=0)
    weights = (x < 0).sum(axis=1)
    assert [s["radius"] for s in state["stages"]][:2] == [2, 4]  # the loss fell below 0.6
    total = 0
    for stage in state["stages"]:
        per_epoch = math.ceil(int((weights <= stage["radius"]).sum()) / 16)
        assert stage["steps"] == per_epoch * stage["epochs"]
        assert stage["first_step"] == total
        total += stage["steps"]
    assert state["total_steps"] == total
    epochs = sum(s["epochs"] for s in state["stages"])
    assert record["epochs_completed"] == state["epochs"] == epochs


def test_a_run_crashed_mid_stage_resumes_bit_for_bit(uninterrupted, tmp_path):
    full_dir, full = uninterrupted
    stages = full["curriculum"]["stages"]
    assert len(stages) >= 2, stages
    crash = stages[1]["first_epoch"]  # the first epoch at the second radius
    out = tmp_path / "crashed"
    run = _run()
    with pytest.raises(RuntimeError, match="killed"):
        runs.run(run, out, callbacks=[_Crash(crash)])
    resumed = runs.run(run, out, callbacks=[])
    assert resumed["resumed"] == 1
    assert resumed["curriculum"] == full["curriculum"]
    for column, values in full["history"].items():
        if column != "epoch_seconds":
            assert resumed["history"][column] == values, column
    assert resumed["final"] == full["final"]
    for got, want in zip(load_run(out).model.get_weights(), load_run(full_dir).model.get_weights(),
                         strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, want)


def test_the_curriculum_is_in_the_identity_only_when_on():
    plain = Run.make("gotu")
    assert "curriculum_leap" not in identity(plain)
    assert Run.make("gotu", curriculum_leap=0).run_id == plain.run_id
    assert Run.make("gotu", curriculum_leap=4).run_id != plain.run_id


@pytest.mark.parametrize(
    "fields, match",
    [
        (dict(curriculum_leap=-1), "curriculum_leap"),
        (dict(curriculum_leap=1.5), "curriculum_leap"),
        (dict(curriculum_eps=0.0), "curriculum_eps"),
        (dict(curriculum_eps=float("nan")), "curriculum_eps"),
    ],
)
def test_bad_curriculum_settings(fields, match):
    with pytest.raises(ValueError, match=match):
        TrainRecipe(**fields)


def test_a_kind_of_tokens_is_refused(tmp_path):
    run = Run.make("token", num_examples=100, test_examples=100, train_eval_examples=100,
                   epochs=1, curriculum_leap=2)  # fmt: skip
    with pytest.raises(ValueError, match="kind whose inputs are bits"):
        runs.run(run, tmp_path / "token", save_model=False)
