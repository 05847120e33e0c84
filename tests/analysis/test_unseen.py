"""A task's min-degree interpolator (the symmetric route against the closed form and the
general solver) and the tracker's measures on the unseen points."""

from math import comb

import numpy as np
import pytest

from pvr_keras.analysis import boolean, fourier_tracking
from pvr_keras.analysis.interpolation import leak, min_degree_interpolator
from pvr_keras.analysis.sampled_tracking import sample_points
from pvr_keras.analysis.unseen import (
    expansion_at,
    krawtchouk,
    mdi_expansion,
    seen_mask,
    symmetric_mdi,
    task_mdi,
)
from pvr_keras.tasks import FunctionTask


def test_krawtchouk_is_the_sum_of_the_characters_of_each_degree():
    d = 6
    cube = boolean.boolean_cube(d).astype(np.int64)
    sizes = boolean.subset_sizes(d)
    weight = (cube < 0).sum(axis=1)
    chars = np.array([[np.prod(row[[j for j in range(d) if (s >> j) & 1]]) for s in range(2**d)]
                      for row in cube])  # fmt: skip
    by_degree = np.stack([chars[:, sizes == k].sum(axis=1) for k in range(d + 1)], axis=1)
    np.testing.assert_array_equal(krawtchouk(d)[weight], by_degree)


@pytest.mark.parametrize("d, k", [(6, 2), (9, 4), (15, 6), (15, 10), (16, 3)])
def test_parity_on_a_ball_is_the_closed_form(d, k):
    task = FunctionTask(num_bits=d, target="parity:all", domain=f"ball:{k}")
    weight = boolean.subset_sizes(d)
    closed = np.array([sum(comb(int(h), j) * (-2) ** j for j in range(k + 1)) for h in weight])
    np.testing.assert_allclose(task_mdi(task), closed, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("target", ["majority:all", "min:all", "max:all", "parity:all"])
@pytest.mark.parametrize("k", [1, 3])
def test_the_symmetric_route_equals_the_general_solver(target, k):
    task = FunctionTask(num_bits=7, target=target, domain=f"ball:{k}")
    values = boolean.target_values(task)
    expected = min_degree_interpolator(values, seen_mask(task))
    np.testing.assert_allclose(task_mdi(task), expected, atol=1e-9)


def test_other_tasks_go_through_the_general_solver():
    task = FunctionTask(num_bits=9, target="x0x1", domain="any_of:0,1")
    x = boolean.boolean_cube(9).astype(np.float64)
    np.testing.assert_allclose(task_mdi(task), x[:, 0] + x[:, 1] - 1, atol=1e-9)
    assert seen_mask(FunctionTask(num_bits=3)).all()


def test_symmetric_mdi_bad_input():
    with pytest.raises(ValueError, match="d \\+ 1 = 4 weights"):
        symmetric_mdi(np.zeros(3), np.ones(3, bool), 3)
    with pytest.raises(ValueError, match="one seen"):
        symmetric_mdi(np.zeros(4), np.zeros(4, bool), 3)


def test_tracker_measures_on_the_unseen_points():
    d = 6
    task = FunctionTask(num_bits=d, target="x0x1", domain="any_of:0,1")
    target = boolean.target_values(task)
    mdi = task_mdi(task)
    seen = seen_mask(task)
    rng = np.random.default_rng(0)
    learned = 0.3 * target + 0.7 * mdi + 0.01 * rng.normal(size=target.size)
    found = fourier_tracking.measures(learned, target, (), [3], seen=seen, mdi=mdi)
    unseen = ~seen
    assert found["leak"] == pytest.approx(leak(learned, target, mdi, seen))
    assert found["leak"] == pytest.approx(0.7, abs=0.01)
    assert found["unseen_mse"] == pytest.approx(np.mean((learned - target)[unseen] ** 2))
    assert found["unseen_mse_to_mdi"] == pytest.approx(np.mean((learned - mdi)[unseen] ** 2))
    assert found["seen_mse"] == pytest.approx(np.mean((learned - target)[seen] ** 2))
    assert found["in_distribution_half_mse"] == pytest.approx(found["seen_mse"] / 2)
    np.testing.assert_allclose(found["degree_profile"], boolean.degree_profile(learned))
    # where f is its own MDI on the unseen points, there is no leak to measure
    same = fourier_tracking.measures(learned, mdi, (), [3], seen=seen, mdi=mdi)
    assert same["leak"] is None
    plain = fourier_tracking.measures(learned, target, (0,), [3])
    assert "leak" not in plain


def test_polynomial_targets_go_monomial_by_monomial():
    small = FunctionTask(num_bits=9, target="cyclic:3", domain="any_of:0,1,2")
    expected = min_degree_interpolator(boolean.target_values(small), seen_mask(small))
    np.testing.assert_allclose(task_mdi(small), expected, atol=1e-9)
    # threesym at their d = 15: on x0x1x2 = 1, x0x1 = x2, x1x2 = x0 and x0x2 = x1
    task = FunctionTask(num_bits=15, target="x0x1-1.25x1x2+1.5x0x2", domain="parity:0,1,2")
    x = boolean.boolean_cube(15).astype(np.float64)
    np.testing.assert_allclose(task_mdi(task), x[:, 2] - 1.25 * x[:, 0] + 1.5 * x[:, 1],
                               atol=1e-9)  # fmt: skip


def _rows(x):
    """The cube's rows (``boolean_cube``'s order) of the points x (N, d): row bit j is x_j = -1."""
    return ((np.asarray(x) < 0).astype(np.int64) << np.arange(x.shape[1])).sum(axis=1)


@pytest.mark.parametrize(
    "d, target, domain",
    [(15, "x0x1", "any_of:0,1"), (9, "cyclic:3", "any_of:0,1,2"),
     (8, "x0x1-1.25x1x2+1.5x0x2", "parity:0,1,2"), (7, "x0x1x2+x0x3x4x5", "frozen:0")],
)  # fmt: skip
def test_the_mdi_at_sampled_points_is_the_exact_mdi_at_their_rows(d, target, domain):
    """The expansion's values at points of the cube are the general solver's at those rows (an
    independent route: the whole cube, no expansion), as a sampled tracker uses them."""
    task = FunctionTask(num_bits=d, target=target, domain=domain)
    exact = min_degree_interpolator(boolean.target_values(task), seen_mask(task))
    x = sample_points(d, 500, seed=2)
    np.testing.assert_allclose(expansion_at(mdi_expansion(task), x), exact[_rows(x)], atol=1e-9)
    np.testing.assert_array_equal(task.seen(x), seen_mask(task)[_rows(x)])


def test_the_mdi_expansion_at_40_bits_and_where_there_is_none():
    task = FunctionTask(num_bits=40, target="x0x1", domain="any_of:0,1")
    x = sample_points(40, 1000, seed=3).astype(np.float64)
    np.testing.assert_allclose(expansion_at(mdi_expansion(task), x), x[:, 0] + x[:, 1] - 1,
                               atol=1e-12)  # fmt: skip
    assert mdi_expansion(FunctionTask(num_bits=9, target="x0x1", domain="ball:3")) is None
    assert mdi_expansion(FunctionTask(num_bits=9, target="parity:all", domain="any_of:0")) is None
    with pytest.raises(ValueError, match="shape \\(N, d\\)"):
        expansion_at({(0,): 1.0}, np.ones(3))
