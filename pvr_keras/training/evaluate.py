"""Finished runs, reused: load a run folder's model and evaluate it on fresh data.

    from pvr_keras import training
    run = training.load_run("runs/token_pvr/mlp_x1.0_w1_mod_sum_n50000_s0")
    run.evaluate()                          # the run's own test set: its recorded accuracy
    run.evaluate(holdout=0, seed=7)         # an IID test set it never saw
    run.evaluate(split="train", num_examples=5000)
    run.evaluate(window=3, aggregation="median")   # any field of the run: another task

A run folder is what ``training.train(..., save_model=True)`` leaves (every training recipe,
sweep and benchmark does): ``record.json`` (its config: the run's identity) and
``model.keras``. The config says the run: its task kind, task, model and data. An evaluation
is that run with fields replaced (``run.replace(**fields)``), streamed by the function that
streams training (``training.inputs.stream``) and scored by the loss and metric training
compiles (``training.compiling``); any setting not given is the run's own, so
``evaluate()`` reproduces the run's final test accuracy. Models built from a builder of your
own reload too: its module is imported first (custom layers registered) and the file is
loaded with ``safe_mode=True``.
"""

import dataclasses
import pathlib

from pvr_keras import files, registry
from pvr_keras.errors import DamagedFile, UntrustedCode
from pvr_keras.training import records


@dataclasses.dataclass
class FinishedRun:
    """A finished run: its folder, record, run config (``runconfig.Run``) and trained model."""

    folder: pathlib.Path
    record: dict
    model: object
    run: object
    _compiled: bool = dataclasses.field(default=False, init=False, repr=False)

    @property
    def config(self):
        return self.record["config"]

    @property
    def kind(self):
        return self.run.kind

    def task(self, **overrides):
        """The run's task, with task fields replaced."""
        return dataclasses.replace(self.run.task, **overrides)

    def data_dir(self):
        """The TFDS data dir the run recorded (image kinds), else None."""
        return (self.record.get("system") or {}).get("data_dir") or self.config.get("data_dir")

    def with_fields(self, **fields):
        """The run with ``fields`` replaced (None: the run's own); raises ValueError for
        fields or values a run of its kind refuses (``holdout`` 3 of a window-2 run)."""
        return self.run.replace(**{k: v for k, v in fields.items() if v is not None})

    def evaluate(self, *, split="test", num_examples=None, data_dir=None, batch_size=None,
                 **fields):  # fmt: skip
        """Accuracy and loss of the model on a fresh stream of the run with ``fields``.

        Args:
            split: ``"test"`` or ``"train"``.
            num_examples: examples evaluated (default: the run's test set size).
            data_dir: TFDS data dir of image runs (default: the run's record, else
                ``TFDS_DATA_DIR``).
            batch_size: evaluation batch (default: the kind's).
            **fields: run fields to replace, None for the run's own: ``seed`` (the
                stream's; the run's makes ``split="test"`` its test set), ``holdout``
                (holdout-k, or blocks' on/off), task fields (``window``: the label rule
                changes).

        Returns:
            dict: split, window, holdout, seed, examples, accuracy, loss (cross-entropy; for
            a regression kind, ``metric="mse"``, the mean squared error and, as accuracy, the
            fraction of predictions within 0.5 of the label): training's metrics.
        """
        from pvr_keras.data.request import StreamRequest
        from pvr_keras.training import inputs

        run = self.with_fields(**fields)
        num_examples = num_examples or run.data.test_examples
        request = StreamRequest(
            run.task, num_examples, split, run.data.seed, run.data.holdout,
            batch_size or run.spec.eval_batch_size, shuffle=False,
            data_dir=data_dir or self.data_dir(),
        )  # fmt: skip
        dataset = inputs.stream(run.kind, request, input=inputs.default_input(run.kind))
        result = self._for_evaluation().evaluate(dataset, verbose=0, return_dict=True)
        return {
            "split": split,
            "window": getattr(run.task, "window", None),
            "holdout": run.data.holdout,
            "seed": run.data.seed,
            "examples": num_examples,
            "accuracy": float(result["accuracy"]),
            "loss": float(result["loss"]),
        }

    def _for_evaluation(self):
        """The model compiled with the loss and metric training compiles for its kind (its
        optimizer, and so its state, kept)."""
        if not self._compiled:
            from pvr_keras.training.compiling import loss_and_metric

            loss, accuracy = loss_and_metric(self.run.spec.metric)
            optimizer = getattr(self.model, "optimizer", None) or "sgd"
            self.model.compile(optimizer=optimizer, loss=loss, weighted_metrics=[accuracy])
            self._compiled = True
        return self.model


def run_folder_problem(folder, what="a finished run folder with a saved model"):
    """Why ``folder`` is not a finished run folder (``record.json`` and ``model.keras``), or
    None when it is one (files only: nothing is loaded)."""
    folder = pathlib.Path(folder)
    missing = [n for n in ("record.json", "model.keras") if not (folder / n).is_file()]
    if missing:
        return f"{folder} is not {what}: no {' and no '.join(missing)}"
    return None


def load_model(path, model=None, source=None, sha256=None):
    """Loads a saved ``.keras`` model with ``safe_mode=True`` after registering what it
    needs: the library's layers and schedules, and the module of ``model`` when it is a
    builder reference (``source``: the builder file's absolute path, used when the
    reference's relative path is not here).

    Raises:
        DamagedFile: the file is not a whole saved model, or its SHA-256 is not ``sha256``
            (the checksum recorded when it was saved).
    """
    import zipfile

    import keras

    from pvr_keras import models  # noqa: F401  (registers the library's layers)
    from pvr_keras.training import compiling, schedules  # noqa: F401  (schedule, MSE's metric)

    path = pathlib.Path(path)
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"{path} does not exist")
    # Keras opens the file by name: it reads a private copy of the bytes checked here (a
    # plain file, no link, no FIFO; the recorded SHA-256), never a file swapped in since.
    with files.private_copy(path) as copy:
        if not zipfile.is_zipfile(copy):
            raise DamagedFile(
                f"{path} is not a whole saved Keras model (not a .keras archive: cut short, "
                f"empty or overwritten)"
            )
        if sha256 is not None and files.sha256(copy) != sha256:
            raise DamagedFile(
                f"{path} was changed after it was saved (its SHA-256 is not the one its run "
                f"recorded); train the run again or restore the file"
            )
        if model is not None and registry.is_reference(model):
            if source:
                registry.remember_source(model, source)
            registry.load_module(model.rpartition(":")[0])
        try:
            return keras.saving.load_model(copy, safe_mode=True)
        except (OSError, EOFError, zipfile.BadZipFile, KeyError, ValueError) as error:
            raise DamagedFile(f"{path} is not a whole saved Keras model ({error})") from None


def load_run(folder, *, trust_code=False):
    """Loads a finished run folder (``record.json`` and ``model.keras``).

    A record that names code of its own (a builder or task kind by reference) never makes
    this import it unless the code is the user's: a reference they named (``registry.trust``,
    as the recipes do with ``--model`` / ``--kind``), one already imported, or, with
    ``trust_code=True``, a file whose SHA-256 is the one the run recorded when it trained
    (the bytes checked are the bytes run, read once, never a cached ``.pyc``). A module
    reference (``pkg.nets:build``) is imported only when the user names it
    (``registry.trust("pkg.nets:build")``; ``evaluate.py --trust-module pkg.nets``):
    ``trust_code`` does not cover it.

    Raises:
        FileNotFoundError: no record or no saved model there (a run trained without
            ``save_model``, or not finished).
        DamagedFile: the record or the model is not whole (names the file, says why).
        ValueError: the record says the run has not completed, or its config is not a run.
        UntrustedCode: (a ValueError) the record names code this would have to import, and
            ``trust_code`` is off, or the file is not the one the run recorded.
    """
    from pvr_keras import legacy

    folder = pathlib.Path(folder)
    problem = run_folder_problem(folder)
    if problem:
        raise FileNotFoundError(problem)
    record = records.read_record(folder)
    if record.get("status") == "running":
        raise ValueError(f"{folder} holds a run that has not finished (status running)")
    for key in ("model_source", "kind_source", "aggregation_source", "model_sha256",
                *(f"{k}_source_sha256" for k in ("model", "kind", "aggregation"))):  # fmt: skip
        value = record.get(key)
        if value is not None and not (
            isinstance(value, str) and 0 < len(value) <= MAX_PATH and "\0" not in value
        ):
            raise DamagedFile(
                f"{folder / 'record.json'}: its {key} is not a path or a digest (a string of "
                f"at most {MAX_PATH} characters); received {str(value)[:60]!r}"
            )
    for key, ref in (("model_source", record["config"].get("model")),
                     ("kind_source", record["config"].get("kind")),
                     ("aggregation_source", record["config"].get("aggregation"))):  # fmt: skip
        if not (isinstance(ref, str) and registry.is_reference(ref)):
            continue
        if record.get(key):
            registry.remember_source(ref, record[key])
        if trust_code:
            _trust_recorded(folder, ref, record.get(f"{key}_sha256"))
    with registry.reading(folder / "record.json"):
        try:
            run = legacy.from_config(record["config"])
        except UntrustedCode:
            raise
        except ValueError as error:
            raise DamagedFile(
                f"{folder / 'record.json'}: its config is not a run ({error})"
            ) from None
        model = load_model(
            folder / "model.keras", run.model, record.get("model_source"),
            record.get("model_sha256"),
        )  # fmt: skip
    return FinishedRun(folder, record, model, run)


MAX_PATH = 4096  # the longest path a record may name (Linux's PATH_MAX)


def _trust_recorded(folder, ref, digest):
    """With ``trust_code``: trusts the file ``ref`` names if it is the one the run trained
    with: only bytes with the recorded SHA-256 are run (checked on the bytes ``load_module``
    reads and runs, once). A module reference is not trusted this way (its package's code is
    not what the run recorded): the user names the module (``registry.trust``,
    ``--trust-module``)."""
    path = registry.file_of(ref)
    if path is None:  # a module reference: imported only when the user names it
        return
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: the code it names, {ref}, is not here ({path})")
    if not digest:
        raise UntrustedCode(
            f"{folder / 'record.json'} records no SHA-256 of {path} (a run trained before "
            f"records had one): check the file and name it yourself (registry.trust)"
        )
    if files.sha256(path) != digest:
        raise UntrustedCode(
            f"{path} is not the file {folder} was trained with (its SHA-256 differs from the "
            f"recorded one); --trust-code imports only that file"
        )
    registry.trust_file(path, digest)
