"""The tracker's measures on a sample of the cube, for a task whose cube is too large to list
(d above ``boolean.MAX_CUBE_BITS``, such as 2parity at d = 40; Abbe et al. 2023, Figure 9).

``FourierTracker`` then evaluates the model on one fixed, seeded sample of ``SAMPLE_POINTS``
points drawn uniformly from {+1, -1}^d (with replacement; ``sample_points``), the same at
every epoch, and estimates there what it measures exactly on the cube (``sampled_measures``,
the keys of ``fourier_tracking.measures``):

- a tracked coefficient f^(S) = E[f(x) chi_S(x)] by its mean over the sample (Monte Carlo:
  standard error sqrt((E[f^2] - f^(S)^2) / N) for N points);
- ``half_mse`` on the whole sample; ``in_distribution_half_mse`` and ``seen_mse`` on its seen
  points;
- the leak and the unseen errors on its unseen points: those of the uniform sample that fall
  outside the domain (a quarter for {x0 = 1 or x1 = 1}), no separate draw. The leak is a ratio
  on those points (``interpolation.leak_at``), so a function a * f + (1 - a) * MDI has leak
  1 - a exactly, sampled or not;
- the degree profile needs every coefficient: None.

The target's and the MDI's coefficients on the tracked monomials are exact (their Fourier
expansions: the target must be a polynomial, the MDI ``unseen.mdi_expansion``'s). The file
says how it was measured: ``"evaluation": {"kind": "sampled", "points": N, ...}`` (a
fourier.json without it is exact on the whole cube).
"""

import numpy as np

from pvr_keras.analysis import boolean, interpolation
from pvr_keras.checks import check_int, check_seed

SAMPLE_POINTS = 2**16  # the default sample: standard error about 1 / 256 per unit of f
MAX_SAMPLE_POINTS = 2**22  # (N, d) int8 points and (N, tracked monomials) float64 characters


def sample_points(num_bits, size=SAMPLE_POINTS, seed=0):
    """``size`` points drawn uniformly from {+1, -1}^d with replacement, seeded: int8 (size, d)."""
    d = check_int("num_bits", num_bits, 1)
    size = check_int("the sample size", size, 1, MAX_SAMPLE_POINTS + 1)
    rng = np.random.default_rng(check_seed(seed, "the sample seed"))
    return (1 - 2 * rng.integers(0, 2, (size, d), dtype=np.int8)).astype(np.int8)


def characters_at(x, subsets):
    """chi_S(x) = prod_{j in S} x_j at each point (N, d) for each subset integer S: float64
    (N, len(subsets))."""
    x = np.asarray(x, np.float64)
    out = np.ones((len(x), len(subsets)))
    for i, s in enumerate(subsets):
        bits = list(boolean.bits_of(s))
        if bits:
            out[:, i] = x[:, bits].prod(axis=1)
    return out


def expansion_subsets(expansion, frozen=(), limit=64):
    """``fourier_tracking.tracked_subsets`` of a function given by its Fourier expansion
    {tuple of bits: coefficient}: its support (largest first, at most ``limit``) and each of
    its monomials without the bits ``frozen``. Subset integers, sorted."""
    coefficients = {}
    for bits, c in expansion.items():
        s = boolean.subset_of(bits)
        coefficients[s] = coefficients.get(s, 0.0) + float(c)
    support = sorted((s for s, c in coefficients.items() if abs(c) > 1e-9),
                     key=lambda s: (-abs(coefficients[s]), s))[:limit]  # fmt: skip
    mask = boolean.subset_of(frozen)
    return sorted(set(support) | {s & ~mask for s in support})


def expansion_coefficients(expansion, subsets):
    """The coefficients of an expansion {tuple of bits: coefficient} on the subset integers
    ``subsets`` (0 where it has none): list of floats."""
    by_subset = {}
    for bits, c in expansion.items():
        s = boolean.subset_of(bits)
        by_subset[s] = by_subset.get(s, 0.0) + float(c)
    return [by_subset.get(int(s), 0.0) for s in subsets]


def sampled_measures(values, x, target, seen, subsets, *, mdi=None):
    """``fourier_tracking.measures``' numbers estimated at sampled points (the module
    docstring): a dict with its keys, ``degree_profile`` None.

    Args:
        values: the function at the points, (N,).
        x: the points, (N, d) of +1/-1, drawn uniformly from the cube.
        target: the target at the points, (N,).
        seen: bool (N,): which points are in the training part.
        subsets: the tracked monomials (subset integers).
        mdi: the target's MDI at the points, (N,): adds the unseen measures (None where no
            sampled point is unseen; the leak also where the target equals the MDI on them).
    """
    values, target = np.asarray(values, np.float64), np.asarray(target, np.float64)
    seen = np.asarray(seen, bool)
    if not (len(values) == len(x) == len(target) == len(seen)):
        raise ValueError(
            f"give the values, points, target and seen mask of one sample; received lengths "
            f"{len(values)}, {len(x)}, {len(target)}, {len(seen)}"
        )
    error = (values - target) ** 2
    coefficients = values @ characters_at(x, subsets) / len(values)
    out = {
        "half_mse": float(error.mean() / 2),
        "in_distribution_half_mse": float(error[seen].mean() / 2) if seen.any() else None,
        "coefficients": [float(c) for c in coefficients],
    }
    if mdi is not None:
        mdi, unseen = np.asarray(mdi, np.float64), ~seen
        out["seen_mse"] = float(error[seen].mean()) if seen.any() else None
        out["unseen_mse"] = float(error[unseen].mean()) if unseen.any() else None
        out["unseen_mse_to_mdi"] = (
            float(np.mean((values[unseen] - mdi[unseen]) ** 2)) if unseen.any() else None
        )
        gap = unseen.any() and np.any(np.abs(target[unseen] - mdi[unseen]) > 1e-9)
        out["leak"] = (
            interpolation.leak_at(values[unseen], target[unseen], mdi[unseen]) if gap else None
        )
        out["degree_profile"] = None  # every coefficient: not from a sample
    return out


__all__ = ["MAX_SAMPLE_POINTS", "SAMPLE_POINTS", "characters_at", "expansion_coefficients",
           "expansion_subsets", "sample_points", "sampled_measures"]  # fmt: skip
