"""Small statistics helpers for tests (no SciPy dependency)."""

import math

import numpy as np


def chi2_critical(df, z=3.719):
    """Upper chi-square quantile by Wilson-Hilferty; z=3.719 is the 1e-4 upper tail."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


def chi2_uniform(counts):
    """Chi-square statistic of ``counts`` against the uniform distribution, and its df."""
    counts = np.asarray(counts, np.float64)
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum()), counts.size - 1


def assert_uniform(values, num_values, what):
    stat, df = chi2_uniform(np.bincount(np.asarray(values).ravel(), minlength=num_values))
    assert stat < chi2_critical(df), f"{what} not uniform: chi2={stat:.1f}, df={df}"
