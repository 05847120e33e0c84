"""The learning curves of a run and of several seeds: whole-epoch ticks, the validation curve
where the run had a validation set (read back from the matplotlib axes)."""

import pytest

from pvr_keras.figures import curves
from tests.plots import assert_plot, keep_figures


@pytest.fixture
def drawn(monkeypatch):
    """The figures the module saves, kept to be read back (and still saved)."""
    return keep_figures(monkeypatch, curves)


def history(epochs=3, validation=True):
    """A record's history (``records.HISTORY_COLUMNS``); ``validation``: True (measured),
    False (a run without a validation set: its columns hold None) or None (a record written
    before the columns existed: they are absent)."""
    found = {"epoch": list(range(1, epochs + 1))}
    for key in ("train_accuracy", "train_eval_accuracy", "test_accuracy"):
        found[key] = [0.2 + 0.1 * i for i in range(epochs)]
    for key in ("train_loss", "test_loss"):
        found[key] = [2.0 / (i + 1) for i in range(epochs)]
    if validation is not None:
        found["validation_accuracy"] = [0.3 + 0.1 * i if validation else None
                                        for i in range(epochs)]  # fmt: skip
        found["validation_loss"] = [1.5 / (i + 1) if validation else None for i in range(epochs)]
    return found


def _ticks_are_whole(ax):
    ticks = ax.get_xticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks), list(ticks)


def _labels(ax):
    return [line.get_label() for line in ax.get_lines()]


@pytest.mark.parametrize("epochs", [1, 3, 7])
def test_epoch_ticks_are_whole_numbers(drawn, tmp_path, epochs):
    # A 3-epoch run was drawn with ticks at 1.00, 1.25, 1.50, ...
    curves.learning_curve(history(epochs), tmp_path / "c.png", "run")
    for ax in drawn[0].axes:
        _ticks_are_whole(ax)
        # one epoch is a point: a line without a marker would draw nothing
        assert all((line.get_marker() == "o") == (epochs == 1) for line in ax.get_lines())
    assert_plot(tmp_path / "c.png")


def test_the_validation_curve_is_drawn_where_the_run_has_one(drawn, tmp_path):
    curves.learning_curve(history(validation=True), tmp_path / "c.png")
    acc, loss = drawn[0].axes
    assert _labels(acc) == ["train (running, during epoch)", "train (evaluated after epoch)",
                            "test", "validation"]  # fmt: skip
    assert _labels(loss) == ["train", "test", "validation"]
    assert list(acc.get_lines()[-1].get_ydata()) == pytest.approx([0.3, 0.4, 0.5])
    assert list(loss.get_lines()[-1].get_ydata()) == pytest.approx([1.5, 0.75, 0.5])


@pytest.mark.parametrize("validation", [False, None], ids=["none-measured", "older-record"])
def test_no_validation_curve_without_a_validation_set(drawn, tmp_path, validation):
    curves.learning_curve(history(validation=validation), tmp_path / "c.png")
    acc, loss = drawn[0].axes
    assert "validation" not in _labels(acc) + _labels(loss)
    assert _labels(loss) == ["train", "test"]
    assert_plot(tmp_path / "c.png")


def test_the_seeds_curves_have_whole_epoch_ticks(drawn, tmp_path):
    runs = {seed: {"epoch": [1, 2, 3], "train": [0.2, 0.5, 0.9], "test": [0.1, 0.3, 0.4]}
            for seed in (1, 2)}  # fmt: skip
    speeds = {1: ("fast", 3), 2: ("slow", None)}
    curves.fast_slow_curves(runs, speeds, tmp_path / "f.png", threshold=0.9)
    for ax in drawn[0].axes:
        _ticks_are_whole(ax)


def test_the_loss_axis_names_the_runs_loss(drawn, tmp_path):
    # A Boolean or GOTU run trains on mean squared error, not cross-entropy.
    curves.learning_curve(history(), tmp_path / "c.png", "classes")
    curves.learning_curve(history(), tmp_path / "r.png", "regression", metric="mse")
    assert drawn[0].axes[1].get_ylabel() == "cross-entropy"
    assert drawn[1].axes[1].get_ylabel() == "mean squared error"
