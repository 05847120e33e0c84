"""Finished runs, reused: load a run folder's model and evaluate it on fresh data.

    from pvr_keras import training
    run = training.load_run("runs/token_pvr/mlp_x1.0_w1_mod_sum_n50000_s0")
    run.evaluate()                          # the run's own test set: its recorded accuracy
    run.evaluate(holdout=0, seed=7)         # an IID test set it never saw
    run.evaluate(split="train", num_examples=5000)

A run folder is what ``training.train(..., save_model=True)`` leaves (every training recipe
and sweep does): ``record.json`` (its config) and ``model.keras``. The config says the task:
a token run (``token_pvr.py``, sweeps), a block run (``block_iid.py``, ``block_holdout.py``)
or an image-sequence run (``image_sequence.py``). Any evaluation setting not given is the
run's own, so ``evaluate()`` reproduces the run's final test accuracy.
"""

import dataclasses
import pathlib

import numpy as np

from pvr_keras.training import records

KINDS = ("token", "block", "sequence")
IMAGE_MODELS = ("resnet18", "vgg11_bn")
_TOKEN_TASK_FIELDS = ("window", "aggregation", "window_mode", "pointer", "holdout_values")


@dataclasses.dataclass
class FinishedRun:
    """A finished run: its folder, record, config, task kind and trained model."""

    folder: pathlib.Path
    record: dict
    model: object
    kind: str

    @property
    def config(self):
        return self.record["config"]

    def task(self, **overrides):
        """The run's task (``TokenTask`` or ``BlockTask``), with task fields replaced."""
        from pvr_keras.tasks import BlockTask, TokenTask

        if self.kind == "block":
            fields = {"values": self.config.get("values", "mnist"), **overrides}
            return BlockTask(**fields)
        fields = {k: self.config[k] for k in _TOKEN_TASK_FIELDS if self.config.get(k) is not None}
        if self.kind == "sequence":
            fields = {k: v for k, v in fields.items() if k in ("window", "aggregation")}
        if "holdout_values" in fields:
            fields["holdout_values"] = tuple(fields["holdout_values"])
        return TokenTask(**{**fields, **overrides})

    def evaluate(
        self, *, split="test", num_examples=None, seed=None, holdout=None, window=None,
        data_dir=None, batch_size=None,
    ):  # fmt: skip
        """Accuracy and loss of the model on a fresh stream of the run's task.

        Args:
            split: ``"test"`` or ``"train"``.
            num_examples: examples evaluated (default: the run's test set size).
            seed: the stream's seed (default: the run's, so ``split="test"`` is its test set).
            holdout: holdout-k (token, sequence) or True/False (block); default the run's.
            window: another window size (token, sequence runs): the label rule changes.
            data_dir: TFDS data dir of block and sequence runs (default: the run's).
            batch_size: evaluation batch (default 4096 token, 500 visual).

        Returns:
            dict: split, window, holdout, seed, examples, accuracy, loss.
        """
        from pvr_keras import data

        config = self.config
        seed = config.get("seed", 0) if seed is None else seed
        holdout = config.get("holdout", 0) if holdout is None else holdout
        num_examples = num_examples or config.get("test_examples", 10_000)
        common = dict(split=split, seed=seed, holdout=holdout, shuffle=False)
        if self.kind == "block":
            if window is not None:
                raise ValueError("window is for token and image-sequence runs")
            task = self.task()
            ds = data.block_dataset(
                task, num_examples, batch_size=batch_size or 500,
                data_dir=data_dir or config.get("data_dir"), **common,
            )  # fmt: skip
        else:
            task = self.task(**({} if window is None else {"window": window}))
            task.check_holdout(holdout)
            if self.kind == "sequence":
                ds = data.sequence_dataset(
                    task, num_examples, batch_size=batch_size or 500,
                    data_dir=data_dir or config.get("data_dir"), **common,
                )  # fmt: skip
            else:
                ds = data.token_dataset(task, num_examples, batch_size=batch_size or 4096, **common)
        correct, loss_sum, count = 0, 0.0, 0
        for x, y in ds:
            logits = np.asarray(self.model.predict_on_batch(x.numpy()), np.float64)
            y = y.numpy()
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss_sum += float(-log_p[np.arange(len(y)), y].sum())
            correct += int((logits.argmax(axis=1) == y).sum())
            count += len(y)
        return {
            "split": split,
            "window": getattr(task, "window", None),
            "holdout": holdout,
            "seed": seed,
            "examples": count,
            "accuracy": correct / count,
            "loss": loss_sum / count,
        }


def run_kind(config):
    """``"token"``, ``"block"`` or ``"sequence"`` from a run record's config."""
    if "head" in config and "encoder" in config:
        return "sequence"
    if config.get("model") in IMAGE_MODELS:
        return "block"
    return "token"


def run_folder_problem(folder, what="a finished run folder with a saved model"):
    """Why ``folder`` is not a finished run folder (``record.json`` and ``model.keras``), or
    None when it is one (files only: nothing is loaded)."""
    folder = pathlib.Path(folder)
    missing = [n for n in ("record.json", "model.keras") if not (folder / n).is_file()]
    if missing:
        return f"{folder} is not {what}: no {' and no '.join(missing)}"
    return None


def load_run(folder):
    """Loads a finished run folder (``record.json`` and ``model.keras``).

    Raises:
        FileNotFoundError: no record or no saved model there (a run trained without
            ``save_model``, or not finished).
        ValueError: the record says the run has not completed.
    """
    import keras

    from pvr_keras import models  # noqa: F401  (registers the custom layers)

    folder = pathlib.Path(folder)
    problem = run_folder_problem(folder)
    if problem:
        raise FileNotFoundError(problem)
    record = records.read_record(folder)
    if record.get("status") == "running":
        raise ValueError(f"{folder} holds a run that has not finished (status running)")
    model = keras.saving.load_model(folder / "model.keras")
    return FinishedRun(folder, record, model, run_kind(record["config"]))
