"""analysis.hops: a chain test set's counts by hop count against a loop by hand, and their
summary over seeds."""

import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.analysis import hops
from pvr_keras.tasks import ChainTask


def test_counts_by_hop_count_are_those_of_a_loop_over_the_examples():
    task = ChainTask(length=12, hops=(1, 2), test_hops=(1, 2, 3, 4, 5))
    x, y = data.chain_arrays(task, 3000, split="test", seed=4)
    rng = np.random.default_rng(0)
    predicted = np.where(rng.random(len(y)) < 0.4, y, rng.integers(0, 12, len(y)))
    row = hops.hop_counts(task.count_hops(x), y, predicted, task.split_hops("test"))
    assert row["hops"] == [1, 2, 3, 4, 5]
    for i, k in enumerate(row["hops"]):
        mine = [j for j in range(len(x)) if len(task.chain(x[j : j + 1])[0]) == k]
        assert row["examples"][i] == len(mine) > 0
        assert row["correct"][i] == sum(predicted[j] == y[j] for j in mine)
        assert row["majority"][i] == max(np.bincount(y[mine]))
    assert sum(row["examples"]) == len(x)
    assert sum(row["correct"]) == (predicted == y).sum()
    # The label is uniform in 0..p_k: its most frequent class covers less with more hops.
    shares = hops.accuracies(row, "majority")
    assert shares[0] > shares[-1]


def test_a_hop_count_without_examples_has_no_accuracy():
    row = hops.hop_counts([1, 1], [0, 2], [0, 1], values=(1, 2))
    assert row == {"hops": [1, 2], "examples": [2, 0], "correct": [1, 0], "majority": [1, 0]}
    assert hops.accuracies(row) == [0.5, None]
    with pytest.raises(ValueError, match="one entry per example"):
        hops.hop_counts([1, 2], [0], [0, 1])


def test_summary_is_the_mean_min_and_max_over_seeds():
    def row(label, examples, correct):
        return {"label": label, "hops": [1, 2], "examples": examples, "correct": correct,
                "majority": [1, 1]}  # fmt: skip

    rows = [row("a", [10, 10], [10, 2]), row("a", [20, 5], [10, 5]), row("b", [4, 0], [1, 0])]
    a, b = hops.summarise(rows)
    assert (a["label"], a["seeds"], a["hops"]) == ("a", 2, [1, 2])
    assert a["mean"] == pytest.approx([0.75, 0.6]) and a["min"] == [0.5, 0.2]
    assert a["max"] == [1.0, 1.0]
    assert (b["seeds"], b["mean"], b["min"]) == (1, [0.25, None], [0.25, None])


def test_the_majority_class_is_pooled_over_the_test_sets_of_distinct_seeds():
    def row(seed, examples, majority):
        return {"seed": seed, "hops": [1, 2], "examples": examples, "majority": majority}

    # Two runs of seed 0 share their test set: it counts once.
    rows = [row(0, [10, 10], [5, 2]), row(0, [10, 10], [5, 2]), row(1, [30, 0], [3, 0])]
    assert hops.majority(rows) == {"hops": [1, 2], "values": [0.2, 0.2]}
    assert hops.majority([row(1, [30, 0], [3, 0])])["values"] == [0.1, None]
    assert hops.majority([]) is None
