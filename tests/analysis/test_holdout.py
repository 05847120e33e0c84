"""analysis.held_out_summary against a per-example count by hand."""

import numpy as np
import pytest

from pvr_keras import analysis, data
from pvr_keras.tasks import TokenTask


def test_summary_counts_what_the_examples_hold():
    task = TokenTask(window=2)
    x, y = data.token_arrays(task, 2000, split="test", holdout=2, seed=3)
    xt, yt = data.token_arrays(task, 5000, split="train", holdout=2, seed=3)
    rng = np.random.default_rng(0)
    predicted = np.where(rng.random(len(y)) < 0.3, y, rng.integers(0, 10, len(y)))
    summary = analysis.held_out_summary(task, 2, x, y, predicted, xt, yt)
    assert summary["accuracy"] == pytest.approx((predicted == y).mean())
    assert [r["tuple"] for r in summary["tuples"]] == [[0, 1], [1, 0]]
    for row in summary["tuples"]:
        t = row["tuple"]
        rows = [i for i in range(len(x)) if [x[i, 1 + (x[i, 0] + j) % 10] for j in (0, 1)] == t]
        assert row["count"] == len(rows) and row["label"] == 1  # (0 + 1) mod 10
        assert row["predicted_counts"] == np.bincount(predicted[rows], minlength=10).tolist()
        assert row["accuracy"] == pytest.approx(np.mean(predicted[rows] == 1))
        # Both orders held out: training never shows label 1 with a 0 or a 1 in the window.
        assert row["train_rate_given_digit_anywhere"] == [0.0, 0.0]
        windows = analysis.windows_of(task, xt)
        for j in (0, 1):
            expected = np.mean(yt[windows[:, j] == t[j]] == 1)
            assert row["train_rate_given_digit"][j] == pytest.approx(expected)
        assert row["train_rate"] == pytest.approx((yt == 1).mean())
    assert sum(r["count"] for r in summary["tuples"]) == len(x)


def test_one_held_out_order_leaves_the_label_beside_the_digits():
    task = TokenTask(window=2)
    x, y = data.token_arrays(task, 500, split="test", holdout=1, seed=0)
    xt, yt = data.token_arrays(task, 20_000, split="train", holdout=1, seed=0)
    [row] = analysis.held_out_summary(task, 1, x, y, y, xt, yt)["tuples"]
    # (1, 0) is still trained on: label 1 comes with a 0 and a 1 in the window (not in the
    # places they hold in (0, 1): there the rate is 0, as with both orders held out).
    assert row["tuple"] == [0, 1] and row["accuracy"] == 1.0
    assert row["train_rate_given_digit"] == [0.0, 0.0]
    assert min(row["train_rate_given_digit_anywhere"]) > 0.02


def test_bad_arguments():
    task = TokenTask(window=2)
    x, y = data.token_arrays(task, 10, split="test", holdout=1)
    with pytest.raises(ValueError, match="holdout must be >= 1"):
        analysis.held_out_summary(task, 0, x, y, y, x, y)
    with pytest.raises(ValueError, match="one row per example"):
        analysis.held_out_summary(task, 1, x, y, y[:5], x, y)
