"""The min-degree interpolator: the closed forms of Abbe et al. (2023), a slow reference that
minimises the degree profile over every interpolant by a null-space parametrisation, and its
defining property against random other interpolants."""

from math import comb

import numpy as np
import pytest

from pvr_keras.analysis import boolean_cube, degree_profile, fourier_coefficients, interpolation
from pvr_keras.analysis.boolean import bits_of
from pvr_keras.analysis.interpolation import (
    characters,
    leak,
    min_degree_expansion,
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


def _half(d):
    seen = np.zeros(2**d, bool)
    seen[::2] = True
    seen[1] = True  # still depends on every bit
    return seen


@pytest.mark.parametrize(
    "values,seen,match",
    [
        (np.zeros(3), np.ones(3, bool), "length 2\\*\\*d"),
        (np.zeros(4), np.ones(3, bool), "shape \\(4,\\)"),
        (np.zeros(4), np.ones(4, int), "boolean mask"),
        (np.zeros(4), np.zeros(4, bool), "no point"),
        (np.random.default_rng(0).normal(size=2**17), np.ones(2**17, bool), "at most 16 bits"),
        (np.random.default_rng(0).normal(size=2**15), _half(15), "at most 8192 points"),
    ],
)
def test_bad_input_is_refused(values, seen, match):
    with pytest.raises(ValueError, match=match):
        min_degree_interpolator(values, seen)


@pytest.mark.parametrize(
    "values",
    [
        np.array([1, 1, 1, -1]) * (1 + 0.5j),  # its imaginary part would be dropped
        np.array([1, 1, 1, -1], "timedelta64[s]"),
        np.array([1, 1, 1, -1], object),
        np.array(["1", "1", "1", "-1"]),
    ],
)
def test_values_that_are_not_real_numbers_are_refused(values):
    seen = np.array([True, True, True, False])
    with pytest.raises(ValueError, match="values must be real numbers .*received dtype"):
        min_degree_interpolator(values, seen)
    f = np.array([1.0, 1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="learned must be real numbers"):
        leak(values, f, f, seen)
    min_degree_interpolator(np.array([True, True, True, False]), seen)  # bool, int: real


def test_a_cube_too_large_is_refused_before_any_float64_copy():
    import tracemalloc

    values = np.broadcast_to(np.int8(1), (2**25,))  # 2**25 rows, no memory of its own
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="d must be at most 20"):
            min_degree_interpolator(values, np.broadcast_to(True, (2**25,)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak / 2**20:.0f} MiB allocated before the refusal"  # was 256 MiB


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


@pytest.mark.parametrize("side", ["few seen", "few unseen"])
def test_both_routes_match_the_slow_reference(side):
    """Solving for the coefficients (few seen points) and for the unseen values (few unseen
    points) both give the slow null-space reference's MDI, on 40 seeded cases each."""
    rng = np.random.default_rng(0 if side == "few seen" else 1)
    for _ in range(40):
        d = int(rng.integers(1, 9))
        fraction = rng.uniform(0.05, 0.45) if side == "few seen" else rng.uniform(0.55, 0.95)
        seen = rng.random(2**d) < fraction
        seen[rng.integers(2**d)] = True
        if (side == "few seen") != (seen.sum() <= (~seen).sum()):
            seen = ~seen if (~seen).any() else seen
        values = rng.normal(size=2**d)
        g = interpolation._exact(values, seen, d)
        np.testing.assert_allclose(g[seen], values[seen], atol=1e-9)
        np.testing.assert_allclose(g, _slow_mdi(values, seen), atol=1e-7)


def test_parity_of_13_bits_on_the_ball_of_radius_4():
    x = boolean_cube(13)
    h = (x == -1).sum(axis=1)
    g = min_degree_interpolator(np.prod(x, axis=1).astype(float), h <= 4)
    expected = np.array([sum(comb(int(n), j) * (-2) ** j for j in range(5)) for n in h])
    np.testing.assert_allclose(g, expected, atol=1e-6)  # values up to about 1.2e4


def test_closed_forms_with_eleven_relevant_bits():
    """A degree-9 monomial on bits the domain ignores is its own MDI, so the two-bit product
    and the frozen-bit example keep their closed forms, now on 11 relevant bits."""
    x = boolean_cube(11).astype(float)
    rest = np.prod(x[:, 2:], axis=1)
    seen = (x[:, 0] == 1) | (x[:, 1] == 1)
    g = min_degree_interpolator(x[:, 0] * x[:, 1] + rest, seen)
    np.testing.assert_allclose(g, x[:, 0] + x[:, 1] - 1 + rest, atol=1e-8)
    rest = np.prod(x[:, 6:], axis=1)
    f = x[:, 0] * x[:, 1] * x[:, 2] + x[:, 0] * x[:, 3] * x[:, 4] * x[:, 5] + rest
    g = min_degree_interpolator(f, x[:, 0] == 1)
    np.testing.assert_allclose(g, x[:, 1] * x[:, 2] + x[:, 3] * x[:, 4] * x[:, 5] + rest, atol=1e-8)


def _values(expansion, d):
    x = boolean_cube(d).astype(float)
    return sum(c * np.prod(x[:, list(bits)], axis=1) for bits, c in expansion.items())


def test_the_expansion_form_matches_the_cube_form():
    rng = np.random.default_rng(3)
    for _ in range(25):
        d = int(rng.integers(3, 9))
        domain = tuple(int(b) for b in rng.permutation(d)[: int(rng.integers(1, 4))])
        small = rng.random(2 ** len(domain)) < 0.6
        small[rng.integers(small.size)] = True
        expansion = {}
        for _ in range(int(rng.integers(1, 6))):
            bits = tuple(int(b) for b in rng.permutation(d)[: int(rng.integers(0, 5))])
            expansion[bits] = float(rng.normal())
        rows = np.arange(2**d)
        seen = small[sum(((rows >> b) & 1) << i for i, b in enumerate(domain))]
        dense = fourier_coefficients(min_degree_interpolator(_values(expansion, d), seen))
        got = min_degree_expansion(expansion, d, domain, small)
        expected = {bits_of(s): dense[s] for s in range(2**d) if abs(dense[s]) > 1e-9}
        assert set(got) == set(expected)
        for bits, c in expected.items():
            assert got[bits] == pytest.approx(c, abs=1e-8)


def test_cyclic3dim15_and_2parity_at_40_bits():
    """cyclic3dim15 on {x0 = 1 or x1 = 1 or x2 = 1}: only x0x1x2 lies in the domain's bits and
    is replaced by its MDI there, the degree-2 interpolant 1 - x0 - x1 - x2 + x0x1 + x0x2 + x1x2
    (7 at (-1, -1, -1); the full 15-bit cube solve agrees); every other monomial has a bit the
    domain ignores and is its own MDI."""
    cyclic = {tuple(sorted({i, (i + 1) % 15, (i + 2) % 15})): 1.0 for i in range(15)}
    seen = np.arange(8) != 7
    expected = {k: 1.0 for k in cyclic if k != (0, 1, 2)}
    expected.update({(): 1.0, (0,): -1.0, (1,): -1.0, (2,): -1.0})
    expected.update({(0, 1): 1.0, (0, 2): 1.0, (1, 2): 1.0})
    got = min_degree_expansion(cyclic, 15, (0, 1, 2), seen)
    assert set(got) == set(expected)
    assert all(got[k] == pytest.approx(v, abs=1e-9) for k, v in expected.items())
    got = min_degree_expansion({(0, 1): 1.0}, 40, (0, 1), np.array([True, True, True, False]))
    assert got == pytest.approx({(0,): 1.0, (1,): 1.0, (): -1.0}, abs=1e-9)
    assert set(got) == {(0,), (1,), ()}
    # Far-away bits and the domain's order: x30 x39 on {x39 = 1 or x30 = 1}, bits given 39, 30.
    got = min_degree_expansion({(30, 39): 2.0}, 40, (39, 30), np.array([True, True, True, False]))
    assert got == pytest.approx({(30,): 2.0, (39,): 2.0, (): -2.0}, abs=1e-9)


@pytest.mark.parametrize(
    "args,match",
    [
        (({(0, 1): 1.0}, 63, (0,), np.ones(2, bool)), "num_bits must be in"),
        (({(0, 1): 1.0}, 2.0, (0,), np.ones(2, bool)), "num_bits must be an integer"),
        (({(0, 5): 1.0}, 4, (0,), np.ones(2, bool)), "every bit must be an integer in"),
        (({(0, 0): 1.0}, 4, (0,), np.ones(2, bool)), "repeats a bit"),
        (({(0,): 1.0}, 4, (1, 1), np.ones(4, bool)), "domain_bits .* repeats a bit"),
        (({(0,): 1.0}, 4, (4,), np.ones(2, bool)), "domain_bits .* in \\[0, 4\\)"),
        (({(0,): 1.0}, 4, (0, 1), np.ones(2, bool)), "shape \\(4,\\)"),
        (({(0,): 1.0}, 4, (0,), np.ones(2, int)), "boolean mask"),
        (({(0,): 1.0}, 4, (0,), np.zeros(2, bool)), "no point"),
        (([((0,), 1.0)], 4, (0,), np.ones(2, bool)), "must be a dict"),
        (({(0,): np.inf}, 4, (0,), np.ones(2, bool)), "not finite"),
        (({tuple(range(1, 18)): 1.0}, 40, (0,), np.ones(2, bool)), "solved on 18 bits"),
    ],
)
def test_bad_expansion_input_is_refused(args, match):
    with pytest.raises(ValueError, match=match):
        min_degree_expansion(*args)
