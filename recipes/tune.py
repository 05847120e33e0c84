"""Hyperparameter search for a token PVR task over the paper's space (Appendix A) with keras-tuner.

Optimizers SGD, Adam, Adagrad, LAMB; learning rate log-uniform in [1e-3, 4e-1]; batch size
128..4096 in powers of two; warm-up + cosine schedule, weight decay 1e-5. Objective: validation
accuracy (the test split drawn with seed+1, not the reported test set).

    python recipes/tune.py                                  # quick: random search, 10 trials
    python recipes/tune.py --tuner hyperband --model mlp mixer --window 3
    python recipes/tune.py --preset paper --tuner bayesian

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

from pvr_keras import config as configs
from pvr_keras.tasks import AGGREGATIONS

# Fields that define the search: a project holding another value of one of them is refused.
SEARCH_FIELDS = (
    "tuner",
    "model",
    "window",
    "aggregation",
    "holdout",
    "num_examples",
    "val_examples",
    "epochs",
    "warmup_epochs",
    "seed",
)


@dataclasses.dataclass(frozen=True)
class Config:
    tuner: str = dataclasses.field(
        default="random",
        metadata={"choices": ("random", "hyperband", "bayesian"), "help": "search algorithm"},
    )
    model: tuple[str, ...] = dataclasses.field(
        default=("mlp",),
        metadata={
            "choices": ("mlp", "mlp2x", "transformer", "mixer"),
            "help": "architectures to search over",
        },
    )
    window: int = dataclasses.field(default=1, metadata={"help": "window size (complexity+1)"})
    aggregation: str = dataclasses.field(
        default="mod_sum",
        metadata={"choices": AGGREGATIONS, "help": "how the window's values make the label"},
    )
    holdout: int = dataclasses.field(default=0, metadata={"help": "holdout-k (Section 6.2)"})
    num_examples: int = dataclasses.field(default=20_000, metadata={"help": "training set size"})
    val_examples: int = dataclasses.field(default=5_000, metadata={"help": "validation size"})
    epochs: int = dataclasses.field(default=5, metadata={"help": "epochs per trial (max)"})
    warmup_epochs: int = dataclasses.field(default=1, metadata={"help": "linear warm-up epochs"})
    max_trials: int = dataclasses.field(
        default=10, metadata={"help": "trials (random, bayesian; Hyperband sizes itself)"}
    )
    seed: int = 0
    backend: str | None = configs.backend_field()
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

    def task(self):
        from pvr_keras.tasks import TokenTask

        return TokenTask(window=self.window, aggregation=self.aggregation)

    def validate(self):
        task = configs.check_task(self.task)
        configs.check_task(lambda: task.check_holdout(self.holdout))
        configs.check_ints(self, ("num_examples", "val_examples", "epochs", "max_trials"), 1)
        configs.check_ints(self, ("warmup_epochs", "seed"), 0)
        configs.check_positive(self, ("chief_timeout",))
        if self.oracle_port is not None:
            configs.check_range(self, "oracle_port", 1, 65535)
        if len(set(self.model)) != len(self.model):
            raise configs.ConfigError(f"--model names a model twice: {' '.join(self.model)}")
        configs.check_task(lambda: project_name(self))


PRESETS = {
    "quick": Config(),
    "paper": Config(
        num_examples=1_000_000, val_examples=100_000, epochs=200, warmup_epochs=10, max_trials=100
    ),
}


def _check_same_search(cfg, path):
    if not path.exists():
        return
    found = json.loads(path.read_text())
    asked = configs.to_dict(cfg)
    differ = {k: (found.get(k), asked[k]) for k in SEARCH_FIELDS if found.get(k) != asked[k]}
    if differ:
        raise ValueError(
            f"{path.parent} holds a search of another configuration; use another --project "
            f"or --directory. Differences (found, asked): {differ}"
        )


def project_name(cfg):
    """``cfg.project`` with its placeholders filled in (``model`` joined by ``-``)."""
    fields = {**dataclasses.asdict(cfg), "model": "-".join(cfg.model)}
    try:
        return cfg.project.format(**fields)
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(
            f"--project {cfg.project!r} names an unknown placeholder ({err})"
        ) from None


def train_command(cfg, values):
    """The ``recipes/token_pvr.py`` command that trains a trial's hyperparameters on the
    search's task and training set (a Hyperband trial: its own number of epochs)."""
    flags = {
        "--model": values["model"],
        "--window": cfg.window,
        "--aggregation": cfg.aggregation,
        "--holdout": cfg.holdout,
        "--num-examples": cfg.num_examples,
        "--epochs": values.get("tuner/epochs", cfg.epochs),
        "--warmup-epochs": cfg.warmup_epochs,
        "--optimizer": values["optimizer"],
        "--learning-rate": f"{values['learning_rate']:.6g}",
        "--batch-size": values["batch_size"],
        "--seed": cfg.seed,
    }
    return "python recipes/token_pvr.py " + " ".join(f"{k} {v}" for k, v in flags.items())


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    configs.start(cfg)
    from pvr_keras import tuning
    from pvr_keras.files import atomic_write_text

    hypermodel = tuning.TokenHyperModel(
        cfg.task(),
        cfg.num_examples,
        val_examples=cfg.val_examples,
        models=cfg.model,
        epochs=cfg.epochs,
        warmup_epochs=cfg.warmup_epochs,
        seed=cfg.seed,
        holdout=cfg.holdout,
    )
    project = project_name(cfg)
    folder = pathlib.Path(cfg.directory) / project
    _check_same_search(cfg, folder / "config.json")
    role = tuning.configure(
        cfg.tuner_id, cfg.oracle_ip, cfg.oracle_port, chief_timeout=cfg.chief_timeout
    )
    if role != "worker":  # fields outside SEARCH_FIELDS may change (more trials extend it)
        others = tuple(f.name for f in dataclasses.fields(cfg) if f.name not in SEARCH_FIELDS)
        configs.write(cfg, folder, may_differ=others)
    tuner = tuning.make_tuner(
        cfg.tuner,
        hypermodel,
        directory=cfg.directory,
        project_name=project,
        max_trials=cfg.max_trials,
        seed=cfg.seed,
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
        "train_command": train_command(cfg, best[0]["values"]) if best else None,
    }
    atomic_write_text(folder / "best.json", json.dumps(summary, indent=1, default=str) + "\n")
    if best:
        top = best[0]
        print(
            f"\n{len(trials)} trials; best val_accuracy {top['val_accuracy']:.4f} with "
            f"{top['values']}\nresults: {folder / 'best.json'}\n"
            f"train it: {summary['train_command']}"
        )
    return summary


if __name__ == "__main__":
    configs.run(main)
