"""Hyperparameter search for a PVR task over the paper's space (Appendix A) with keras-tuner.

Optimizers SGD, Adam, Adagrad, LAMB; learning rate log-uniform in [1e-3, 4e-1]; batch size
128..4096 in powers of two; the rest is the run's recipe (token: warm-up + cosine, weight
decay 1e-5). Objective: validation accuracy (the run's validation set: training-distribution
examples drawn with seed+1, never the test set).

    python recipes/tune.py                                  # quick: random search, 10 trials
    python recipes/tune.py --tuner hyperband --model mlp mixer --window 3
    python recipes/tune.py --preset paper --tuner bayesian
    python recipes/tune.py --kind boolean                   # any task kind; Boolean: MSE

Every trial is the search's run with the trial's values (``run.replace(...)``), trained as
``recipes/train.py`` trains it: the loss and metric of its kind (cross-entropy, or the mean
squared error of the Boolean kind), its streams. Every field of a run of ``--kind`` that the
search does not choose is a flag (``--window``, ``--holdout``, ``--num-examples``,
``--epochs``, ...; ``--kind K --help`` lists them); ``--model`` takes several models,
registered names or builders of yours (``--model mlp my_nets.py:tiny_net``).

Started again with the same command it resumes: finished trials are kept, an unfinished one
reruns (keras-tuner, ``overwrite=False``, same ``--directory`` and ``--project``); a larger
``--max-trials`` extends a finished search. Writes ``config.json`` and ``best.json`` (best
trials, their hyperparameters and validation accuracy) into the project folder.

Distributed (keras-tuner's chief/worker mode; one chief serves trials, workers train them;
all share ``--directory``; the chief binds 127.0.0.1 unless ``--oracle-ip`` says otherwise)::

    python recipes/tune.py --tuner-id chief   --oracle-port 8000 &
    python recipes/tune.py --tuner-id tuner0  --oracle-port 8000 &
    python recipes/tune.py --tuner-id tuner1  --oracle-port 8000

(or the variables KERASTUNER_TUNER_ID / KERASTUNER_ORACLE_IP / KERASTUNER_ORACLE_PORT). A worker
whose chief does not answer within ``--chief-timeout`` seconds fails with a message. A worker
killed mid-trial leaves that trial assigned to its id: start it again with the same
``--tuner-id`` and it reruns the trial; the chief finishes once every trial has ended.
"""

import dataclasses
import json
import os
import pathlib
import re

from pvr_keras import cli, registry

# Fields that may change in a search's folder: more trials extend it; where the chief is.
SEARCH_SETTINGS = ("max_trials", "directory", "project", "tuner_id", "oracle_ip",
                   "oracle_port", "chief_timeout")  # fmt: skip
# What the search chooses (and what a token run here does not need): not flags.
NOT_FLAGS = (
    "model", "width", "optimizer", "learning_rate", "batch_size", "momentum", "weight_decay",
    "schedule", "min_steps", "failed_below", "test_examples", "train_eval_examples", "devices",
    "input", "data_dir", "download", "tensorboard", "population",
)  # fmt: skip


# The project name of a search of another kind than token (whose default is Own.project).
OTHER_KIND_PROJECT = "{tuner}_{model}_{kind}_n{num_examples}"


@dataclasses.dataclass(frozen=True)
class Own:
    kind: str = dataclasses.field(
        default="token",
        metadata={
            "help": "task kind: token, block, sequence, boolean, gotu, chain or "
            "'module:ATTRIBUTE' of yours"
        },
    )
    tuner: str = dataclasses.field(
        default="random",
        metadata={"choices": ("random", "hyperband", "bayesian"), "help": "search algorithm"},
    )
    models: tuple[str, ...] = dataclasses.field(
        default=("mlp",),
        metadata={
            "flag": "--model",
            "help": "architectures to search over (token: "
            f"{', '.join(registry.model_names('token'))}; the kind's models; or builder "
            "references 'module:function' / 'file.py:function')",
        },
    )
    val_examples: int = dataclasses.field(default=5_000, metadata={"help": "validation size"})
    max_trials: int = dataclasses.field(
        default=10, metadata={"help": "trials (random, bayesian; Hyperband sizes itself)"}
    )
    directory: str = dataclasses.field(
        default="runs/tune", metadata={"help": "search state folder (shared by all workers)"}
    )
    project: str = dataclasses.field(
        default="{tuner}_{model}_w{window}_{aggregation}_n{num_examples}",
        metadata={"help": "project name ({field} placeholders are filled in)"},
    )
    tuner_id: str | None = dataclasses.field(
        default=None, metadata={"help": "chief or tuner0, tuner1, ... (KERASTUNER_TUNER_ID)"}
    )
    oracle_ip: str | None = dataclasses.field(
        default=None, metadata={"help": "chief address (KERASTUNER_ORACLE_IP; 127.0.0.1)"}
    )
    oracle_port: int | None = dataclasses.field(
        default=None, metadata={"help": "chief port (KERASTUNER_ORACLE_PORT)"}
    )
    chief_timeout: float = dataclasses.field(
        default=120.0, metadata={"help": "seconds a worker waits for the chief"}
    )

    def validate(self, run):
        cli.check_ints(self, ("val_examples", "max_trials"), 1)
        cli.check_positive(self, ("chief_timeout",))
        if self.oracle_port is not None:
            cli.check_range(self, "oracle_port", 1, 65535)
        if len(set(self.models)) != len(self.models):
            raise cli.ConfigError(f"--model names a model twice: {' '.join(self.models)}")
        for model in self.models:
            cli.check_task(lambda model=model: registry.check_model(model, run.spec.models))
        if run.warmup_epochs > run.epochs:
            raise cli.ConfigError(
                f"--warmup-epochs must be at most --epochs ({run.epochs}); received "
                f"{run.warmup_epochs}"
            )
        from pvr_keras.tuning import distributed  # no framework: checked before any import

        cli.check_task(
            lambda: distributed.check_settings(self.tuner_id, self.oracle_port, self.chief_timeout)
        )
        project = cli.check_task(lambda: project_name(run, self))
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", project) or ".." in project:
            raise cli.ConfigError(
                f"--project must be a name, not a path (letters, digits, '_', '.', '-'); "
                f"received {project!r}"
            )
        folder = pathlib.Path(self.directory) / project
        cli.check_out_folder(folder)
        if not self.tuner_id or "chief" in self.tuner_id:  # a worker writes no config
            try:
                cli.check_config(folder, run, self, may_differ=SEARCH_SETTINGS)
            except cli.ConfigError as err:
                raise cli.ConfigError(
                    str(err).replace("holds a run of", "holds a search of")
                ) from None


PRESETS = {
    "quick": lambda given: dict(num_examples=20_000, epochs=5, warmup_epochs=1),
    "paper": lambda given: dict(
        num_examples=1_000_000, val_examples=100_000, epochs=200, warmup_epochs=10, max_trials=100
    ),  # fmt: skip
}


def presets(kind):
    """The token presets; another kind's search keeps its runs' sizes and recipe (quick: 5
    epochs) and searches over its default model."""
    if kind == "token":
        return PRESETS
    from pvr_keras.runconfig import Run

    default = Run.make(kind)
    other = dict(models=(default.model,), project=OTHER_KIND_PROJECT)
    return {
        "quick": lambda given: dict(other, epochs=5, warmup_epochs=min(1, default.warmup_epochs)),
        "paper": lambda given: dict(other, max_trials=100),
    }


def command(kind="token"):
    """The search's command line for a task kind (its runs' fields as flags)."""
    return cli.Command(
        kind=kind, presets=presets(kind), body=None, own=Own, description=__doc__,
        exclude=NOT_FLAGS, launches=False,  # its trials run through keras-tuner's own workers
    )  # fmt: skip


COMMAND = command()


def project_name(run, own):
    """``--project`` with its placeholders filled in (``model``: the models joined by ``-``,
    a reference by its builder's name)."""
    slugs = [m.rpartition(":")[2] for m in own.models]
    fields = {**run.flat(), **dataclasses.asdict(own), "model": "-".join(slugs),
              "kind": run.spec.name}  # fmt: skip
    try:
        return own.project.format(**fields)
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(
            f"--project {own.project!r} names an unknown placeholder ({err})"
        ) from None


def train_command(run, values):
    """The command that trains a trial (``recipes/token_pvr.py``; another kind:
    ``recipes/train.py --kind K``): the search's run with the trial's model, optimizer,
    learning rate and batch size, its epochs (a Hyperband trial: its own number) and no
    minimum of steps, every field of its identity as a flag, so that the command parses back
    to the trial's run."""
    trial = run.replace(
        model=values["model"],
        optimizer=values["optimizer"],
        learning_rate=float(values["learning_rate"]),
        batch_size=int(values["batch_size"]),
        epochs=int(values.get("tuner/epochs", run.epochs)),
        min_steps=0,  # a trial trains its epochs, however few steps they are
    )
    flags = []
    for name, value in trial.to_dict().items():
        if name in ("model_kwargs", "kind"):
            continue
        flag = cli.flag(name)
        if isinstance(value, bool):
            flags.append(flag if value else f"--no-{flag[2:]}")
        elif isinstance(value, list | tuple):
            flags.append(f"{flag} {' '.join(map(str, value))}")
        else:
            flags.append(f"{flag} {value!r}" if isinstance(value, float) else f"{flag} {value}")
    if run.spec.name == "token":
        return "python recipes/token_pvr.py " + " ".join(flags)
    return f"python recipes/train.py --kind {run.kind} " + " ".join(flags)


def parse(argv=None):
    """``(run, own)`` of a command line: ``--kind`` first, which decides the other flags."""
    return command(cli.kind_first(argv)).parse(argv)


def main(argv=None):
    run, own = parse(argv)
    run = run.replace(backend=cli.start(run.system.backend, kind=run.kind))
    from pvr_keras import tuning
    from pvr_keras.files import write_text

    # Each trial is this run with the trial's values (tuning.PVRHyperModel.trial_run).
    hypermodel = tuning.PVRHyperModel(run, val_examples=own.val_examples, models=own.models)
    project = project_name(run, own)
    folder = pathlib.Path(own.directory) / project
    role = tuning.configure(
        own.tuner_id, own.oracle_ip, own.oracle_port, chief_timeout=own.chief_timeout
    )
    if role != "worker":  # checked before any work (Own.validate); more trials extend it
        cli.write_config(folder, run, own, may_differ=SEARCH_SETTINGS)
    tuner = tuning.make_tuner(
        own.tuner,
        hypermodel,
        directory=own.directory,
        project_name=project,
        max_trials=own.max_trials,
        seed=run.seed,
    )
    tuning.search(tuner)
    if role == "worker":
        print(f"worker {os.environ['KERASTUNER_TUNER_ID']}: the chief has no trials left")
        return {"role": role}
    trials = tuner.oracle.trials.values()
    best = [
        {"trial_id": t.trial_id, "val_accuracy": t.score, "values": t.hyperparameters.values}
        for t in tuner.oracle.get_best_trials(5)
    ]
    summary = {
        "role": role,
        "project": str(folder),
        "trials": len(trials),
        "status": {s: sum(t.status == s for t in trials) for s in {t.status for t in trials}},
        "best": best,
        "train_command": train_command(run, best[0]["values"]) if best else None,
    }
    write_text(folder / "best.json", json.dumps(summary, indent=1, default=str) + "\n")
    if best:
        top = best[0]
        print(
            f"\n{len(trials)} trials; best val_accuracy {top['val_accuracy']:.4f} with "
            f"{top['values']}\nresults: {folder / 'best.json'}\n"
            f"train it: {summary['train_command']}"
        )
    return summary


if __name__ == "__main__":
    cli.main(main)
