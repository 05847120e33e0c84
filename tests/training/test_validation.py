"""A run's validation set, test set and output: Keras's ``val_*`` is a validation set of
training-distribution examples (never the test set), the test set is evaluated under its own
name, a finished folder keeps no lock, and output to a file is one line per epoch."""

import contextlib
import io

import keras
import numpy as np
import pytest

from pvr_keras import data, models, training
from pvr_keras.errors import RunBusy
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import epochs, records
from pvr_keras.training.inputs import VALIDATION_EXAMPLES, train_data

TASK = TokenTask(window=2)
N, TEST = 640, 128
RUN = Run.make("token", window=2, num_examples=N, test_examples=TEST, batch_size=64, epochs=2,
               warmup_epochs=0, min_steps=0, schedule="constant")  # fmt: skip


class Check(keras.callbacks.Callback):
    """Evaluates the model on the arrays of each set after every epoch, beside the logs."""

    def __init__(self):
        super().__init__()
        self.seen = []
        self.sets = {
            "val": data.token_arrays(TASK, TEST, split="train", seed=1),  # the validation set
            "test": data.token_arrays(TASK, TEST, split="test", seed=0),
        }

    def on_epoch_end(self, epoch, logs=None):
        found = {
            name: self.model.evaluate(x, y, verbose=0, return_dict=True)
            for name, (x, y) in self.sets.items()
        }
        self.seen.append((dict(logs), found))


def _train(out, callbacks=(), verbose=0):
    streams = train_data("token", TASK, N, test_examples=TEST, batch_size=64, seed=0)
    return training.train(
        RUN, out, build_model=lambda: models.mlp(embed_dim=4, widths=(8,)), data=streams,
        verbose=verbose, callbacks=list(callbacks),
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One run of ``RUN`` that the tests below look at from their sides: (folder, record,
    the ``Check`` and the fake ``Clock`` it trained with, what it printed). Printed to a
    file-like stream (not a terminal), as pytest's captured stdout is."""
    out = tmp_path_factory.mktemp("validation") / "run"
    check, clock, printed = Check(), Clock(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setattr(epochs, "time", clock)
        record = _train(out, [check, clock], verbose="auto")
    return out, record, check, clock, printed.getvalue()


def test_keras_validation_is_not_the_test_set_and_the_test_set_has_its_own_name(trained):
    _, record, check, _, _ = trained
    assert len(check.seen) == 2
    for epoch, (logs, found) in enumerate(check.seen):
        # Keras's val_* (what EarlyStopping and the tuner read) is the validation set...
        assert logs["val_loss"] == pytest.approx(found["val"]["loss"], rel=1e-4)
        assert logs["val_accuracy"] == pytest.approx(found["val"]["accuracy"], abs=1e-6)
        # ... and the test set is reported beside it under its own name.
        assert logs["test_loss"] == pytest.approx(found["test"]["loss"], rel=1e-4)
        assert logs["test_accuracy"] == pytest.approx(found["test"]["accuracy"], abs=1e-6)
        assert logs["val_loss"] != pytest.approx(logs["test_loss"], rel=1e-4)
        history = record["history"]
        assert history["test_loss"][epoch] == pytest.approx(logs["test_loss"])
        assert history["validation_loss"][epoch] == pytest.approx(logs["val_loss"])
        assert history["validation_accuracy"][epoch] == pytest.approx(logs["val_accuracy"])
    assert record["final"]["validation_loss"] == record["history"]["validation_loss"][-1]
    assert record["final"]["test_loss"] == record["history"]["test_loss"][-1]


def test_the_validation_set_is_neither_trained_on_nor_tested():
    x_train, _ = data.token_arrays(TASK, N, split="train", seed=0)
    x_val, _ = check_sets = data.token_arrays(TASK, TEST, split="train", seed=1)
    x_test, _ = data.token_arrays(TASK, TEST, split="test", seed=0)
    rows = lambda x: {tuple(r) for r in x.tolist()}  # noqa: E731
    assert not rows(x_val) & rows(x_train) and not rows(x_val) & rows(x_test)
    assert len(check_sets[0]) == TEST == min(TEST, VALIDATION_EXAMPLES)
    # Capped: a large test set does not make a large validation set.
    streams = train_data("token", TASK, N, test_examples=20_000, batch_size=64)
    assert sum(len(y) for _, y in streams.validation) == VALIDATION_EXAMPLES
    # A holdout run validates on its training distribution: no held-out window in it.
    held = train_data("token", TASK, N, test_examples=TEST, batch_size=64, holdout=1)
    x, _ = next(iter(held.validation))
    x = np.asarray(x)
    window = np.stack([x[np.arange(len(x)), 1 + (x[:, 0] + k) % 10] for k in range(2)], 1)
    assert not np.all(window == [0, 1], axis=1).any()  # holdout-1 holds out (0, 1)


def test_a_finished_run_folder_keeps_no_lock(trained):
    out = trained[0]
    assert (out / "record.json").is_file()
    assert not (out / records.RunLock.NAME).exists()


def test_the_lock_is_still_exclusive_while_held(tmp_path):
    with records.RunLock(tmp_path):
        assert (tmp_path / records.RunLock.NAME).is_file()
        with pytest.raises(RunBusy, match="is in use by pid"):
            records.RunLock(tmp_path).__enter__()
    assert not (tmp_path / records.RunLock.NAME).exists()
    with records.RunLock(tmp_path):  # free again
        pass


def test_output_to_a_file_is_one_plain_line_per_epoch(trained):
    out = trained[4]  # verbose="auto", to a stream that is not a terminal
    lines = [line for line in out.splitlines() if line.startswith("Epoch")]
    assert [line.split(" - ")[0] for line in lines] == ["Epoch 1/2", "Epoch 2/2"]
    assert "\x1b" not in out and "\b" not in out and "\r" not in out
    for name in ("loss", "accuracy", "val_accuracy", "test_accuracy", "train_eval_accuracy"):
        assert f" - {name}: " in lines[0]


def test_a_terminal_keeps_the_progress_bar():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert epochs.progress("auto", Terminal()) == ("auto", [])
    verbose, extra = epochs.progress("auto", io.StringIO())
    assert verbose == 0 and isinstance(extra[0], epochs.EpochLines)
    assert epochs.progress(2, io.StringIO()) == (2, [])


def test_a_record_written_before_the_validation_columns_still_writes_and_resumes():
    old = {c: [1.0] for c in records.HISTORY_COLUMNS if c not in records.LATER_COLUMNS}
    assert records.history_csv(old).splitlines()[1].endswith(",,,,")
    padded = records.pad_history(old)
    assert padded["validation_loss"] == [None] and padded["test_loss"] == [1.0]
    assert padded["train_seconds"] == padded["eval_seconds"] == [None]


class Clock(keras.callbacks.Callback):
    """A fake clock for ``training.epochs`` that only moves when told: 1 s per training call,
    100 s per validation batch (``fit``'s evaluation of the validation set)."""

    def __init__(self):
        super().__init__()
        self.now, self.validation_batches = 0.0, []

    def perf_counter(self):
        return self.now

    def on_epoch_begin(self, epoch, logs=None):
        self.validation_batches.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.now += 1.0

    def on_test_batch_end(self, batch, logs=None):
        self.now += 100.0
        self.validation_batches[-1] += 1


def test_the_history_times_the_training_steps_and_the_evaluations_apart(trained):
    _, record, _, clock, _ = trained  # trained with epochs.time the fake clock
    history = record["history"]
    per_call = record["steps_per_execution"]
    calls = record["steps_per_epoch"] // per_call
    assert history["train_seconds"] == [float(calls)] * 2  # the steps, not the validation
    assert history["eval_seconds"] == [100.0 * n for n in clock.validation_batches]
    assert all(n > 0 for n in clock.validation_batches)
    assert history["epoch_seconds"] == [
        t + e for t, e in zip(history["train_seconds"], history["eval_seconds"], strict=True)
    ]
