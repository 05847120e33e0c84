"""What a run does at the end of each epoch: evaluate and record it, and say how it went.

``EpochRecorder`` evaluates the training accuracy and the test set, appends the epoch to the
run's history, writes the record and checkpoints; ``EpochLines`` prints one plain line per
epoch where a progress bar would not be read (output sent to a file or a pipe).
"""

import math
import sys
import time

import keras

from pvr_keras.training import records


class EpochRecorder(keras.callbacks.Callback):
    """After each epoch: evaluate training accuracy and the test set, append history, write
    the record, checkpoint.

    Keras's ``val_loss`` / ``val_accuracy`` are the run's validation set (``fit``'s
    ``validation_data``); the test set is evaluated here and added to the epoch's logs as
    ``test_loss`` / ``test_accuracy`` (with ``train_eval_accuracy``), so callbacks after this
    one (``EarlyStopping``, TensorBoard, the progress line) see them under their own names.

    It reads the model's values once per epoch and never per batch (no ``on_train_batch_end``,
    and no ``TerminateOnNaN``, which reads the loss after every batch), so the device never
    waits for the host between steps: a loss that becomes NaN makes the epoch's mean loss
    NaN, and the run stops at the end of that epoch, recorded as NaN.

    Each epoch's seconds are recorded whole (``epoch_seconds``) and in two parts:
    ``train_seconds``, from the epoch's start until its last training step is done (read when
    ``fit`` starts the validation, or at the epoch's end without one, after waiting for the
    device: on JAX steps are dispatched asynchronously, so the optimizer's step count is read
    back first), and ``eval_seconds``, the epoch's evaluations (validation, training
    accuracy, test set).
    """

    def __init__(self, run, engine_callbacks=()):
        super().__init__()
        self.run = run
        self.engine_callbacks = list(engine_callbacks)  # ``Placement.callbacks()``

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()
        self.t_trained = None

    def on_test_begin(self, logs=None):
        # ``fit``'s validation (its own evaluations pass other callbacks): the steps are done.
        if getattr(self, "t_trained", 0.0) is None:
            self._trained()

    def _trained(self):
        """The time the epoch's training steps finished, after waiting for the device."""
        keras.ops.convert_to_numpy(self.model.optimizer.iterations)  # blocks until computed
        self.t_trained = time.perf_counter()

    def trained_for(self, seconds):
        """The epoch's steps took ``seconds`` and end now (a population's member: its steps
        are the population's, its evaluations its own)."""
        self.t_trained = time.perf_counter()
        self.t0 = self.t_trained - seconds

    def _evaluate(self, dataset):
        return self.model.evaluate(
            dataset, verbose=0, return_dict=True, callbacks=self.engine_callbacks
        )

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        run = self.run
        if getattr(self, "t_trained", 0.0) is None:  # no validation: the steps end here
            self._trained()
        if not math.isfinite(float(logs.get("loss", 0.0))):
            run.saw_nan = True
            self.model.stop_training = True
        if run.data.train_eval is not None:
            logs["train_eval_accuracy"] = self._evaluate(run.data.train_eval)["accuracy"]
        else:
            logs["train_eval_accuracy"] = logs.get("accuracy")
        test = self._evaluate(run.data.test)
        logs["test_loss"], logs["test_accuracy"] = test["loss"], test["accuracy"]
        history = run.record["history"]
        row = {
            "epoch": epoch + 1,
            "train_loss": logs.get("loss"),
            "train_accuracy": logs.get("accuracy"),
            "train_eval_accuracy": logs["train_eval_accuracy"],
            "test_loss": logs["test_loss"],
            "test_accuracy": logs["test_accuracy"],
            "learning_rate": float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)),
            "epoch_seconds": time.perf_counter() - self.t0,
            "validation_loss": logs.get("val_loss"),
            "validation_accuracy": logs.get("val_accuracy"),
            "train_seconds": self.t_trained - self.t0,
        }
        row["eval_seconds"] = row["epoch_seconds"] - row["train_seconds"]
        records.pad_history(history)  # a run resumed from a record of fewer columns
        for key, value in row.items():
            history[key].append(None if value is None else float(value))
        history["epoch"][-1] = epoch + 1  # an int in the CSV, not 1.0
        run.record["epochs_completed"] = epoch + 1
        run.record["wall_time_s"] = run.elapsed()
        records.write_record(run.out_dir, run.record)
        run.checkpoint.save(
            self.model,
            {"epoch": epoch + 1, "record": run.record},
        )


class EpochLines(keras.callbacks.Callback):
    """One line per epoch on ``stream`` (default ``sys.stdout``): the epoch, its seconds and
    its logs, flushed. For output that is not a terminal, where Keras's progress bar writes
    its colour codes and every redraw into the file."""

    def __init__(self, stream=None):
        super().__init__()
        self.stream = stream

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        values = " - ".join(f"{name}: {_number(value)}" for name, value in (logs or {}).items())
        stream = self.stream or sys.stdout
        epochs = self.params.get("epochs") if self.params else None
        of = f"/{epochs}" if epochs else ""
        seconds = time.perf_counter() - self.t0
        stream.write(f"Epoch {epoch + 1}{of} - {seconds:.0f}s - {values}\n")
        stream.flush()


def _number(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{value:.4f}" if value == 0 or abs(value) > 1e-3 else f"{value:.4e}"


def progress(verbose, stream=None):
    """``(fit's verbose, more callbacks)`` for a run's ``verbose``: ``"auto"`` on a stdout
    that is not a terminal prints one line per epoch (``EpochLines``) instead of Keras's
    progress bar; anything else is Keras's own."""
    stream = stream or sys.stdout
    if verbose == "auto" and not (hasattr(stream, "isatty") and stream.isatty()):
        return 0, [EpochLines(stream)]
    return verbose, []
