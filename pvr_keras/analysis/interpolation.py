"""The min-degree interpolator (Abbe, Bengio, Lotfi, Rizk 2023, "Generalization on the
Unseen"): of all functions equal to f on the seen points, the one whose degree profile
(W^d, ..., W^0), W^k = sum over |S| = k of g^(S)^2, is lexicographically smallest; and the
leak of a learned function towards it on the unseen points.

Exact, degree by degree from the top: with the coefficients of degrees above k fixed, the
degree-k block is the minimum-norm solution of the seen points' equations once the part the
lower degrees can absorb (the range of their characters on the seen points) is projected
out; it is unique, so the interpolator is. The MDI depends only on the bits that f or the
domain depend on (flipping another bit maps interpolants to interpolants of the same
profile, and the MDI is unique), so it is computed on that sub-cube: dense characters there,
at most ``MAX_EXACT_BITS`` bits, in a cube of up to ``boolean.MAX_CUBE_BITS``.
"""

import numpy as np

from pvr_keras.analysis.boolean import _check_values, subset_sizes

MAX_EXACT_BITS = 10  # the characters on the seen points: up to 2**d x 2**d floats


def characters(num_bits):
    """prod_{j in S} x_j for every row x and subset S: float64 (2**d, 2**d), symmetric;
    ``characters(d) @ coefficients`` is a function's values in row order."""
    r = np.arange(2**num_bits, dtype=np.int64)
    both = r[:, None] & r[None, :]
    parity = np.zeros(both.shape, np.int64)
    for j in range(num_bits):
        parity ^= (both >> j) & 1
    return 1.0 - 2.0 * parity


def _check_seen(seen, size):
    seen = np.asarray(seen)
    if seen.dtype != bool or seen.shape != (size,):
        raise ValueError(
            f"seen must be a boolean mask of the cube's rows, shape ({size},); received "
            f"dtype {seen.dtype}, shape {seen.shape}"
        )
    if not seen.any():
        raise ValueError("seen marks no point of the cube: there is nothing to interpolate")
    return seen


def min_degree_interpolator(values, seen):
    """The min-degree interpolator of f on the seen points: its values on the whole cube.

    Args:
        values: f on the cube in row order (``boolean_cube``), length 2**d.
        seen: boolean mask of the seen rows, length 2**d (at least one seen).

    Returns:
        float64 (2**d,): equal to ``values`` on the seen rows; ``fourier_coefficients`` and
        ``degree_profile`` apply to it.

    Example:
        >>> from pvr_keras.analysis import boolean_cube
        >>> x = boolean_cube(2)
        >>> seen = (x[:, 0] == 1) | (x[:, 1] == 1)      # (-1, -1) unseen
        >>> min_degree_interpolator(x[:, 0] * x[:, 1], seen).round(6).tolist()
        [1.0, -1.0, -1.0, -3.0]
    """
    values, d = _check_values(values)
    seen = _check_seen(seen, values.size)
    bits = relevant_bits(values, seen)
    if len(bits) < d:  # the MDI depends only on the bits f or the domain depends on
        rows = np.arange(values.size, dtype=np.int64)
        reduced = np.zeros(values.size, np.int64)
        for i, j in enumerate(bits):
            reduced |= ((rows >> j) & 1) << i
        # The rows with every other bit at +1, in the sub-cube's row order (the bits ascend).
        corner = np.zeros(values.size, bool)
        corner[np.unique(reduced, return_index=True)[1]] = True
        return _exact(values[corner], seen[corner], len(bits))[reduced]
    return _exact(values, seen, d)


def relevant_bits(values, seen):
    """The bits that f or the seen domain depend on: bit j is left out when flipping it
    changes neither f's value nor whether the point is seen, at every point."""
    values, d = _check_values(values)
    seen = _check_seen(seen, values.size)
    rows = np.arange(values.size, dtype=np.int64)
    return [
        j for j in range(d)
        if not (np.array_equal(values, values[rows ^ (1 << j)])
                and np.array_equal(seen, seen[rows ^ (1 << j)]))
    ]  # fmt: skip


def _exact(values, seen, d):
    if d > MAX_EXACT_BITS:
        raise ValueError(
            f"the exact interpolator takes at most {MAX_EXACT_BITS} bits that f or the seen "
            f"domain depend on (dense characters); received {d}"
        )
    if d == 0:
        return values.copy()
    chars = characters(d)
    on_seen, target = chars[seen], values[seen]
    degree = subset_sizes(d)
    coefficients = np.zeros(values.size)
    for k in range(d, -1, -1):
        above, block, below = degree > k, degree == k, degree < k
        rest = target - on_seen[:, above] @ coefficients[above]
        equations = on_seen[:, block]
        if below.any():  # project out what the lower degrees can still fit
            u, s, _ = np.linalg.svd(on_seen[:, below], full_matrices=False)
            u = u[:, s > 1e-9 * max(u.shape)]
            equations = equations - u @ (u.T @ equations)
            rest = rest - u @ (u.T @ rest)
        coefficients[block] = _min_norm_solution(equations, rest)
    return chars @ coefficients


def _min_norm_solution(matrix, rhs):
    """The least-norm least-squares solution, ignoring singular values below an absolute
    tolerance: the characters are +-1, so what projection leaves at rounding level is zero
    (a relative cut-off would invert that noise)."""
    if matrix.shape[1] == 0:
        return np.zeros(0)
    u, s, vt = np.linalg.svd(matrix, full_matrices=False)
    keep = s > 1e-9 * max(matrix.shape)
    return vt[keep].T @ ((u[:, keep].T @ rhs) / s[keep])


def leak(learned, values, mdi, seen):
    """How far a learned function is towards the min-degree interpolator on the unseen
    points: alpha = mean((f - g)(f - MDI)) / mean((f - MDI)^2) over them (1: the MDI; 0: the
    truth f). All arrays in row order, length 2**d; ``seen`` the training domain's mask.

    Raises:
        ValueError: no unseen point, or f equals its MDI there (alpha is undefined).
    """
    values, _ = _check_values(values)
    seen = _check_seen(seen, values.size)
    learned, mdi = np.asarray(learned, np.float64), np.asarray(mdi, np.float64)
    if learned.shape != values.shape or mdi.shape != values.shape:
        raise ValueError(f"learned and mdi must have the shape of values, {values.shape}")
    unseen = ~seen
    if not unseen.any():
        raise ValueError("seen marks every point: there is no unseen point to measure")
    gap = values[unseen] - mdi[unseen]
    if not np.any(gap):
        raise ValueError("f equals its min-degree interpolator on the unseen points")
    return float(np.mean((values[unseen] - learned[unseen]) * gap) / np.mean(gap**2))
