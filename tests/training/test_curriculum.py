"""The Degree-Curriculum (``training.curriculum``, Abbe, Bengio, Lotfi, Rizk 2023): its stage
rule against a plain simulation, the examples each epoch trains on, the stages in the record,
a run interrupted mid-stage resuming to the same bits, and the inputs it refuses."""

import dataclasses
import math
import random
import types

import keras
import numpy as np
import pytest

from pvr_keras import training
from pvr_keras.hyperparams import GOTU, TrainRecipe
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.tasks.functions import FunctionTask
from pvr_keras.training import curriculum, loop, read_record, records
from pvr_keras.training.inputs import train_data
from tests.training.fingerprints import Interrupted, Progress, Tap, WithCallbacks, checkpoint_arrays

# d = 7 bits, majority of all: +1 on every example of at most 3 bits -1, so the first stages'
# labels are all +1 (a constant the model learns in a few epochs) and the loss passes eps
# there, then stays above it once both labels come in.
TASK = FunctionTask(num_bits=7, target="majority:all")
N, BATCH, EPOCHS, SEED = 128, 4, 12, 3
RECIPE = dataclasses.replace(GOTU, optimizer="adam", learning_rate=0.05, batch_size=BATCH,
                             epochs=EPOCHS, curriculum_leap=1, curriculum_eps=0.1)  # fmt: skip
RUN = Run.make("gotu", num_bits=TASK.num_bits, target=TASK.target, num_examples=N,
               test_examples=64, train_eval_examples=64, seed=SEED,
               **dataclasses.asdict(RECIPE))  # fmt: skip


# -- the stage rule ---------------------------------------------------------------------------


def _reference(weights, num_bits, leap, eps, batch, losses):
    """The rule as their main.py runs it, one epoch at a time: (stages as (r, first epoch,
    first step, end epoch, end step), steps trained, stopped by the rule)."""
    r = 0
    while r == 0 or not any(w <= r for w in weights):
        r += leap
    stages, step = [[r, 0, 0, 0, 0]], 0
    for epoch, loss in enumerate(losses):
        step += math.ceil(sum(1 for w in weights if w <= r) / batch)
        stages[-1][3:] = [epoch + 1, step]
        if loss < eps:
            if not r < num_bits:
                return [tuple(s) for s in stages], step, True
            r += leap
            stages.append([r, epoch + 1, step, epoch + 1, step])
    return [tuple(s) for s in stages], step, False


def _simulate(weights, num_bits, leap, eps, batch, losses):
    state = curriculum.start(np.array(weights), leap, eps, num_bits, batch)
    for loss in losses:
        if state["stopped"]:
            break
        state = curriculum.after_epoch(state, loss, np.array(weights))
    keys = ("radius", "first_epoch", "first_step", "end_epoch", "end_step")
    stages = [tuple(s[k] for k in keys) for s in state["stages"]]
    return stages, state["total_steps"], state["stopped"]


def test_the_stage_rule_is_their_rule_epoch_by_epoch():
    rng = random.Random(0)
    cases = [
        # no example of weight <= 2: r starts at 3 (leap 1), 4 (leap 2), 3 (leap 3)
        ([3, 5, 6, 3, 4], 6, 1), ([3, 5, 6, 3, 4], 6, 2), ([3, 5, 6], 6, 3),
        ([0, 1, 2, 7], 7, 7),  # l = d: their normal training
        ([0, 4, 4], 4, 9),  # leap past d
    ]  # fmt: skip
    for _ in range(200):
        d = rng.randint(1, 9)
        weights = [rng.randint(0, d) for _ in range(rng.randint(1, 12))]
        cases.append((weights, d, rng.randint(1, d + 1)))
    for weights, d, leap in cases:
        for _ in range(5):
            losses = [rng.choice([0.5, 2e-3, 1e-3, 5e-4, 0.0, math.nan])
                      for _ in range(rng.randint(0, 25))]  # fmt: skip
            batch = rng.randint(1, 3)
            want = _reference(weights, d, leap, 1e-3, batch, losses)
            assert _simulate(weights, d, leap, 1e-3, batch, losses) == want, (weights, leap)
    # The start and the stop, spelt out: r = 3 (no example of weight <= 2), then 5, 7 >= d.
    stages, steps, stopped = _simulate([3, 5, 6], 6, 2, 0.1, 1, [0.0, 1.0, 0.0, 0.0, 0.0])
    assert stages == [(4, 0, 0, 1, 1), (6, 1, 1, 3, 7)] and steps == 7 and stopped


def test_each_epoch_is_a_shuffle_of_its_ball_fixed_by_seed_and_epoch():
    weights = np.array([0, 3, 1, 2, 1, 5, 0, 2])
    order = curriculum.epoch_order(weights, 1, seed=4, epoch=2)
    assert sorted(order) == [0, 2, 4, 6]
    assert np.array_equal(order, curriculum.epoch_order(weights, 1, seed=4, epoch=2))
    orders = {tuple(curriculum.epoch_order(weights, 5, seed=4, epoch=e)) for e in range(6)}
    assert len(orders) > 1  # reshuffled from epoch to epoch


def test_finish_drops_a_last_stage_that_never_trained():
    state = curriculum.start(np.array([0, 1, 2]), 1, 0.5, 2, 1)
    state = curriculum.after_epoch(state, 0.1, np.array([0, 1, 2]))  # passes: r = 2 opens
    assert [s["radius"] for s in state["stages"]] == [1, 2]
    done = curriculum.finish(state)  # the budget ran out before r = 2 trained
    assert [s["radius"] for s in done["stages"]] == [1] and done["radius"] == 2
    assert curriculum.finish(curriculum.start(np.array([0]), 1, 0.5, 2, 1))["stages"]


# -- training ---------------------------------------------------------------------------------


class Batches:
    """The rows each training step consumed (a ``Tap``'s log), per epoch."""

    def __init__(self):
        self.epochs = []

    def record(self, x):
        self.epochs[-1].append(np.asarray(x).astype(np.int8))


class EpochMarks(keras.callbacks.Callback):
    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def on_epoch_begin(self, epoch, logs=None):
        self.batches.epochs.append([])


def _data():
    return train_data("gotu", TASK, N, test_examples=64, batch_size=BATCH, seed=SEED,
                      train_eval_examples=64, validation_examples=32)  # fmt: skip


def _model(batches, *fit_callbacks):
    """A small MLP on the bits, its training batches logged into ``batches``."""
    x = keras.Input((TASK.num_bits,))
    h = keras.layers.Dense(8, activation="relu")(Tap(batches, name="tap")(x))
    return WithCallbacks(x, keras.layers.Dense(1)(h), extra_callbacks=fit_callbacks)


def _train(out, batches, *fit_callbacks, run=RUN):
    return training.train(
        run, out, build_model=lambda: _model(batches, *fit_callbacks), data=_data(), verbose=0,
        keep_checkpoint=True, callbacks=[EpochMarks(batches)],
    )  # fmt: skip


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("curriculum") / "run"
    batches = Batches()
    return out, _train(out, batches), batches


def test_each_epoch_trains_on_the_examples_of_at_most_r_bits_minus_one(uninterrupted):
    _, record, batches = uninterrupted
    x, _ = _data().arrays()
    weights = curriculum.hamming_weights(x)
    stages = record["curriculum"]["stages"]
    assert len(batches.epochs) == record["epochs_completed"] == record["curriculum"]["epochs"]
    radii = [s["radius"] for s in stages for _ in range(s["end_epoch"] - s["first_epoch"])]
    assert len(radii) == len(batches.epochs)
    for epoch, (radius, seen) in enumerate(zip(radii, batches.epochs, strict=True)):
        seen = np.concatenate(seen)
        # Every example of the ball once, nothing else, in the epoch's own order.
        want = x[curriculum.epoch_order(weights, radius, SEED, epoch)]
        np.testing.assert_array_equal(seen, want)
        assert (curriculum.hamming_weights(seen) <= radius).all()
        assert len(seen) == (weights <= radius).sum() < len(x)
        assert len(batches.epochs[epoch]) == math.ceil(len(seen) / BATCH)


def test_the_record_holds_the_stages(uninterrupted):
    _, record, _ = uninterrupted
    state = record["curriculum"]
    stages = state["stages"]
    # This run's course (both backends): r = 1, 2, 3 pass (all labels +1), r = 4 holds until
    # the budget runs out.
    assert [s["radius"] for s in stages] == list(range(1, len(stages) + 1))
    assert len(stages) >= 3
    assert [s["passed"] for s in stages] == [True] * (len(stages) - 1) + [False]
    assert not state["stopped"] and record["status"] == "complete"
    assert state["radius"] == stages[-1]["radius"]
    x, _ = _data().arrays()
    weights = curriculum.hamming_weights(x)
    assert [s["examples"] for s in stages] == [(weights <= s["radius"]).sum() for s in stages]
    assert stages[0]["first_epoch"] == stages[0]["first_step"] == 0
    losses = record["history"]["train_loss"]
    for before, after in zip(stages[:-1], stages[1:], strict=True):
        assert (after["first_epoch"], after["first_step"]) == (before["end_epoch"],
                                                              before["end_step"])  # fmt: skip
        assert losses[before["end_epoch"] - 1] < RECIPE.curriculum_eps  # its last epoch passed
        assert all(v >= RECIPE.curriculum_eps for v in
                   losses[before["first_epoch"]:before["end_epoch"] - 1])  # fmt: skip
    for s in stages:
        epochs = s["end_epoch"] - s["first_epoch"]
        assert epochs >= 1 and s["end_step"] - s["first_step"] == epochs * s["steps_per_epoch"]
    assert stages[-1]["end_epoch"] == state["epochs"] == EPOCHS
    assert state["total_steps"] == stages[-1]["end_step"]


class Session(keras.callbacks.Callback):
    """What a run's callback sees of the training session; stops it after ``stop_after``
    epochs, as ``EarlyStopping`` would."""

    def __init__(self, stop_after=None):
        super().__init__()
        self.calls, self.stop_after = [], stop_after

    def on_train_begin(self, logs=None):
        self.calls.append(("begin", self.params["epochs"]))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch", epoch))
        if epoch + 1 == self.stop_after:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.calls.append(("end", self.params["epochs"]))


@pytest.mark.parametrize("leap, radii", [(2, [2, 4, 6, 8]), (7, [7])])  # 7 = d: normal training
def test_a_stage_below_eps_at_r_at_least_d_stops_training(tmp_path, leap, radii):
    """eps above every loss: each epoch passes, r = l, 2l, ... up to >= d, and there it
    stops. The run's callbacks see one session of the budget's epochs."""
    run = RUN.replace(curriculum_leap=leap, curriculum_eps=1e6, epochs=8)
    batches, session = Batches(), Session()
    record = training.train(
        run, tmp_path / "run", build_model=lambda: _model(batches), data=_data(), verbose=0,
        callbacks=[EpochMarks(batches), session],
    )  # fmt: skip
    state = record["curriculum"]
    assert [s["radius"] for s in state["stages"]] == radii
    assert state["stopped"] and record["status"] == "complete"
    epochs = len(radii)
    assert record["epochs_completed"] == state["epochs"] == epochs == len(batches.epochs)
    assert len(np.concatenate(batches.epochs[-1])) == N  # the last: every example
    assert session.calls == [("begin", 8), *(("epoch", e) for e in range(epochs)), ("end", 8)]


def test_a_callback_that_stops_training_stops_it(tmp_path):
    run = RUN.replace(curriculum_eps=1e-9, epochs=6)
    batches, session = Batches(), Session(stop_after=2)
    record = training.train(
        run, tmp_path / "run", build_model=lambda: _model(batches), data=_data(), verbose=0,
        callbacks=[EpochMarks(batches), session],
    )  # fmt: skip
    assert record["epochs_completed"] == 2 == record["curriculum"]["epochs"]
    assert not record["curriculum"]["stopped"] and record["status"] == "complete"
    assert session.calls[-1] == ("end", 6)


def test_a_run_interrupted_mid_stage_resumes_to_the_same_bits(uninterrupted, tmp_path):
    full_dir, full, _ = uninterrupted
    # Inside a stage after its first epoch, past a raise of r: a later stage's second epoch.
    stage = next(s for s in full["curriculum"]["stages"][1:]
                 if s["end_epoch"] - s["first_epoch"] >= 2)  # fmt: skip
    kill = (stage["first_epoch"] + 1, 1)
    out = tmp_path / "run"
    with pytest.raises(Interrupted):
        _train(out, Batches(), Progress(kill))
    killed = read_record(out)
    assert killed["status"] == "running" and killed["epochs_completed"] == kill[0]
    assert killed["curriculum"]["radius"] == stage["radius"]

    batches = Batches()
    resumed = _train(out, batches)
    assert resumed["resumed"] == 1 and resumed["status"] == "complete"
    assert len(batches.epochs) == EPOCHS - kill[0]  # from the stage's interrupted epoch on
    assert resumed["curriculum"] == full["curriculum"]
    for column, values in full["history"].items():
        if column not in records.TIMING_COLUMNS:
            assert resumed["history"][column] == values, column
    got, want = checkpoint_arrays(out), checkpoint_arrays(full_dir)
    assert sorted(got) == sorted(want)
    for name in want:  # weights and optimizer variables
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


# -- what it refuses --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"curriculum_leap": -1}, "curriculum_leap must be 0 .off: normal training. or"),
        ({"curriculum_leap": 1.5}, "an integer >= 1; received 1.5"),
        ({"curriculum_leap": True}, "curriculum_leap must be"),
        ({"curriculum_eps": 0.0}, "curriculum_eps must be a finite number > 0"),
        ({"curriculum_eps": -1e-3}, "curriculum_eps must be a finite number > 0"),
        ({"curriculum_eps": math.inf}, "curriculum_eps must be a finite number > 0"),
        ({"curriculum_leap": 2, "schedule": "cosine"}, "schedule='constant'"),
        ({"curriculum_leap": 2, "warmup_epochs": 1}, "warmup_epochs=0"),
    ],
)
def test_bad_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(GOTU, **fields)
    with pytest.raises(ValueError, match=message):
        Run.make("gotu", **fields)


def test_off_by_default_and_in_the_identity_only_when_set():
    assert TrainRecipe().curriculum_leap == 0
    normal = dataclasses.replace(GOTU, min_steps=100)  # 64 examples: 1 step an epoch
    assert normal.num_epochs(64) == 100  # min_steps applies
    assert dataclasses.replace(normal, curriculum_leap=3).num_epochs(64) == GOTU.epochs == 50
    # Ids computed before the curriculum fields existed.
    assert Run.make("boolean").run_id == "boolean-bits_mlp-p3-w1-parity-cyclic-n1900-s0-2bf3b70e42"
    assert Run.make("gotu").run_id == "gotu-bits_mlp-d15-x0x1-n24576-s0-8f21772311"
    assert Run.make("token").run_id == "mlp-w1-mod_sum-n10000-s0-04c46e8976"
    for run in (Run.make("boolean"), Run.make("gotu"), Run.make("token")):
        assert not {"curriculum_leap", "curriculum_eps"} & set(run.to_dict())
    on = Run.make("gotu", curriculum_leap=4, curriculum_eps=1)
    assert on.to_dict()["curriculum_leap"] == 4 and on.to_dict()["curriculum_eps"] == 1.0
    assert on.run_id != Run.make("gotu").run_id
    assert on.run_id == Run.make("gotu", curriculum_leap=4, curriculum_eps=1.0).run_id


def test_kinds_of_other_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="the token kind's inputs are token inputs"):
        Run.make("token", curriculum_leap=1, schedule="constant", warmup_epochs=0)
    with pytest.raises(ValueError, match="the block kind's inputs are image inputs"):
        Run.make("block", curriculum_leap=1, schedule="constant", warmup_epochs=0)
    # train() itself: streams without arrays of bits, and arrays that are not bits.
    streams = train_data("token", TokenTask(window=2), 64, test_examples=32, batch_size=BATCH)
    with pytest.raises(ValueError, match="these streams have no arrays of bits"):
        loop._check_curriculum(streams, types.SimpleNamespace(num_replicas=1))
    with pytest.raises(ValueError, match="the token kind's training inputs are of shape"):
        curriculum.check_bits(np.array([[0, 3, 9]]), "token")
    assert curriculum.check_bits(np.array([[1, -1]], np.int8)).shape == (1, 2)


def test_several_devices_are_refused():
    with pytest.raises(ValueError, match="trains on one device; this run has 2 replicas"):
        loop._check_curriculum(_data(), types.SimpleNamespace(num_replicas=2))


def test_non_bit_streams_are_refused_before_training(tmp_path):
    streams = train_data("token", TokenTask(window=2), 64, test_examples=32, batch_size=BATCH)
    with pytest.raises(ValueError, match="these streams have no arrays of bits"):
        training.train(RUN, tmp_path / "run", build_model=lambda: None, data=streams)
    assert not (tmp_path / "run").exists()


def test_the_first_radius_skips_empty_balls_and_refuses_a_leap_below_one():
    from pvr_keras.training import curriculum as rule

    assert rule.first_radius([5, 7, 9], 2) == 6
    assert rule.first_radius([0, 9], 4) == 4
    for leap in (0, -2, 1.5):
        with pytest.raises(ValueError, match="leap must be an integer >= 1"):
            rule.first_radius([5, 7], leap)
