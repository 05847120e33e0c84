import itertools

import numpy as np
import pytest

from pvr_keras.tasks import AGGREGATIONS, TokenTask


def slow_label(task, row):
    """The rule read straight off the paper, one example at a time."""
    pointer = row[0] if task.pointer else 0
    values = list(row[1:])
    window = [values[(pointer + j) % len(values)] for j in range(task.window)]
    if task.aggregation == "mod_sum":
        return sum(window) % task.num_values
    if task.aggregation == "median":
        return sorted(window)[(len(window) - 1) // 2]
    if task.aggregation == "maj_vote":
        best = max(window.count(v) for v in window)
        return min(v for v in window if window.count(v) == best)
    return min(window) if task.aggregation == "min" else max(window)


def test_figure1_example():
    # Pointer 3 directs us to the fifth position from the left, of value 6 (Figure 1).
    x = np.array([[3, 2, 7, 1, 6, 0, 9, 4, 4, 8, 5]])
    assert TokenTask().label(x).tolist() == [6]


@pytest.mark.parametrize(
    "kwargs, row, expected",
    [
        (dict(window=3), [8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], (8 + 9 + 0) % 10),  # wraps around
        (dict(window=2, aggregation="mod_sum"), [0, 7, 5, 0, 0, 0, 0, 0, 0, 0, 0], 2),
        (dict(window=4, aggregation="median"), [0, 3, 1, 4, 1, 9, 9, 9, 9, 9, 9], 1),
        (dict(window=3, aggregation="median"), [2, 0, 0, 7, 1, 5, 0, 0, 0, 0, 0], 5),
        (dict(window=4, aggregation="maj_vote"), [0, 5, 2, 5, 2, 0, 0, 0, 0, 0, 0], 2),
        (dict(window=3, aggregation="maj_vote"), [0, 9, 4, 9, 1, 1, 1, 1, 1, 1, 1], 9),
        (dict(window=3, aggregation="maj_vote"), [0, 7, 3, 5, 1, 1, 1, 1, 1, 1, 1], 3),
        (dict(window=2, aggregation="min"), [9, 4, 0, 0, 0, 0, 0, 0, 0, 0, 6], 4),
        (dict(window=2, aggregation="max"), [9, 4, 0, 0, 0, 0, 0, 0, 0, 0, 6], 6),
        (dict(window=1, pointer=False), [7, 3, 1, 1, 1, 1, 1, 1, 8, 1, 1], 3),
    ],
)
def test_label_hand_worked(kwargs, row, expected):
    assert TokenTask(**kwargs).label(np.array([row])).tolist() == [expected]


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
@pytest.mark.parametrize("window", [1, 2, 3, 4, 7])
def test_label_matches_slow_reference(aggregation, window):
    task = TokenTask(window=window, aggregation=aggregation)
    x = np.random.default_rng(window).integers(0, 10, size=(500, 11))
    assert task.label(x).tolist() == [slow_label(task, row) for row in x.tolist()]


def test_properties():
    task = TokenTask(window=3, window_mode="restricted")
    assert task.num_positions == 10 and task.complexity == 2 and task.pointer_values == 8
    assert TokenTask(window=3).pointer_values == 10
    assert TokenTask(pointer=False).pointer_values == 1


def test_holdout_tuples_are_first_permutations():
    task = TokenTask(window=3)
    assert task.holdout_tuples(0).shape == (0, 3)
    assert task.holdout_tuples(1).tolist() == [[0, 1, 2]]
    expected = [list(p) for p in itertools.permutations(range(3))]
    assert task.holdout_tuples(6).tolist() == expected


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(window=0), "window must be a positive integer; received 0"),
        (dict(window=11), "window must be between 1 and .* received 11"),
        (dict(aggregation="sum"), "aggregation must be one of mod_sum, median, maj_vote, min, max"),
        (
            dict(window_mode="wrap"),
            "window_mode must be one of cyclic, restricted; received 'wrap'",
        ),
        (dict(seq_len=1), "seq_len must be an integer >= 2; received 1"),
        (dict(num_values=1), "num_values must be an integer >= 2; received 1"),
        (dict(seq_len=2.5), "seq_len must be an integer"),
        (dict(num_values=5), "cannot address all 10 value positions"),
        (dict(pointer="yes"), "pointer must be True or False"),
        (
            dict(num_values=2**33, pointer=False),
            r"num_values must be <= 2147483647 \(tokens are int32\)",
        ),
    ],
)
def test_bad_task_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TokenTask(**kwargs)


def test_bad_holdout_and_inputs():
    task = TokenTask(window=2)
    with pytest.raises(ValueError, match=r"holdout must be in 0..window! = 0..2 .* received 3"):
        task.check_holdout(3)
    with pytest.raises(ValueError, match="received -1"):
        task.check_holdout(-1)
    with pytest.raises(ValueError, match=r"shape \(N, seq_len=11\); received shape \(3, 5\)"):
        task.label(np.zeros((3, 5), int))
    with pytest.raises(ValueError, match=r"tokens must be in 0..9; received values in 0..10"):
        task.label(np.array([[0] * 10 + [10]]))
    # Holdout draws a window as one integer below num_values**window: at most 2**53.
    with pytest.raises(ValueError, match=r"num_values\*\*window <= 2\*\*53.* 1000\*\*7"):
        TokenTask(num_values=1000, window=7).check_holdout(1)


@pytest.mark.parametrize(
    "x, message",
    [
        ([[1.7] * 11], r"tokens must be whole numbers; received values such as \[1.7"),
        ([[np.nan] * 11], "tokens must be whole numbers"),
        ([[np.inf] * 11], "tokens must be whole numbers"),
        ([["a"] * 11], "tokens must be integers"),
        ([[True] * 11], "tokens must be integers"),
        ([[-1] + [0] * 10], r"tokens must be in 0..9; received values in -1..0"),
    ],
)
def test_label_refuses_tokens_that_are_not_whole_numbers_in_range(x, message):
    with pytest.raises(ValueError, match=message):
        TokenTask().label(np.array(x))


def test_label_reads_floats_of_whole_numbers_as_they_are():
    x = np.array([[3, 2, 7, 1, 6, 0, 9, 4, 4, 8, 5]])
    assert TokenTask().label(x.astype(float)).tolist() == TokenTask().label(x).tolist() == [6]
