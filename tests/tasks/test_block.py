"""BlockTask: the pointer rule of Figure 3, larger grids, windows, holdout classes, validation."""

import collections

import numpy as np
import pytest

from pvr_keras.tasks import AGGREGATIONS, BlockTask


def _slow_label(task, cells):
    """Reads like the paper: find the range holding the pointer digit, walk the value cells."""
    value_cells = list(range(1, task.grid * task.grid))  # row-major, cell 0 is the pointer
    ranges = task.pointer_ranges
    named = next(k for k, digits in enumerate(ranges) if cells[0] in digits)
    window = [cells[value_cells[(named + j) % len(value_cells)]] for j in range(task.window)]
    if task.aggregation == "mod_sum":
        return sum(window) % 10
    if task.aggregation == "median":
        return sorted(window)[(len(window) - 1) // 2]
    if task.aggregation == "maj_vote":
        counts = collections.Counter(window)
        return min(v for v in counts if counts[v] == max(counts.values()))
    return min(window) if task.aggregation == "min" else max(window)


def test_figure3_rule_for_2x2():
    task = BlockTask()
    assert task.pointer_ranges == ((0, 1, 2, 3), (4, 5, 6), (7, 8, 9))
    # top right = cell 1, bottom left = cell 2, bottom right = cell 3
    assert task.named_cell(np.arange(10)).tolist() == [1, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    cells = np.array([[0, 5, 6, 7], [3, 5, 6, 7], [4, 5, 6, 7], [6, 5, 6, 7], [7, 5, 6, 7]])
    assert task.label(cells).tolist() == [5, 5, 6, 6, 7]


@pytest.mark.parametrize("grid", [2, 3])
def test_pointer_ranges_are_contiguous_and_even(grid):
    task = BlockTask(grid=grid)
    ranges = task.pointer_ranges
    assert len(ranges) == grid * grid - 1
    assert [d for r in ranges for d in r] == list(range(10))  # contiguous, in order, complete
    sizes = [len(r) for r in ranges]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    if grid == 3:
        assert ranges == ((0, 1), (2, 3), (4,), (5,), (6,), (7,), (8,), (9,))


@pytest.mark.parametrize("grid", [2, 3])
@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_label_matches_slow_reference(grid, aggregation):
    rng = np.random.default_rng(grid)
    for window in range(1, grid * grid):
        task = BlockTask(grid=grid, window=window, aggregation=aggregation)
        cells = rng.integers(0, 10, size=(300, grid * grid))
        expected = [_slow_label(task, row.tolist()) for row in cells]
        assert task.label(cells).tolist() == expected


def test_window_wraps_over_value_cells():
    task = BlockTask(grid=2, window=3)
    assert task.window_cells(np.array([0, 4, 7])).tolist() == [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
    assert task.complexity == 2


def test_shapes_and_channels():
    assert BlockTask().image_shape == (80, 80, 1)
    assert BlockTask(values="cifar10", cell=32).image_shape == (64, 64, 3)
    assert BlockTask(grid=3, cell=28).image_shape == (84, 84, 1)
    assert BlockTask(values="cifar10").pointer_source == "mnist"
    assert BlockTask().num_classes == 10


def test_holdout_classes_are_figure6():
    task = BlockTask()
    assert task.holdout_classes() == ((1, 2, 3), (4, 5, 6), (7, 8, 9, 0))
    assert task.check_holdout(True) is True and task.check_holdout(False) is False


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"grid": 1}, "grid must be an integer >= 2"),
        ({"grid": 4}, "grid must be 2 or 3"),
        ({"grid": 2.0}, "grid must be an integer"),
        ({"grid": True}, "grid must be an integer"),
        ({"cell": 27}, "cell must be at least the mnist image size 28"),
        ({"cell": 31, "values": "cifar10"}, "cell must be at least the cifar10 image size 32"),
        ({"values": "svhn"}, "values must be one of mnist, cifar10"),
        ({"window": 0}, "window must be a positive integer"),
        ({"window": 4}, "window must be between 1 and the number of value cells"),
        ({"aggregation": "sum"}, "aggregation must be one of"),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BlockTask(**kwargs)


def test_pointer_cannot_be_chosen():
    with pytest.raises(TypeError):
        BlockTask(pointer="cifar10")


def test_bad_label_inputs():
    task = BlockTask()
    with pytest.raises(ValueError, match=r"shape \(N, grid\*grid=4\)"):
        task.label(np.zeros((3, 9), int))
    with pytest.raises(ValueError, match="cell classes must be in 0..9"):
        task.label(np.full((3, 4), 10))
    with pytest.raises(ValueError, match="pointer digits must be in 0..9"):
        task.named_cell([-1])


def test_bad_holdout():
    with pytest.raises(ValueError, match="holdout must be True or False"):
        BlockTask().check_holdout(1)
    with pytest.raises(ValueError, match="2x2 grids only"):
        BlockTask(grid=3).check_holdout(True)
    with pytest.raises(ValueError, match="2x2 grids only"):
        BlockTask(grid=3).holdout_classes()
