"""tests/stats.py: the uniformity checks reject what they should, at the rates they claim."""

import math

import numpy as np
import pytest

from tests.stats import (
    assert_counts_uniform,
    assert_uniform,
    bincount,
    cell_z_limit,
    check_counts_uniform,
    chi2_critical,
    normal_upper_quantile,
)


def test_values_outside_the_range_fail_whatever_their_spread():
    values = np.arange(100_000) % 10  # perfectly uniform over 0..9
    assert_uniform(values, 10, "digits")
    with pytest.raises(AssertionError, match=r"pointer must be in 0..6; received .*0..9"):
        assert_uniform(values, 7, "restricted pointer")  # bincount alone gave bins 7..9
    with pytest.raises(AssertionError, match=r"in 0..9; received values in -1..9"):
        bincount(np.array([-1, 3, 9]), 10, "x")
    np.testing.assert_array_equal(bincount([0, 2, 2], 4, "x"), [1, 0, 2, 0])


def test_quantiles():
    assert normal_upper_quantile(0.025) == pytest.approx(1.959964, abs=1e-5)
    assert normal_upper_quantile(1e-4) == pytest.approx(3.719016, abs=1e-5)
    # Wilson-Hilferty against tabulated chi-square quantiles (upper 1e-3: df 10, 100).
    assert chi2_critical(10, 1e-3) == pytest.approx(29.588, rel=0.01)
    assert chi2_critical(100, 1e-3) == pytest.approx(149.449, rel=0.005)
    assert cell_z_limit(1000) > cell_z_limit(10) > normal_upper_quantile(1e-4)


def test_one_missing_cell_among_a_thousand_is_caught():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100_000, np.ones(1000) / 1000)
    assert check_counts_uniform(counts) is None
    p = np.ones(1000)
    p[17] = 0.0  # the defect a chi-square alone missed ~95% of the time
    missing = rng.multinomial(100_000, p / p.sum())
    assert "cell 17 has 0" in check_counts_uniform(missing)
    with pytest.raises(AssertionError, match="windows not uniform: cell 17 has 0"):
        assert_counts_uniform(missing, "windows")


def test_a_spread_bias_is_caught_by_the_chi_square():
    rng = np.random.default_rng(1)
    p = 1 + 0.1 * np.sin(np.arange(100))  # +-10% on every cell, no single one extreme
    counts = rng.multinomial(200_000, p / p.sum())
    assert check_counts_uniform(counts).startswith("chi2=")


def test_false_alarm_rate_is_near_the_design():
    rng = np.random.default_rng(2)
    samples = rng.multinomial(2_000, np.ones(50) / 50, size=20_000)  # ~40 per cell
    rate = np.mean([check_counts_uniform(s, p=0.01) is not None for s in samples])
    assert 0.005 < rate < 0.02  # designed at 0.01 (sd of the estimate ~ 0.0007)
    assert math.isclose(rate, 0.01, rel_tol=0.5)
