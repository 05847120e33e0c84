"""The Boolean PVR rule (Abbe et al. 2022) against a loop-by-loop reading of its definition."""

import itertools

import numpy as np
import pytest

from pvr_keras.tasks import BOOLEAN_AGGREGATIONS, BooleanFunction, BooleanTask, f3
from pvr_keras.tasks.boolean import frozen_bits, frozen_mask


def slow_label(x, p, w, aggregation, mode, value_bits=None):
    """One row at a time, as the issue states it."""
    v = 2**p if value_bits is None else value_bits
    out = []
    for row in x:
        pointer = 0
        for k in range(p):  # most significant first, +1 -> 1, -1 -> 0
            pointer = 2 * pointer + (1 if row[k] == 1 else 0)
        window = []
        for j in range(w):
            q = pointer + j
            if mode == "cyclic":
                window.append(int(row[p + q % v]))
            elif q < v:
                window.append(int(row[p + q]))
        if aggregation == "parity":
            label = 1
            for b in window:
                label *= b
        elif aggregation == "majority":
            total = sum(window)
            label = 1 if total > 0 else (-1 if total < 0 else 0)
        elif aggregation == "min":
            label = min(window)
        else:
            label = max(window)
        out.append(float(label))
    return np.array(out, np.float32)


def random_bits(n, d, seed=0):
    return np.random.default_rng(seed).choice(np.array([-1, 1], np.int8), size=(n, d))


@pytest.mark.parametrize("aggregation", BOOLEAN_AGGREGATIONS)
@pytest.mark.parametrize("mode", ["cyclic", "truncated"])
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_labels_follow_the_definition(aggregation, mode, p):
    for w in sorted({1, 2, 3, 2**p}):
        if w > 2**p:
            continue
        task = BooleanTask(pointer_bits=p, window=w, aggregation=aggregation, window_mode=mode)
        x = random_bits(600, task.num_bits, seed=p * 10 + w)
        np.testing.assert_array_equal(task.label(x), slow_label(x, p, w, aggregation, mode))


def test_every_pointer_is_reached_and_value_bits_can_be_set():
    task = BooleanTask(pointer_bits=2, window=2, aggregation="parity", value_bits=3)
    assert task.num_bits == 5
    x = random_bits(2000, 5, seed=1)
    np.testing.assert_array_equal(task.label(x), slow_label(x, 2, 2, "parity", "cyclic", 3))
    # value_bits=3 with 2 pointer bits: pointers 3 wrap to value bit 0 (cyclic)
    assert set(task.pointer(x)) == {0, 1, 2, 3}


def test_all_minus_one_points_to_value_bit_zero_and_f3_is_the_papers():
    task = f3()
    assert (task.pointer_bits, task.window, task.aggregation, task.window_mode) == (
        3, 3, "majority", "truncated"
    )  # fmt: skip
    assert task.num_bits == 11
    x = -np.ones((1, 11), np.int8)
    x[0, 3:6] = (1, 1, -1)  # value bits 0..2
    assert task.pointer(x).tolist() == [0]
    assert task.label(x).tolist() == [1.0]
    # pointer 111 -> value bit 7, a truncated window of one bit
    x[0, :3] = 1
    x[0, 10] = -1
    assert task.pointer(x).tolist() == [7]
    assert task.label(x).tolist() == [-1.0]


def test_majority_ties_give_zero():
    task = BooleanTask(pointer_bits=1, window=2, aggregation="majority")
    x = np.array([[-1, 1, -1]], np.int8)
    assert task.label(x).tolist() == [0.0]


def test_fourier_functions_subsets_and_the_staircase():
    x = random_bits(500, 6, seed=2).astype(np.int64)
    f = BooleanFunction.fourier(6, {(0, 1): 1.0, (2, 4, 5): -1.25, (): 0.5})
    np.testing.assert_allclose(
        f.label(x), x[:, 0] * x[:, 1] - 1.25 * x[:, 2] * x[:, 4] * x[:, 5] + 0.5, rtol=1e-6
    )
    parity = BooleanFunction.of_subset(6, (1, 3))
    np.testing.assert_array_equal(parity.label(x), x[:, 1] * x[:, 3])
    majority = BooleanFunction.of_subset(6, (0, 2, 5), "majority")
    np.testing.assert_array_equal(majority.label(x), np.sign(x[:, [0, 2, 5]].sum(axis=1)))
    stairs = BooleanFunction.staircase(6, 3)
    expected = x[:, 0] + x[:, 0] * x[:, 1] + x[:, 0] * x[:, 1] * x[:, 2]
    np.testing.assert_array_equal(stairs.label(x), expected)
    assert stairs.num_bits == 6


def test_frozen_mask_round_trips():
    for bits in [(), (0,), (3, 7), (10,)]:
        assert frozen_bits(frozen_mask(bits, 11), 11) == tuple(sorted(bits))
    assert frozen_mask((0, 2), 3) == 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pointer_bits": 0}, "pointer_bits must be a positive integer"),
        ({"pointer_bits": 2.0}, "pointer_bits must be a positive integer; received 2.0"),
        ({"pointer_bits": 2, "window": 0}, "window must be a positive integer"),
        ({"pointer_bits": 2, "window": 5}, "window must be between 1 and the 4 value bits"),
        ({"pointer_bits": 2, "value_bits": 2, "window": 3}, "between 1 and the 2 value bits"),
        ({"aggregation": "mod_sum"}, "aggregation must be one of parity, majority, min, max"),
        ({"window_mode": "wrap"}, "window_mode must be one of cyclic, truncated"),
        ({"pointer_bits": 6}, "at most 62 bits"),
        ({"value_bits": 0}, "value_bits must be a positive integer"),
    ],
)
def test_bad_tasks_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BooleanTask(**kwargs)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: BooleanFunction.of_subset(4, (1, 1)), "bits must be distinct"),
        (lambda: BooleanFunction.of_subset(4, (4,)), r"in 0\.\.3"),
        (lambda: BooleanFunction.of_subset(4, ()), "at least one bit"),
        (lambda: BooleanFunction.of_subset(4, (0,), "median"), "aggregation must be one of"),
        (lambda: BooleanFunction.fourier(3, {(0, 5): 1.0}), r"in 0\.\.2"),
        (lambda: BooleanFunction(3), "give a Fourier expansion"),
        (lambda: frozen_mask((11,), 11), r"frozen bits must be in 0\.\.10"),
        (lambda: frozen_mask((2, 2), 11), "frozen bits must be distinct"),
        (lambda: frozen_mask((-1,), 11), "frozen bit must be a non-negative integer"),
        (lambda: frozen_bits(2**11, 11), r"must be in 0\.\.2\*\*11 - 1"),
        (lambda: frozen_bits(1.5, 11), "must be an integer"),
    ],
)
def test_bad_functions_and_frozen_bits_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_labels_refuse_what_is_not_bits():
    task = f3()
    with pytest.raises(ValueError, match=r"shape \(N, 11\)"):
        task.label(np.ones((3, 10), np.int8))
    with pytest.raises(ValueError, match=r"bits must be \+1 or -1; received values such as \[0\]"):
        task.label(np.zeros((3, 11), np.int8))


def test_the_whole_cube_of_a_small_task_matches():
    task = BooleanTask(pointer_bits=2, window=3, aggregation="min", window_mode="truncated")
    cube = np.array(list(itertools.product([1, -1], repeat=task.num_bits)), np.int8)
    np.testing.assert_array_equal(task.label(cube), slow_label(cube, 2, 3, "min", "truncated"))
