"""A keras-tuner HyperModel over a run (any kind, any model), with the paper's search space.

Appendix A: "a small scale hyperparameter sweep on different optimizers (SGD, Adam, Adagrad,
LAMB), learning rates (1e-3 ~ 4e-1) and batch sizes (128, 256, 512, 1024, 2048, 4096)". A
trial is the search's run with the trial's values, ``run.replace(model=..., optimizer=...,
learning_rate=..., batch_size=...)``, built, compiled and fed as ``training.run`` does it
(``training.compiling.compile_model``: the loss and metric of its kind, MSE for a Boolean
search; ``training.inputs``: its streams). The model knobs and the optimizer are chosen in
``build(hp)``; the batch size is declared up front and the epochs come in ``fit(hp, model,
...)``, as keras-tuner's docs do it.
"""

import dataclasses

import keras
import keras_tuner

from pvr_keras import compat, kinds, models, registry
from pvr_keras.hyperparams import OPTIMIZERS  # noqa: F401  (exported)
from pvr_keras.runconfig import Run
from pvr_keras.training.compiling import compile_model, resolve_steps_per_execution
from pvr_keras.training.inputs import run_data
from pvr_keras.training.optimizers import make_optimizer  # noqa: F401  (exported)

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


def _positive(label, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{label} must be a positive integer; received {value!r}")
    return value


class PVRHyperModel(keras_tuner.HyperModel):
    """Searches the paper's optimizer, learning rate and batch size (and the model) for a
    run of any kind.

    Each trial is ``run.replace(model=..., model_kwargs=model_kwargs.get(model, ...),
    optimizer=..., learning_rate=..., batch_size=...)`` with no minimum of steps (a trial
    trains its epochs), seeded, built and compiled as ``training.run`` does (the kind's loss
    and metric, the run's schedule), trained on the run's training stream and scored by
    ``val_accuracy`` on the run's validation set (``training.inputs``: ``val_examples``
    training-distribution examples drawn with seed ``seed + 1``, never the test set).

    Args:
        run: the search's ``runconfig.Run`` (its kind, task, sizes, seed, holdout, epochs,
            warm-up and schedule); or, as before runs, a task, with ``num_examples``,
            ``kind``, ``epochs`` (default 10), ``warmup_epochs`` (default 1), ``seed``,
            ``holdout`` and ``data_dir`` making the run (the kind's defaults otherwise).
        val_examples: validation-set size.
        models: models to choose from: names (``registry.model_names(...)``) or builder
            references (default: the run's model).
        model_kwargs: ``{name: kwargs}`` of each model's builder (e.g. smaller widths).
        optimizers: optimizers to choose from (``OPTIMIZERS``).
        learning_rates: (low, high) of the log-uniform learning rate.
        batch_sizes: batch sizes to choose from.
        num_examples, epochs, warmup_epochs, seed, holdout, data_dir: replace the run's.

    Example:
        >>> hypermodel = PVRHyperModel(Run.make("boolean", epochs=20))
        >>> tuner = make_tuner("random", hypermodel, max_trials=20, directory="runs/tune")
        >>> tuner.search()
    """

    def __init__(
        self,
        run,
        num_examples=None,
        *,
        val_examples=10_000,
        models=None,
        model_kwargs=None,
        epochs=None,
        warmup_epochs=None,
        optimizers=OPTIMIZERS,
        learning_rates=LEARNING_RATES,
        batch_sizes=BATCH_SIZES,
        seed=None,
        holdout=None,
        kind=None,
        data_dir=None,
        name="token_pvr",
    ):
        super().__init__(name=name)
        if not isinstance(run, Run):  # a task, and the fields of its run
            run = _run_of_task(run, kind or "token", 10 if epochs is None else epochs,
                               warmup_epochs, num_examples)  # fmt: skip
        elif kind is not None and kinds.kind(kind).name != run.spec.name:
            raise ValueError(f"kind {kind!r} is not the run's kind, {run.spec.name!r}")
        given = {"num_examples": num_examples, "epochs": epochs, "warmup_epochs": warmup_epochs,
                 "seed": seed, "holdout": holdout, "data_dir": data_dir}  # fmt: skip
        run = run.replace(min_steps=0, **{k: v for k, v in given.items() if v is not None})
        self.models = (run.model,) if models is None else tuple(models)
        if not self.models:
            raise ValueError("models must name at least one model")
        for model in self.models:
            registry.check_model(model, run.spec.models)
        self.optimizers = _check_subset("optimizers", optimizers, OPTIMIZERS)
        self.batch_sizes = _check_subset("batch_sizes", batch_sizes, BATCH_SIZES)
        low, high = learning_rates
        if not 0 < low < high:
            raise ValueError(
                f"learning_rates must be (low, high), 0 < low < high; received {learning_rates!r}"
            )
        _positive("val_examples", val_examples)
        if not 0 <= run.warmup_epochs <= run.epochs:
            raise ValueError(
                f"warmup_epochs must be in [0, epochs={run.epochs}]; received {run.warmup_epochs!r}"
            )
        self.run = run
        self.kind = run.spec
        self.val_examples = val_examples
        self.model_kwargs = dict(model_kwargs or {})
        self.learning_rates = (float(low), float(high))

    # The search's run, by the names the hypermodel had before runs.
    task = property(lambda self: self.run.task)
    num_examples = property(lambda self: self.run.num_examples)
    epochs = property(lambda self: self.run.epochs)
    warmup_epochs = property(lambda self: self.run.warmup_epochs)
    seed = property(lambda self: self.run.seed)
    holdout = property(lambda self: self.run.holdout)

    def declare_hyperparameters(self, hp):
        # The batch size is used in fit; declared up front, the first trial samples it too
        # (otherwise keras-tuner only learns of it after that trial and uses its default).
        hp.Choice("batch_size", self.batch_sizes)

    def trial_run(self, hp):
        """The run a trial trains: the search's run with the trial's values."""
        name = hp.Choice("model", self.models)
        optimizer = hp.Choice("optimizer", self.optimizers)
        learning_rate = hp.Float("learning_rate", *self.learning_rates, sampling="log")
        batch_size = hp.Choice("batch_size", self.batch_sizes)
        own = self.run.model_kwargs if name == self.run.model else {}
        return self.run.replace(
            model=name, model_kwargs=dict(self.model_kwargs.get(name, own)),
            optimizer=optimizer, learning_rate=float(learning_rate), batch_size=int(batch_size),
        )  # fmt: skip

    def build(self, hp):
        from pvr_keras.training.loop import _build

        trial = self.trial_run(hp)
        keras.utils.set_random_seed(trial.seed)
        arguments = trial.model_arguments()
        model = _build(lambda: models.get(trial.model, **arguments), trial.train.dtype_policy)
        steps = trial.train.steps_per_epoch(trial.num_examples)
        per_call = resolve_steps_per_execution(trial.system.steps_per_execution, steps)
        return compile_model(model, trial.train, trial.num_examples, trial.spec.metric, per_call)

    def fit(self, hp, model, *args, **kwargs):
        """Trains ``model`` on the trial's run's streams; ``epochs``/``initial_epoch`` in
        ``kwargs`` come from Hyperband, other ``kwargs`` (callbacks, verbose) go to ``fit``.

        The schedule (made in ``build``) spans the run's epochs, so a Hyperband round that
        stops early has seen the first part of the same schedule."""
        trial = self.trial_run(hp)
        epochs = kwargs.pop("epochs", trial.epochs)
        initial_epoch = kwargs.pop("initial_epoch", 0)
        steps = trial.train.steps_per_epoch(trial.num_examples)
        model.optimizer.iterations.assign(steps * initial_epoch)
        data = run_data(trial, validation_examples=self.val_examples)
        kwargs.setdefault("shuffle", False)  # the stream reshuffles itself each epoch
        return model.fit(
            data.make_train(initial_epoch),
            steps_per_epoch=steps,
            epochs=epochs,
            initial_epoch=initial_epoch,
            validation_data=data.validation,
            **kwargs,
        )


def _run_of_task(task, kind, epochs, warmup_epochs, num_examples):
    """A run of ``task``: the kind's defaults, the task, and a tuning trial's length."""
    spec = kinds.kind(kind)
    if not isinstance(task, spec.task):
        raise ValueError(
            f"task must be a {spec.task.__name__} (the {spec.name} kind's); "
            f"received {type(task).__name__}"
        )
    _positive("num_examples", num_examples)
    _positive("epochs", epochs)
    run = dataclasses.replace(Run.make(kind), task=task)
    return run.replace(epochs=epochs, warmup_epochs=1 if warmup_epochs is None else warmup_epochs)


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
