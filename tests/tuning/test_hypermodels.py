import math

import keras
import keras_tuner
import numpy as np
import pytest

from pvr_keras import tuning
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training.schedules import WarmupCosine

TINY = {"mlp": {"widths": (8,), "embed_dim": 2}}


def tiny(**kwargs):
    args = {"val_examples": 128, "model_kwargs": TINY, "epochs": 1, "warmup_epochs": 0}
    return tuning.PVRHyperModel(TokenTask(window=2), 300, **{**args, **kwargs})


def hp_with(**values):
    hp = keras_tuner.HyperParameters()
    for name, value in values.items():
        hp.Fixed(name, value)
    return hp


@pytest.mark.parametrize(
    "name, cls", [("sgd", "SGD"), ("adam", "Adam"), ("adagrad", "Adagrad"), ("lamb", "Lamb")]
)
def test_the_papers_optimizers(name, cls):
    optimizer = tuning.make_optimizer(name, 0.01)
    assert type(optimizer).__name__ == cls
    assert float(keras.ops.convert_to_numpy(optimizer.learning_rate)) == pytest.approx(0.01)
    assert optimizer.weight_decay == pytest.approx(1e-5)
    if name == "sgd":
        assert optimizer.momentum == pytest.approx(0.9)


def test_bad_optimizer():
    with pytest.raises(ValueError, match="optimizer must be one of sgd, adam, adagrad, lamb"):
        tuning.make_optimizer("rmsprop", 0.01)


def test_search_space_is_appendix_a():
    hypermodel = tiny(models=("mlp", "mixer"))
    hp = keras_tuner.HyperParameters()
    hypermodel.declare_hyperparameters(hp)
    hypermodel.build(hp)
    space = {p.name: p for p in hp.space}
    assert set(space) == {"model", "optimizer", "learning_rate", "batch_size"}
    assert list(space["optimizer"].values) == ["sgd", "adam", "adagrad", "lamb"]
    assert list(space["batch_size"].values) == [128, 256, 512, 1024, 2048, 4096]
    assert list(space["model"].values) == ["mlp", "mixer"]
    rate = space["learning_rate"]
    assert (rate.min_value, rate.max_value, rate.sampling) == (1e-3, 0.4, "log")
    # Log-uniform: half the draws fall below the geometric midpoint (linear sampling: ~5%).
    draws = np.array([rate.random_sample(seed) for seed in range(4000)])
    assert draws.min() >= 1e-3 and draws.max() <= 0.4
    assert np.mean(draws < math.sqrt(1e-3 * 0.4)) == pytest.approx(0.5, abs=0.03)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"models": ("resnet18",)},
            "model must be one of mlp, mlp2x, transformer, mixer .the "
            "token models. or a builder reference .*; received 'resnet18'",
        ),
        ({"models": ("nets.py:tiny",)}, "no such file 'nets.py'"),
        ({"models": ()}, "models must name at least one model"),
        ({"optimizers": ("sgd", "rmsprop")}, "optimizers must be a non-empty selection"),
        ({"batch_sizes": (100,)}, "batch_sizes must be a non-empty selection of 128"),
        ({"learning_rates": (0.1, 0.01)}, r"learning_rates must be \(low, high\)"),
        ({"learning_rates": (0.0, 0.1)}, r"learning_rates must be \(low, high\)"),
        ({"epochs": 0}, "epochs must be a positive integer"),
        ({"val_examples": 1.5}, "val_examples must be a positive integer"),
        ({"warmup_epochs": 2}, r"warmup_epochs must be in \[0, epochs=1\]"),
        ({"holdout": 5}, "holdout"),
    ],
)
def test_bad_hypermodel_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny(**kwargs)


def test_bad_task():
    with pytest.raises(ValueError, match="task must be a TokenTask"):
        tuning.PVRHyperModel("token", 100)


@pytest.mark.slow
def test_fit_uses_the_trials_batch_size_and_schedule():
    hypermodel = tiny(epochs=3, warmup_epochs=1)
    hp = hp_with(model="mlp", optimizer="sgd", learning_rate=0.05, batch_size=128)
    model = hypermodel.build(hp)
    assert model.count_params() == 20 + 22 * 8 + 8 + 8 * 10 + 10  # the tiny mlp asked for
    # A Hyperband round: epochs 2..3 of a 3-epoch schedule.
    history = hypermodel.fit(hp, model, epochs=3, initial_epoch=2, verbose=0)
    steps = math.ceil(300 / 128)
    assert history.epoch == [2]
    assert set(history.history) >= {"loss", "accuracy", "val_loss", "val_accuracy"}
    schedule = model.optimizer._learning_rate
    assert isinstance(schedule, WarmupCosine)
    assert (schedule.base_lr, schedule.warmup_steps, schedule.total_steps) == (0.05, 3, 9)
    # The round continued the schedule where the previous round left it.
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) == 3 * steps


@pytest.mark.parametrize(
    "kind, cls",
    [("random", "RandomSearch"), ("hyperband", "Hyperband"), ("bayesian", "BayesianOptimization")],
)
def test_make_tuner(tmp_path, kind, cls):
    tuner = tuning.make_tuner(kind, tiny(epochs=2), directory=tmp_path, max_trials=3)
    assert isinstance(tuner, getattr(keras_tuner, cls))
    assert tuner.oracle.objective.name == "val_accuracy"
    assert tuner.oracle.objective.direction == "max"
    if kind == "hyperband":
        assert tuner.oracle.max_epochs == 2


def test_search_is_reproducible(tmp_path):
    def first_values(folder):
        tuner = tuning.make_tuner("random", tiny(), directory=tmp_path / folder, seed=0)
        trial = tuner.oracle.create_trial("tuner0")
        return trial.hyperparameters.values

    assert first_values("a") == first_values("b")


def test_bad_tuner(tmp_path):
    with pytest.raises(ValueError, match="tuner must be one of random, hyperband, bayesian"):
        tuning.make_tuner("grid", tiny(), directory=tmp_path)


class Interrupted(tuning.PVRHyperModel):
    """Counts trials trained; with ``stop_at`` set, raises KeyboardInterrupt in that fit (as a
    kill would, it escapes keras-tuner's error handling and leaves the trial unfinished)."""

    fits = 0
    stop_at = None

    def fit(self, hp, model, *args, **kwargs):
        type(self).fits += 1
        if type(self).fits == self.stop_at:
            raise KeyboardInterrupt
        return super().fit(hp, model, *args, **kwargs)


@pytest.mark.slow
def test_search_resumes_interrupted_and_extended(tmp_path):
    def tuner(max_trials):
        hypermodel = Interrupted(
            TokenTask(window=2), 300, val_examples=128, model_kwargs=TINY, epochs=1, warmup_epochs=0
        )
        return tuning.make_tuner("random", hypermodel, directory=tmp_path, max_trials=max_trials)

    Interrupted.stop_at = 2
    with pytest.raises(KeyboardInterrupt):
        tuner(2).search(verbose=0)
    resumed = tuner(2)  # reloads: trial 0 complete, trial 1 unfinished
    assert {t.trial_id: t.status for t in resumed.oracle.trials.values()} == {
        "0": "COMPLETED",
        "1": "RUNNING",
    }
    values = resumed.oracle.trials["1"].hyperparameters.values
    Interrupted.fits, Interrupted.stop_at = 0, None
    resumed.search(verbose=0)
    trials = resumed.oracle.trials
    assert Interrupted.fits == 1  # only the unfinished trial, with its own values
    assert [trials[i].status for i in ("0", "1")] == ["COMPLETED"] * 2
    assert trials["1"].hyperparameters.values == values
    tuner(2).search(verbose=0)  # complete: nothing more to do
    assert Interrupted.fits == 1
    extended = tuner(3)
    extended.search(verbose=0)
    assert Interrupted.fits == 2 and len(extended.oracle.trials) == 3


def _compiled_loss(hypermodel, **values):
    model = hypermodel.build(
        hp_with(optimizer="adam", learning_rate=0.01, batch_size=128, **values)
    )
    return model, type(model.loss).__name__


def test_a_trial_is_the_search_run_with_the_trials_values():
    run = Run.make("token", window=2, num_examples=300, epochs=3, warmup_epochs=1, seed=4)
    hypermodel = tuning.PVRHyperModel(run, val_examples=64, model_kwargs=TINY)
    hp = hp_with(model="mlp", optimizer="adam", learning_rate=0.01, batch_size=256)
    trial = hypermodel.trial_run(hp)
    assert trial == run.replace(optimizer="adam", learning_rate=0.01, batch_size=256,
                                min_steps=0, model_kwargs=TINY["mlp"])  # fmt: skip


@pytest.mark.parametrize(
    "kind, loss, metric",
    [("token", "SparseCategoricalCrossentropy", "SparseCategoricalAccuracy"),
     ("boolean", "MeanSquaredError", "MeanMetricWrapper")],
)  # fmt: skip
def test_a_trial_is_compiled_with_the_loss_and_metric_of_its_kind(kind, loss, metric):
    """As ``training.run`` compiles it: a Boolean search trains the mean squared error."""
    hypermodel = tuning.PVRHyperModel(Run.make(kind, epochs=2, warmup_epochs=0), val_examples=64)
    model, found = _compiled_loss(hypermodel, model=hypermodel.models[0])
    assert found == loss
    assert [type(m).__name__ for m in model._compile_metrics._user_weighted_metrics] == [metric]


# A Boolean search's trial trained, its recorded validation loss (the mean squared error) and
# its score (accuracy) against the saved model: tests/recipes/test_tune.py, through the recipe.
