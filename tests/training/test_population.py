"""Populations (``training.population``): runs of one architecture trained as one JAX program,
each member the run it would be alone.

Tolerance (CPU float32): a member's per-epoch training losses agree with its run alone within
1e-4 relative over the first 100 steps (the stacked kernels round differently from a lone
run's); evaluations of equal weights agree exactly; final accuracy within 0.2 points. A
population killed and resumed is bit-identical to one that was not killed.
"""

import json

import keras
import numpy as np
import pytest

from pvr_keras.errors import ConfigError
from pvr_keras.runconfig import Run, System
from pvr_keras.training import population, read_record, runs

BACKEND = keras.backend.backend()
jax_only = pytest.mark.skipif(BACKEND != "jax", reason="a population trains on JAX")

# 100 steps: 4 epochs of 25 batches of 64.
BASE = {"num_examples": 1600, "epochs": 4, "min_steps": 0, "batch_size": 64,
        "warmup_epochs": 1, "test_examples": 500, "train_eval_examples": 500}  # fmt: skip
KINDS = {
    "token": {**BASE, "model": "mlp", "model_kwargs": {"widths": (32, 32), "embed_dim": 8}},
    "boolean": {**BASE, "model_kwargs": {"widths": (32, 32)}},
    "gotu": {**BASE, "num_bits": 8, "model_kwargs": {"widths": (32, 32)}},
}
TIMING = ("epoch_seconds", "train_seconds", "eval_seconds")


def _grid(kind, rates=(0.05, 0.02), **more):
    base = {**KINDS[kind], **more}
    return [Run.make(kind, seed=seed, learning_rate=rate, **base) for seed, rate in
            enumerate(rates)]  # fmt: skip


def _alone(tmp_path, grid):
    return [runs.run(run, tmp_path / "alone" / run.run_id) for run in grid]


def _together(tmp_path, grid, folder="population", **kwargs):
    pairs = [(run, tmp_path / folder / run.run_id) for run in grid]
    return population.run_population(pairs, log=lambda line: None, **kwargs)


def _weights(folder):
    model = keras.saving.load_model(folder / "model.keras", safe_mode=True, compile=False)
    return [np.asarray(w) for w in model.get_weights()]


@pytest.fixture(scope="module")
def token_runs(tmp_path_factory):
    """(folder, grid, records alone, records as one population) of the token grid: the runs
    the token tests hold their populations against (trained once)."""
    folder = tmp_path_factory.mktemp("token")
    grid = _grid("token")
    return folder, grid, _alone(folder, grid), _together(folder, grid)


@jax_only
@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_members_train_as_they_would_alone(tmp_path, kind, request):
    if kind == "token":
        tmp_path, grid, alone, together = request.getfixturevalue("token_runs")
    else:
        grid = _grid(kind)
        alone, together = _alone(tmp_path, grid), _together(tmp_path, grid)
    for run, lone, member, index in zip(grid, alone, together, range(2), strict=True):
        assert member["config"] == lone["config"] == run.to_dict()
        assert member["population"] == {"size": 2, "member": index, "engine": "jax.vmap"}
        assert "population" not in lone
        assert member["starts"][-1]["population"] == 2
        assert (tmp_path / "population" / run.run_id / "record.json").exists()
        a, b = lone["history"], member["history"]
        np.testing.assert_allclose(b["train_loss"], a["train_loss"], rtol=1e-4)
        np.testing.assert_allclose(b["learning_rate"], a["learning_rate"], rtol=1e-6)
        assert abs(member["final"]["test_accuracy"] - lone["final"]["test_accuracy"]) <= 0.002
    # The members learned different functions (their own seed and learning rate).
    assert together[0]["history"]["train_loss"] != together[1]["history"]["train_loss"]


@jax_only
def test_members_start_from_their_own_weights_and_batches(tmp_path):
    # Learning rate 1e-30: every weight moves by less than 1e-20 (a bias starting at 0 by
    # ~1e-30), so a member's final weights are its initial ones, and its losses those of its
    # own batches. Another seed's weights differ by ~0.1.
    grid = _grid("token", rates=(1e-30, 1e-30), epochs=2, weight_decay=0.0)
    grid = [grid[0], grid[1].replace(window=2)]
    alone, together = _alone(tmp_path, grid), _together(tmp_path, grid)
    for run, lone, member in zip(grid, alone, together, strict=True):
        for a, b in zip(_weights(tmp_path / "alone" / run.run_id),
                        _weights(tmp_path / "population" / run.run_id), strict=True):  # fmt: skip
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-20)
        assert member["final"] == lone["final"]
        np.testing.assert_allclose(member["history"]["train_loss"], lone["history"]["train_loss"],
                                   rtol=1e-6)  # fmt: skip
    # Its steps are the population's: one training time for both; its evaluations its own.
    first, second = (member["history"] for member in together)
    assert first["train_seconds"] == second["train_seconds"]
    for history in (first, second):
        for train, evaluate, epoch in zip(history["train_seconds"], history["eval_seconds"],
                                          history["epoch_seconds"], strict=True):  # fmt: skip
            assert train > 0 and evaluate > 0 and epoch == pytest.approx(train + evaluate)


@jax_only
def test_a_nan_spoils_no_other_member_and_each_ends_on_its_own_epochs(tmp_path, token_runs):
    _, (good, other), (lone, _), _ = token_runs  # good: 4 epochs, alone in token_runs
    bad = good.replace(seed=2, learning_rate=1e30)  # its loss becomes NaN at once
    short = other.replace(epochs=1)
    grid = [bad, good, short]
    together = _together(tmp_path, grid)
    assert together[0]["status"] == "nan" and together[0]["failed"]
    assert together[0]["epochs_completed"] == 1  # stopped at the end of its first epoch
    assert together[2]["epochs_completed"] == 1 and together[2]["status"] == "complete"
    assert together[1]["epochs_completed"] == 4
    np.testing.assert_allclose(together[1]["history"]["train_loss"],
                               lone["history"]["train_loss"], rtol=1e-4)  # fmt: skip
    assert np.isfinite(together[1]["history"]["train_loss"]).all()


class _Kill(keras.callbacks.Callback):
    """Stands for a kill: raises at the end of ``epoch`` (after the run's checkpoint)."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.epoch:
            raise KeyboardInterrupt


def _history(record):
    return {k: v for k, v in record["history"].items() if k not in TIMING}


@jax_only
def test_a_killed_population_resumes_bit_identically(tmp_path, token_runs):
    folder, grid, _, whole = token_runs  # whole: trained as one population, never killed
    # Killed after member 0's second epoch was checkpointed, before member 1's was: the
    # members resume from different epochs.
    first = grid[0].run_id
    with pytest.raises(KeyboardInterrupt):
        _together(tmp_path, grid, folder="killed",
                  callbacks=lambda run: [_Kill(2)] if run.run_id == first else [])  # fmt: skip
    assert read_record(tmp_path / "killed" / first)["epochs_completed"] == 2
    assert read_record(tmp_path / "killed" / grid[1].run_id)[
        "epochs_completed"] == 1  # fmt: skip
    resumed = _together(tmp_path, grid, folder="killed")
    for run, a, b in zip(grid, whole, resumed, strict=True):
        assert b["resumed"] == 1 and b["status"] == "complete"
        assert _history(a) == _history(b)
        assert a["final"] == b["final"]
        for x, y in zip(_weights(folder / "population" / run.run_id),
                        _weights(tmp_path / "killed" / run.run_id), strict=True):  # fmt: skip
            np.testing.assert_array_equal(x, y)


@jax_only
def test_finished_runs_are_skipped_and_a_curriculum_run_trains_alone(tmp_path, capsys):
    done, todo = _grid("gotu", epochs=1)
    (before,) = _together(tmp_path, [done])
    curriculum = todo.replace(seed=5, curriculum_leap=4, curriculum_eps=1.0,
                              schedule="constant", warmup_epochs=0)  # fmt: skip
    lines = []
    pairs = [(run, tmp_path / "population" / run.run_id) for run in (done, todo, curriculum)]
    after = population.run_population(pairs, log=lines.append)
    assert after[0] == before  # not trained again
    assert after[1]["population"]["size"] == 1  # the one run left to train
    assert "population" not in after[2] and "curriculum" in after[2]
    assert any("Degree-Curriculum" in line and "trains alone" in line for line in lines)


def test_groups_split_runs_of_other_shapes_in_grid_order():
    a = [Run.make("token", seed=s, num_examples=1000) for s in range(3)]
    b = [Run.make("token", seed=s, num_examples=2000) for s in range(2)]
    c = [Run.make("token", seed=0, num_examples=1000, model="mixer")]
    d = [Run.make("token", seed=9, num_examples=1000, window=3, learning_rate=0.1)]
    grid = [a[0], b[0], c[0], a[1], b[1], a[2], d[0]]
    found = population.groups(grid, 2)
    assert found == [[a[0], a[1]], [b[0], b[1]], [c[0]], [a[2], d[0]]]
    assert population.groups(grid, 8)[0] == [*a, *d]
    for size in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="positive integer"):
            population.groups(grid, size)


def test_a_population_too_large_for_memory_is_refused_in_one_line():
    run = Run.make("token", model="mixer")
    need = population.check_fits(run, 1, free=10**12)
    # Parameters, gradients, updates and two slots of 4 bytes; activations of 1024 examples.
    assert 8_495_674 * 4 * 5 < need < 10**11
    with pytest.raises(ConfigError) as error:
        population.check_fits(run, 64, free=20 * need)
    message = str(error.value)
    assert "\n" not in message and "population of 64 mixer runs" in message
    assert "--population 16 or less" in message


def test_a_population_needs_jax():
    with pytest.raises(ValueError, match="trains on JAX"):
        System(backend="tensorflow", population=2)
    with pytest.raises(ValueError, match="population must be"):
        System(population=0)


@pytest.mark.skipif(BACKEND == "jax", reason="the refusal of another backend")
def test_population_on_tensorflow_says_what_to_do(tmp_path):
    grid = _grid("token", epochs=1)
    with pytest.raises(ConfigError, match="trains on the JAX backend"):
        _together(tmp_path, grid)
    assert not (tmp_path / "population").exists()


def test_the_population_flag_is_no_part_of_a_run_identity():
    run = Run.make("token")
    assert run.replace(population=8).run_id == run.run_id
    assert json.loads(json.dumps(run.replace(population=8).to_dict())) == run.to_dict()
