"""The fit-loop glue: train a model with a recipe, per-epoch records, resume after a kill.

Compiling lives in ``training.compiling`` (its names are also importable from here), what
happens at each epoch's end in ``training.epochs``.
"""

import contextlib
import dataclasses
import os
import pathlib
import shutil
import time
from collections.abc import Callable
from typing import Any

import keras

from pvr_keras import files
from pvr_keras.errors import DiskFull
from pvr_keras.figures.curves import learning_curve
from pvr_keras.training import curriculum, distribute, epochs, records
from pvr_keras.training.checkpoint import Checkpoint, needed_bytes
from pvr_keras.training.compiling import (  # noqa: F401  (importable from here, as before)
    STEPS_PER_EXECUTION,
    compile_model,
    resolve_steps_per_execution,
    within_half,
)


@dataclasses.dataclass
class _Options:
    """What ``train`` was asked for, beside the model, the data and the folder."""

    recipe: Any
    config: dict
    seed: int
    verbose: Any
    keep_checkpoint: bool
    title: str
    save_model: bool
    callbacks: list
    extra: dict
    steps_per_execution: int = 1
    run_id: str | None = None  # what the checkpoint is saved as (a checkpoint of another
    # run left in the folder is refused)


class _Run:
    def __init__(self, out_dir, data, options):
        self.out_dir = pathlib.Path(out_dir)
        self.data = data
        self.options = options
        self.checkpoint = Checkpoint(self.out_dir / "checkpoint", options.run_id)
        self.saw_nan = False
        self.t_start = time.perf_counter()
        self.wall_before = 0.0
        self.record = None

    def elapsed(self):
        return self.wall_before + time.perf_counter() - self.t_start


def train(
    run,
    out_dir,
    *,
    input=None,
    build_model=None,
    data=None,
    verbose="auto",
    keep_checkpoint=False,
    title=None,
    save_model=False,
    distribution=None,
    callbacks=None,
    defer=False,
):
    """Trains a ``runconfig.Run`` and writes its run record into ``out_dir``.

    Everything the run says comes from it: the recipe (its ``train`` section), the seed, the
    record's config (its identity, ``runconfig.identity``) and task ``kind``, the devices and
    steps per execution (its ``system``), the model (its architecture and task) and the
    streams (``inputs.run_data``). Started again with the same arguments after being killed,
    it continues from the last completed epoch (weights, optimizer state, history) and says
    so in the record (``resumed``). A folder whose run already completed is not trained
    again: its record is returned. With ``curriculum_leap`` > 0 it trains by the
    Degree-Curriculum (``training.curriculum``: ``data.arrays`` of bits, one device), its
    stages in the record's ``curriculum``.

    Args:
        run: the ``runconfig.Run``.
        out_dir: run folder.
        input: ``"device"`` or ``"tfdata"`` (the run's streams): default the run's
            ``system.input``, else device input on the JAX backend and tf.data on TensorFlow;
            the examples, hence the results, are the same.
        build_model: ``() -> keras.Model`` instead of the run's model (called after seeding,
            so the seed fixes the init).
        data: ``TrainData`` instead of the run's streams (of the recipe's batch size).
        verbose: Keras ``fit`` verbosity; ``"auto"`` (the default): a progress bar on a
            terminal, one line per epoch when the output goes to a file or a pipe.
        keep_checkpoint: keep the resume checkpoint after the run (else it is removed).
        title: title of the learning-curve plot (default: the run id).
        save_model: also save the trained model as ``out_dir/model.keras`` (for analyses).
        distribution: a ``distribute.Placement`` made by ``distribute.setup`` at the start of
            the program (needed for multi-host runs), instead of the run's ``devices`` (None:
            all accelerators, else the CPU; N the first N devices, data-parallel; the global
            batch is the recipe's).
        callbacks: more Keras callbacks for ``fit`` (e.g. ``keras.callbacks.TensorBoard``,
            ``EarlyStopping``), called after the run's own, which records and checkpoints
            each epoch (so a resumed run continues with what they saw).

    The record also says how the run ran: its ``system`` section, ``engine_choice`` (how
    this process's backend was chosen), ``model_source`` / ``kind_source`` /
    ``aggregation_source`` (a builder, kind or aggregation given by file) and
    ``steps_per_execution`` (not in its config: a run may resume with another).

    Returns:
        The run record dict (also in ``out_dir/record.json``).
    """
    from pvr_keras.runconfig import Run
    from pvr_keras.training import inputs, runs

    if not isinstance(run, Run):
        raise ValueError(
            f"training.train takes a runconfig.Run (Run.make(kind, **fields)) and the out "
            f"folder: train(run, out, build_model=..., data=...); received "
            f"{type(run).__name__}"
        )
    recipe, config = run.train, run.to_dict()
    if distribution is None:
        distribution = distribute.setup(run.system.devices)
    if data is None:
        run.spec.prepare_data(run.task, run.system.data_dir, download=run.system.download)
        data = inputs.run_data(run, input)
    elif getattr(data, "batch_size", None) not in (None, recipe.batch_size):
        raise ValueError(
            f"the training streams were made with batch_size={data.batch_size} but the recipe "
            f"has batch_size={recipe.batch_size}: give the run one batch size"
        )
    if build_model is None:
        build_model = runs.model_builder(run)
    data = distribution.distribute_data(data)
    per_call = resolve_steps_per_execution(
        run.system.steps_per_execution, recipe.steps_per_epoch(data.num_examples),
        limit=distribution.max_steps_per_execution,
    )  # fmt: skip
    if recipe.curriculum_leap:
        _check_curriculum(data, distribution)
        per_call = 1  # its epochs have as many steps as their stage's examples
    options = _Options(recipe, config, run.data.seed, verbose, keep_checkpoint,
                       title or run.run_id, save_model, list(callbacks or []),
                       runs.record_entries(run), per_call, run.run_id)  # fmt: skip
    folder = _Run(distribution.run_dir(out_dir), data, options)
    folder.checkpoint.check()  # a link or a file at checkpoint/: refused before any training
    found = _finished_record(folder, config)  # read-only: a refused or finished folder stays
    if found is not None:
        return found
    prepared = Prepared(folder, build_model, distribution)
    if defer:
        return prepared
    with prepared.locked() as found:  # one process per run folder
        if found is not None:
            return found
        return _train(folder, build_model, distribution)


@dataclasses.dataclass
class Prepared:
    """A run checked and ready to train (``train(..., defer=True)``): what a population
    (``training.population``) trains together with others."""

    run: _Run
    build_model: Callable
    distribution: Any

    @contextlib.contextmanager
    def locked(self):
        """Holds the run folder's lock; yields the run's record if it finished meanwhile
        (else None), after removing what a killed writer left."""
        with records.RunLock(self.run.out_dir):
            found = _finished_record(self.run, self.run.options.config)
            if found is None:
                files.clean_temporaries(self.run.out_dir)  # we hold the lock
            yield found


def _finished_record(run, config):
    """The record of the finished run in ``run.out_dir``, None if there is none to return.

    Raises:
        ValueError: the folder holds a run of another configuration.
    """
    record_path = run.out_dir / "record.json"
    if not record_path.exists():
        return None
    found = records.read_record(record_path)
    if found.get("config") != config:
        raise ValueError(
            f"{run.out_dir} holds a run of another configuration; use another out folder "
            f"or delete it. Found {found.get('config')}, asked {config}"
        )
    if found.get("status") != "running" and not run.checkpoint.exists():
        print(f"{run.out_dir}: run already complete, not training again")
        return found
    return None


def _train(run, build_model, distribution):
    model, initial_epoch, num_epochs = start(run, build_model, distribution)
    _fit(run, model, distribution, initial_epoch, num_epochs)
    return end(run, model, distribution)


def start(run, build_model, distribution, population=None):
    """Builds, compiles and restores the run's model and starts its record (a new one, or the
    checkpoint's); returns ``(model, initial_epoch, num_epochs)``. ``population``: the
    record's ``population`` entry when the run trains in one (``training.population``)."""
    data, options = run.data, run.options
    recipe, config, seed = options.recipe, options.config, options.seed
    with distribution.scope():
        keras.utils.set_random_seed(seed)
        model = compile_model(_build(build_model, recipe.dtype_policy), recipe,
                              data.num_examples, data.metric,
                              options.steps_per_execution)  # fmt: skip
        distribution.prepare(model, data.test.element_spec)
        state = run.checkpoint.restore(model)
    steps = recipe.steps_per_epoch(data.num_examples)
    num_epochs = recipe.num_epochs(data.num_examples)
    if state is not None:
        run.record = state["record"]
        # Every resume counts, also one killed before its first epoch ended: the record on
        # disk has the count of the last start, the checkpoint that of the last epoch.
        on_disk = _recorded_resumes(run.out_dir)
        run.record["resumed"] = max(run.record["resumed"], on_disk) + 1
        run.wall_before = run.record["wall_time_s"]
        initial_epoch = state["epoch"]
        records.write_record(run.out_dir, run.record)
        print(f"{run.out_dir}: resuming after epoch {initial_epoch} of {num_epochs}")
    else:
        initial_epoch = 0
        run.record = {
            "format": records.FORMAT,
            "format_version": records.FORMAT_VERSION,
            "status": "running",
            **options.extra,
            "config": config,
            "recipe": dataclasses.asdict(recipe),
            "seed": seed,
            **records.environment(),
            "model": model.name,
            "num_params": model.count_params(),
            "num_examples": data.num_examples,
            "steps_per_epoch": steps,
            "epochs_planned": num_epochs,
            "epochs_completed": 0,
            "resumed": 0,
            "started": records.now(),
            "history": records.empty_history(),
            "wall_time_s": 0.0,
        }
    run.record["distribution"] = distribution.describe()
    run.record["input"] = data.input
    # The engine of this start (a run may resume on another: its identity has no engine).
    engine = {"backend": keras.backend.backend(), "jit_compile": bool(model.jit_compile)}
    run.record.update(engine)
    if "engine_choice" in options.extra:  # how this start's backend was chosen
        run.record["engine_choice"] = options.extra["engine_choice"]
    # Where this start ran: the host, and a launched job's launcher and job id.
    start = {"epoch": initial_epoch, **engine, **records.start_fields()}
    run.record["starts"] = [*run.record.get("starts", []), start]
    run.record["steps_per_execution"] = options.steps_per_execution
    if population is not None:
        run.record["population"] = population
        run.record["starts"][-1]["population"] = population["size"]
    else:
        run.record.pop("population", None)
    return model, initial_epoch, num_epochs


def _fit(run, model, distribution, initial_epoch, num_epochs):
    data, options = run.data, run.options
    recipe, steps = options.recipe, options.recipe.steps_per_epoch(run.data.num_examples)
    engine_callbacks = distribution.callbacks()
    verbose, lines = epochs.progress(options.verbose)
    if initial_epoch < num_epochs and recipe.curriculum_leap:
        with distribution.scope():
            curriculum.fit(
                run, model, data,
                [*engine_callbacks, epochs.EpochRecorder(run, engine_callbacks),
                 *options.callbacks],
                (verbose, lines), initial_epoch, num_epochs,
            )  # fmt: skip
    elif initial_epoch < num_epochs:
        with distribution.scope():
            model.fit(
                data.make_train(initial_epoch),
                epochs=num_epochs,
                initial_epoch=initial_epoch,
                steps_per_epoch=steps,
                validation_data=data.validation,
                shuffle=False,  # the dataset reshuffles itself each epoch
                callbacks=[
                    *engine_callbacks,
                    epochs.EpochRecorder(run, engine_callbacks),
                    *options.callbacks,
                    *lines,
                ],
                verbose=verbose,
            )


def end(run, model, distribution):
    """After the last epoch: the final evaluations, the saved model, the finished record."""
    data, options = run.data, run.options
    engine_callbacks = distribution.callbacks()
    if options.recipe.curriculum_leap and "curriculum" in run.record:
        run.record["curriculum"] = curriculum.finish(run.record["curriculum"])
    final_evals = {}
    with distribution.scope():
        for name, dataset in data.final_evals.items():
            result = model.evaluate(
                dataset, verbose=0, return_dict=True, callbacks=engine_callbacks
            )
            final_evals[f"{name}_accuracy"] = float(result["accuracy"])
            final_evals[f"{name}_loss"] = float(result["loss"])
    if options.save_model:  # written whole, then renamed: a kill leaves no half model
        files.check_size_limit(1.5 * needed_bytes(model), f"the model of {run.out_dir}")
        free = shutil.disk_usage(run.out_dir).free
        if free < 1.5 * needed_bytes(model):
            raise DiskFull(
                f"not enough free space to save the model in {run.out_dir} ({free / 1e6:.1f} "
                f"MB free); the last checkpoint is kept: free some space and run again"
            )
        with files.temp_folder(run.out_dir) as tmp, files.room(run.out_dir / "model.keras"):
            model.save(tmp / "model.keras")  # Keras wants the .keras suffix
            run.record["model_sha256"] = files.sha256(tmp / "model.keras")
            os.replace(tmp / "model.keras", run.out_dir / "model.keras")
    return _finish(run, final_evals)


def _check_curriculum(data, distribution):
    """The Degree-Curriculum trains on examples of bits (``TrainData.arrays``), on one
    device. (A run of a kind of other inputs is refused when it is made: ``runconfig.Run``;
    here, streams given for it that are not.)"""
    if data.arrays is None:
        raise ValueError(
            "the Degree-Curriculum (curriculum_leap > 0) orders examples by their number of -1 "
            "bits: it needs a kind whose inputs are bits (boolean, gotu); these streams have no "
            "arrays of bits"
        )
    if distribution.num_replicas > 1:
        raise ValueError(
            f"the Degree-Curriculum (curriculum_leap > 0) trains on one device; this run has "
            f"{distribution.num_replicas} replicas (give it --devices 1)"
        )


def _build(build_model, dtype_policy):
    """The model built under ``dtype_policy`` (layers take the policy when they are made);
    the global policy is restored afterwards."""
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype_policy)
    try:
        return build_model()
    finally:
        keras.config.set_dtype_policy(before)


def _recorded_resumes(out_dir):
    try:
        return int(records.read_record(out_dir).get("resumed", 0))
    except (OSError, ValueError):
        return 0


def _finish(run, final_evals):
    recipe, keep_checkpoint, title = (
        run.options.recipe,
        run.options.keep_checkpoint,
        run.options.title,
    )
    record = run.record
    history = records.pad_history(record["history"])
    final_train = history["train_eval_accuracy"][-1] if history["epoch"] else None
    record["status"] = "nan" if run.saw_nan else "complete"
    record["final"] = {
        key: (history[key][-1] if history["epoch"] else None)
        for key in (
            "train_loss",
            "train_accuracy",
            "train_eval_accuracy",
            "test_loss",
            "test_accuracy",
            "validation_loss",
            "validation_accuracy",
        )
    }
    record["final"].update(final_evals)
    record["failed"] = bool(
        run.saw_nan or final_train is None or not final_train >= recipe.failed_below
    )
    record["failed_rule"] = (
        f"loss became NaN, or final training accuracy (evaluated) < {recipe.failed_below}"
    )
    record["finished"] = records.now()
    record["wall_time_s"] = run.elapsed()
    records.write_record(run.out_dir, record)
    if history["epoch"]:
        learning_curve(history, run.out_dir / "learning_curve.png", title, run.data.metric)
    if not keep_checkpoint:
        run.checkpoint.remove()
    return record
