"""Small statistics helpers for tests (no SciPy dependency).

Each uniformity check fails with probability about ``FALSE_ALARM`` (1e-4) on a sample that is
exactly what it claims, and with certainty on a value outside the claimed range. It combines
two tests that catch different defects:

- a chi-square over all cells (many small deviations, e.g. a biased hash), and
- a per-cell z-test (on Anscombe's square-root scale) with a Bonferroni bound (one cell
  wrong: a value never drawn, a window drawn twice as often). A chi-square alone is weak
  against one bad cell among many: with ~1000 cells a never-drawn one adds about its expected
  count to a statistic whose noise is sqrt(2 * 1000) ~ 45 around 1000, so it was caught ~5%
  of the time.

The power each test has (the smallest defect it catches with >= 99% probability) is
measured by ``tools/probes/stats_power.py`` and noted beside the test.
"""

import math

import numpy as np

FALSE_ALARM = 1e-4


def normal_upper_quantile(p):
    """z with P(Z > z) = p for a standard normal Z (bisection on erfc; 0 < p < 0.5)."""
    if not 0 < p < 0.5:
        raise ValueError(f"p must be in (0, 0.5); received {p}")
    low, high = 0.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if 0.5 * math.erfc(mid / math.sqrt(2)) > p else (low, mid)
    return (low + high) / 2


def chi2_critical(df, p=FALSE_ALARM):
    """Upper-``p`` chi-square quantile by Wilson-Hilferty (accurate to ~1% for df >= 3)."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + normal_upper_quantile(p) * math.sqrt(a)) ** 3


def chi2_uniform(counts):
    """Chi-square statistic of ``counts`` against the uniform distribution, and its df."""
    counts = np.asarray(counts, np.float64)
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum()), counts.size - 1


def cell_z_limit(num_cells, p=FALSE_ALARM):
    """|z| bound of the per-cell test: two-sided, Bonferroni over ``num_cells``, using half of
    the false-alarm budget ``p`` (the chi-square has the other half)."""
    return normal_upper_quantile(p / (4 * num_cells))


def bincount(values, num_values, what):
    """``np.bincount`` of ``values`` over exactly ``0..num_values-1``.

    Raises:
        AssertionError: a value is outside ``0..num_values-1`` (``np.bincount`` would just
            add bins for it, and a uniformity test of the first ``num_values`` could pass).
    """
    values = np.asarray(values).ravel()
    if values.size and (values.min() < 0 or values.max() >= num_values):
        raise AssertionError(
            f"{what} must be in 0..{num_values - 1}; received values in "
            f"{values.min()}..{values.max()}"
        )
    return np.bincount(values, minlength=num_values)


def check_counts_uniform(counts, p=FALSE_ALARM):
    """None if ``counts`` pass both tests (chi-square and per-cell z) at level ``p``, else a
    message saying which failed and why."""
    counts = np.asarray(counts, np.float64)
    k = counts.size
    if k < 2:
        raise ValueError(f"a uniformity test needs at least 2 cells; received {k}")
    stat, df = chi2_uniform(counts)
    limit = chi2_critical(df, p / 2)
    if not stat < limit:
        return f"chi2={stat:.1f} >= {limit:.1f} (df={df})"
    expected = counts.sum() / k
    # Anscombe's transform: 2 sqrt(count + 3/8) is nearly normal with unit variance (times the
    # binomial factor) even at ~50 per cell, where the plain z's upper tail is ~3x too heavy.
    z = (2 * np.sqrt(counts + 3 / 8) - 2 * math.sqrt(expected + 1 / 8)) / math.sqrt(1 - 1 / k)
    worst = int(np.argmax(np.abs(z)))
    z_limit = cell_z_limit(k, p)
    if not abs(z[worst]) < z_limit:
        return (
            f"cell {worst} has {int(counts[worst])}, expected {expected:.1f} "
            f"(|z|={abs(z[worst]):.1f} >= {z_limit:.2f})"
        )
    return None


def assert_counts_uniform(counts, what):
    """Asserts that ``counts`` (one count per cell) are a uniform multinomial sample."""
    problem = check_counts_uniform(counts)
    assert problem is None, f"{what} not uniform: {problem}"


def assert_uniform(values, num_values, what):
    """Asserts that ``values`` are uniform over ``0..num_values-1`` and never outside it."""
    assert_counts_uniform(bincount(values, num_values, what), what)
