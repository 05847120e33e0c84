"""The min-degree interpolator: the closed forms of Abbe et al. (2023), a slow reference that
minimises the degree profile over every interpolant by a null-space parametrisation, and its
defining property against random other interpolants."""

from math import comb

import numpy as np
import pytest

from pvr_keras.analysis import boolean_cube, degree_profile, interpolation
from pvr_keras.analysis.interpolation import (
    characters,
    leak,
    min_degree_interpolator,
    relevant_bits,
)


def test_two_bit_product_on_the_or_domain():
    x = boolean_cube(2)
    seen = (x[:, 0] == 1) | (x[:, 1] == 1)
    g = min_degree_interpolator(x[:, 0] * x[:, 1], seen)
    np.testing.assert_allclose(g, x[:, 0] + x[:, 1] - 1.0, atol=1e-9)  # -3 at (-1, -1)


@pytest.mark.parametrize("d,k", [(4, 1), (5, 2), (6, 2), (6, 3)])
def test_parity_on_a_hamming_ball(d, k):
    x = boolean_cube(d)
    h = (x == -1).sum(axis=1)
    g = min_degree_interpolator(np.prod(x, axis=1), h <= k)
    expected = np.array([sum(comb(int(n), j) * (-2) ** j for j in range(k + 1)) for n in h])
    np.testing.assert_allclose(g, expected, atol=1e-8)


def test_frozen_bit_drops_it_from_every_monomial():
    x = boolean_cube(6).astype(float)
    f = x[:, 0] * x[:, 1] * x[:, 2] + x[:, 0] * x[:, 3] * x[:, 4] * x[:, 5]
    g = min_degree_interpolator(f, x[:, 0] == 1)
    np.testing.assert_allclose(g, x[:, 1] * x[:, 2] + x[:, 3] * x[:, 4] * x[:, 5], atol=1e-9)


def _slow_mdi(values, seen):
    """Every interpolant is c0 + N z (N: a basis of the characters' null space on the seen
    points); minimise W^d, then W^(d-1), ..., shrinking the free directions each time."""
    d = values.size.bit_length() - 1
    chars = characters(d)
    on_seen = chars[seen]
    c = np.linalg.lstsq(on_seen, values[seen], rcond=None)[0]
    _, s, vt = np.linalg.svd(on_seen)
    free = vt[(s > 1e-9).sum() :].T  # null space of on_seen
    degree = np.array([bin(i).count("1") for i in range(values.size)])
    for k in range(d, -1, -1):
        if free.shape[1] == 0:
            break
        rows = degree == k
        z = np.linalg.lstsq(free[rows], -c[rows], rcond=None)[0]
        c = c + free @ z
        _, s, vt = np.linalg.svd(free[rows])
        free = free @ vt[(s > 1e-9).sum() :].T
    return chars @ c


def _lexicographically_below(a, b, tol=1e-7):
    for u, v in zip(a[::-1], b[::-1], strict=True):  # W^d first
        if u < v - tol:
            return True
        if u > v + tol:
            return False
    return True  # equal within tol


@pytest.mark.parametrize("seed", range(6))
def test_random_functions_and_domains_match_the_slow_reference(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6))
    values = rng.normal(size=2**d)
    seen = rng.random(2**d) < rng.uniform(0.3, 0.9)
    seen[rng.integers(2**d)] = True
    g = min_degree_interpolator(values, seen)
    np.testing.assert_allclose(g[seen], values[seen], atol=1e-8)  # it interpolates
    np.testing.assert_allclose(g, _slow_mdi(values, seen), atol=1e-7)
    # No other interpolant has a smaller degree profile: try random ones.
    chars = characters(d)
    for _ in range(20):
        other = g.copy()
        other[~seen] += rng.normal(size=(~seen).sum())
        assert _lexicographically_below(degree_profile(g), degree_profile(other))
    assert chars.shape == (2**d, 2**d)


def test_the_leak_is_one_at_the_mdi_and_zero_at_the_truth():
    x = boolean_cube(3).astype(float)
    f, seen = x[:, 0] * x[:, 1], x[:, 2] == 1
    seen = (x[:, 0] == 1) | (x[:, 1] == 1)
    mdi = min_degree_interpolator(f, seen)
    assert leak(mdi, f, mdi, seen) == pytest.approx(1.0)
    assert leak(f, f, mdi, seen) == pytest.approx(0.0)
    assert leak((f + mdi) / 2, f, mdi, seen) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "values,seen,match",
    [
        (np.zeros(3), np.ones(3, bool), "length 2\\*\\*d"),
        (np.zeros(4), np.ones(3, bool), "shape \\(4,\\)"),
        (np.zeros(4), np.ones(4, int), "boolean mask"),
        (np.zeros(4), np.zeros(4, bool), "no point"),
        (np.random.default_rng(0).normal(size=2**11), np.ones(2**11, bool), "at most 10 bits"),
    ],
)
def test_bad_input_is_refused(values, seen, match):
    with pytest.raises(ValueError, match=match):
        min_degree_interpolator(values, seen)


def test_leak_needs_an_unseen_point_where_f_and_the_mdi_differ():
    x = boolean_cube(2).astype(float)
    with pytest.raises(ValueError, match="no unseen point"):
        leak(x[:, 0], x[:, 0], x[:, 0], np.ones(4, bool))
    with pytest.raises(ValueError, match="equals its min-degree interpolator"):
        leak(x[:, 0], x[:, 0], x[:, 0], x[:, 0] == 1)


def test_bits_nothing_depends_on_are_left_out():
    """The frozen-bit example inside a 14-bit cube (8 bits f and the domain ignore), solved on
    its 6 relevant bits; and a random function on 4 of 9 bits equals the full 9-bit solve."""
    x = boolean_cube(14).astype(float)
    f = x[:, 0] * x[:, 1] * x[:, 2] + x[:, 0] * x[:, 3] * x[:, 4] * x[:, 5]
    seen = x[:, 0] == 1
    assert relevant_bits(f, seen) == [0, 1, 2, 3, 4, 5]
    g = min_degree_interpolator(f, seen)
    np.testing.assert_allclose(g, x[:, 1] * x[:, 2] + x[:, 3] * x[:, 4] * x[:, 5], atol=1e-9)
    rng = np.random.default_rng(7)
    small = boolean_cube(9)
    bits = [1, 4, 6, 8]
    index = sum(((small[:, b] == -1).astype(int) << i) for i, b in enumerate(bits))
    values = rng.normal(size=16)[index]
    seen_small = rng.random(16) < 0.6
    seen_small[0] = True
    seen = seen_small[index]
    assert relevant_bits(values, seen) == bits
    np.testing.assert_allclose(
        min_degree_interpolator(values, seen), interpolation._exact(values, seen, 9), atol=1e-8
    )
    # Nothing relevant: a constant seen somewhere is its own interpolator.
    np.testing.assert_allclose(min_degree_interpolator(np.full(8, 2.0), np.ones(8, bool)), 2.0)
