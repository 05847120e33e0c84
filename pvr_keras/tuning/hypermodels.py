"""A keras-tuner HyperModel over the library's builders (and yours), with the paper's search
space.

Appendix A: "a small scale hyperparameter sweep on different optimizers (SGD, Adam, Adagrad,
LAMB), learning rates (1e-3 ~ 4e-1) and batch sizes (128, 256, 512, 1024, 2048, 4096)". The
model knobs and the optimizer are chosen in ``build(hp)``; the batch size and the number of
epochs in ``fit(hp, model, ...)``, as keras-tuner's docs do it.
"""

import math

import keras
import keras_tuner

from pvr_keras import compat, engines, kinds, models, registry
from pvr_keras.training.recipe import OPTIMIZERS, make_optimizer
from pvr_keras.training.schedules import WarmupCosine

LEARNING_RATES = (1e-3, 4e-1)
BATCH_SIZES = (128, 256, 512, 1024, 2048, 4096)
TUNERS = ("random", "hyperband", "bayesian")
OBJECTIVE = "val_accuracy"


def _check_subset(name, values, allowed):
    values = tuple(values)
    bad = [v for v in values if v not in allowed]
    if not values or bad:
        raise ValueError(
            f"{name} must be a non-empty selection of {', '.join(map(str, allowed))}; "
            f"received {values!r}"
        )
    return values


class PVRHyperModel(keras_tuner.HyperModel):
    """Searches the paper's optimizer, learning rate and batch size (and the model) for a PVR
    task of any kind (token by default).

    Each trial builds ``models.get(model, **model_kwargs[model])`` for the task (a
    registered name or a builder reference), trains it on
    the first ``num_examples`` training examples with a linear warm-up then cosine schedule
    over ``epochs`` (the paper's recipe shape, weight decay 1e-5, SGD momentum 0.9) and
    reports ``val_accuracy`` on ``val_examples`` examples of the test split drawn with seed
    ``seed + 1`` (independent of the test set a final run reports with ``seed``).

    Args:
        task: the task (of ``kind``).
        num_examples: training-set size.
        val_examples: validation-set size.
        models: models to choose from: names (``registry.model_names(...)``) or builder
            references.
        model_kwargs: ``{name: kwargs}`` passed to the builder (e.g. smaller widths).
        epochs: epochs per trial (Hyperband's ``max_epochs``).
        warmup_epochs: linear warm-up epochs.
        optimizers: optimizers to choose from (``OPTIMIZERS``).
        learning_rates: (low, high) of the log-uniform learning rate.
        batch_sizes: batch sizes to choose from.
        seed: seeds the data and each trial's initial weights.
        holdout: holdout-k of the training/validation data (Section 6.2).
        kind: the task kind (``kinds.kind_names()`` or a reference).
        data_dir: TFDS data dir of image kinds.

    Example:
        >>> hypermodel = PVRHyperModel(TokenTask(), 50_000)
        >>> tuner = make_tuner("random", hypermodel, max_trials=20, directory="runs/tune")
        >>> tuner.search()
    """

    def __init__(
        self,
        task,
        num_examples,
        *,
        val_examples=10_000,
        models=("mlp",),
        model_kwargs=None,
        epochs=10,
        warmup_epochs=1,
        optimizers=OPTIMIZERS,
        learning_rates=LEARNING_RATES,
        batch_sizes=BATCH_SIZES,
        seed=0,
        holdout=0,
        kind="token",
        data_dir=None,
        name="token_pvr",
    ):
        super().__init__(name=name)
        self.kind = kinds.kind(kind)
        if not isinstance(task, self.kind.task):
            raise ValueError(
                f"task must be a {self.kind.task.__name__} (the {self.kind.name} kind's); "
                f"received {type(task).__name__}"
            )
        self.models = tuple(models)
        if not self.models:
            raise ValueError("models must name at least one model")
        for model in self.models:
            registry.check_model(model, self.kind.models)
        self.optimizers = _check_subset("optimizers", optimizers, OPTIMIZERS)
        self.batch_sizes = _check_subset("batch_sizes", batch_sizes, BATCH_SIZES)
        low, high = learning_rates
        if not 0 < low < high:
            raise ValueError(
                f"learning_rates must be (low, high), 0 < low < high; received {learning_rates!r}"
            )
        for label, value in (
            ("num_examples", num_examples),
            ("val_examples", val_examples),
            ("epochs", epochs),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer; received {value!r}")
        if not 0 <= warmup_epochs <= epochs:
            raise ValueError(
                f"warmup_epochs must be in [0, epochs={epochs}]; received {warmup_epochs!r}"
            )
        holdout = self.kind.check(task, holdout)
        self.task = task
        self.data_dir = data_dir
        self.num_examples = num_examples
        self.val_examples = val_examples
        self.model_kwargs = dict(model_kwargs or {})
        self.epochs = epochs
        self.warmup_epochs = warmup_epochs
        self.learning_rates = (float(low), float(high))
        self.seed = seed
        self.holdout = holdout

    def declare_hyperparameters(self, hp):
        # The batch size is used in fit; declared up front, the first trial samples it too
        # (otherwise keras-tuner only learns of it after that trial and uses its default).
        hp.Choice("batch_size", self.batch_sizes)

    def build(self, hp):
        name = hp.Choice("model", self.models)
        optimizer = hp.Choice("optimizer", self.optimizers)
        learning_rate = hp.Float("learning_rate", *self.learning_rates, sampling="log")
        keras.utils.set_random_seed(self.seed)
        model = models.get(
            name, **self.kind.model_arguments(self.task), **self.model_kwargs.get(name, {})
        )
        model.compile(
            optimizer=make_optimizer(optimizer, learning_rate),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            weighted_metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        )
        jit = engines.jit_compile(model)  # the engine's measured-fastest XLA setting
        if jit is not None:
            model.jit_compile = jit
        return model

    def fit(self, hp, model, *args, **kwargs):
        """Trains ``model`` with the trial's batch size; ``epochs``/``initial_epoch`` in
        ``kwargs`` come from Hyperband, other ``kwargs`` (callbacks, verbose) go to ``fit``."""
        batch_size = hp.Choice("batch_size", self.batch_sizes)
        epochs = kwargs.pop("epochs", self.epochs)
        initial_epoch = kwargs.pop("initial_epoch", 0)
        steps = math.ceil(self.num_examples / batch_size)
        # The schedule spans the full budget, so a Hyperband round that stops early has seen
        # the first part of the same schedule; its length needs the batch size, known here.
        total = steps * self.epochs
        model.optimizer.learning_rate = WarmupCosine(
            hp.get("learning_rate"), min(steps * self.warmup_epochs, total), total
        )
        model.optimizer.iterations.assign(steps * initial_epoch)
        stream = self.kind.stream("tfdata")
        extra = {"data_dir": self.data_dir} if self.kind.images else {}
        train = stream(
            self.task, self.num_examples, split="train", seed=self.seed, holdout=self.holdout,
            batch_size=batch_size, epochs=None, first_epoch=initial_epoch, **extra,
        )  # fmt: skip
        val = stream(
            self.task, self.val_examples, split="test", seed=self.seed + 1,
            holdout=self.holdout, batch_size=self.kind.eval_batch_size, shuffle=False, **extra,
        )  # fmt: skip
        return model.fit(
            train,
            steps_per_epoch=steps,
            epochs=epochs,
            initial_epoch=initial_epoch,
            validation_data=val,
            **kwargs,
        )


# keras-tuner's tuners, without its unconditional tensorboard import (pvr_keras.compat).
RandomSearch = compat.tensorboard_only_if_used(keras_tuner.RandomSearch)
Hyperband = compat.tensorboard_only_if_used(keras_tuner.Hyperband)
BayesianOptimization = compat.tensorboard_only_if_used(keras_tuner.BayesianOptimization)


def make_tuner(
    kind,
    hypermodel,
    *,
    directory,
    project_name="token_pvr",
    max_trials=20,
    seed=0,
    overwrite=False,
    **kwargs,
):
    """A keras-tuner tuner maximising ``val_accuracy``, resumable by default.

    Args:
        kind: ``random`` (RandomSearch), ``hyperband`` (Hyperband, ``max_epochs`` =
            ``hypermodel.epochs``) or ``bayesian`` (BayesianOptimization).
        hypermodel: a ``PVRHyperModel``.
        directory, project_name: where the search state lives; the same pair resumes it
            (``overwrite=False``): finished trials are kept, the unfinished one reruns.
        max_trials: trials for random and bayesian search (Hyperband sizes itself).
        seed: seeds the search.
        **kwargs: passed to the tuner (e.g. ``executions_per_trial``).
    """
    common = {
        "objective": keras_tuner.Objective(OBJECTIVE, "max"),
        "seed": seed + 1,  # keras-tuner reads seed 0 as "no seed" and draws a random one
        "directory": str(directory),
        "project_name": project_name,
        "overwrite": overwrite,
        **kwargs,
    }
    if kind == "random":
        return RandomSearch(hypermodel, max_trials=max_trials, **common)
    if kind == "bayesian":
        return BayesianOptimization(hypermodel, max_trials=max_trials, **common)
    if kind == "hyperband":
        return Hyperband(hypermodel, max_epochs=hypermodel.epochs, **common)
    raise ValueError(f"tuner must be one of {', '.join(TUNERS)}; received {kind!r}")
