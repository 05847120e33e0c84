"""The min-degree interpolator (Abbe, Bengio, Lotfi, Rizk 2023, "Generalization on the
Unseen"): of all functions equal to f on the seen points, the one whose degree profile
(W^d, ..., W^0), W^k = sum over |S| = k of g^(S)^2, is lexicographically smallest; and the
leak of a learned function towards it on the unseen points.

Exact, degree by degree from the top, on the bits that f or the domain depend on (flipping
another bit maps interpolants to interpolants of the same profile, and the MDI is unique), at
most ``MAX_EXACT_BITS`` = 16 of them, in a cube of up to ``boolean.MAX_CUBE_BITS``. The
minimisers of W^d, ..., W^(k+1) differ by functions of degree <= k that vanish on the seen
points, so each stage is a least-squares problem on a shrinking affine space, solved on the
smaller side with one orthonormal basis grown stage by stage (never a 2**d x 2**d matrix):

- few unseen points: g's values u on them, W^k = |Phi_k u + c_k|^2 / 4**d (Phi_k the degree-k
  characters there, c_k the seen points' share); from degree d down, u moves by the
  minimum-norm least-squares step orthogonal to the higher degrees' characters, until those
  span every unseen direction;
- few seen points: the coefficients, the degree-k block being the minimum-norm solution of the
  seen equations with the range of the lower degrees' characters there projected out.

Rank decisions use an absolute tolerance (the characters are +-1). The cost grows as the
square of the smaller side (at most ``MAX_SIDE`` points) times the characters a stage
touches: a 13-bit parity on a radius-4 ball takes under a second, a random function on a
random half of 13 bits tens of seconds (single-threaded BLAS; threads fighting for a loaded
machine slow the small SVDs down a hundredfold).
``min_degree_expansion`` takes f's Fourier expansion instead, for large d: the MDI is linear
in f and the MDI of one character depends only on its bits and the domain's, so each monomial
is solved on that sub-cube.
"""

import numpy as np

from pvr_keras.analysis.boolean import _check_values, subset_sizes
from pvr_keras.checks import check_real_dtype

MAX_EXACT_BITS = 16  # bits that f or the seen domain depend on (the cube enumerates 2**d)
MAX_SIDE = 2**13  # the smaller of the seen and unseen sets: an orthonormal basis of that many


def _parity(rows, subsets):
    """chi_S(x_r) = (-1)^popcount(r & S) for rows r and subsets S: float64 (rows, subsets)."""
    out = np.empty((rows.size, subsets.size))
    for start in range(0, subsets.size, 512):  # column chunks: the int64 temporary stays small
        p = rows[:, None] & subsets[None, start : start + 512]
        for shift in (16, 8, 4, 2, 1):  # fold the bits (d <= 32) onto bit 0
            p ^= p >> shift
        out[:, start : start + 512] = 1.0 - 2.0 * (p & 1)
    return out


def _transform(values):
    """sum over the cube of values(x) chi_S(x) for every S, along axis 0 (its own inverse up
    to 2**d): a Walsh-Hadamard butterfly, (2**d, b) -> (2**d, b)."""
    out = np.array(values, np.float64)
    n, b = out.shape
    h = 1
    while h < n:
        out = out.reshape(-1, 2, h, b)
        out = np.stack([out[:, 0] + out[:, 1], out[:, 0] - out[:, 1]], axis=1)
        h *= 2
    return out.reshape(n, b)


def _extend(basis, used, block):
    """Project ``block``'s columns off the orthonormal ``basis[:, :used]`` (twice, for
    rounding) and take the SVD of what is left, keeping singular values above an absolute
    tolerance (the characters are +-1: what projection leaves at rounding level is zero, and
    a relative cut-off would keep that noise). Appends the new left singular vectors to the
    basis; returns (left, singular values, right^T, used)."""
    for _ in range(2):
        if used:
            q = basis[:, :used]
            block = block - q @ (q.T @ block)
    u, s, vt = np.linalg.svd(block, full_matrices=False)
    keep = s > 1e-9 * max(block.shape)
    u, s, vt = u[:, keep], s[keep], vt[keep]
    basis[:, used : used + s.size] = u
    return u, s, vt, used + s.size


def _exact(values, seen, d):
    """The MDI of each column of ``values`` (2**d,) or (2**d, b) on ``seen``: same shape."""
    if d > MAX_EXACT_BITS:
        raise ValueError(
            f"the exact interpolator takes at most {MAX_EXACT_BITS} bits that f or the seen "
            f"domain depend on; received {d}. A function of few coordinates on a large cube "
            "can go through min_degree_expansion (its Fourier expansion, never 2**d values)"
        )
    flat = values.ndim == 1
    values = values.reshape(values.size, 1) if flat else values
    out = values.astype(np.float64, copy=True)
    rows = np.arange(2**d, dtype=np.int64)
    seen_rows, unseen_rows = rows[seen], rows[~seen]
    if unseen_rows.size and d:
        if min(seen_rows.size, unseen_rows.size) > MAX_SIDE:
            raise ValueError(
                f"the exact interpolator orthogonalises the smaller of the seen and unseen "
                f"sets, at most {MAX_SIDE} points; received {seen_rows.size} seen and "
                f"{unseen_rows.size} unseen of 2**{d}"
            )
        by_degree = [rows[subset_sizes(d) == k] for k in range(d + 1)]
        solve = _from_the_seen if seen_rows.size <= unseen_rows.size else _on_the_unseen
        solve(out, values, seen_rows, unseen_rows, by_degree, d)
    return out[:, 0] if flat else out


def _from_the_seen(out, values, seen_rows, unseen_rows, by_degree, d):
    """Few seen points: solve for the coefficients. With the degrees above k fixed, the
    degree-k block is the minimum-norm solution of the seen equations once the range of the
    lower degrees' characters on the seen points is projected out; those ranges are nested,
    so one orthonormal basis of the seen points' space, grown from degree 0 up, serves every
    degree (and above the degree where it spans everything, the blocks are zero)."""
    n = seen_rows.size
    basis, used, stages = np.empty((n, n), order="F"), 0, []
    for k in range(d + 1):
        u, s, vt, used = _extend(basis, used, _parity(seen_rows, by_degree[k]))
        stages.append((k, u, s, vt))
        if used == n:
            break
    rest = values[seen_rows]
    coefficients = np.zeros(values.shape)
    for k, u, s, vt in reversed(stages):
        block = vt.T @ ((u.T @ rest) / s[:, None])
        coefficients[by_degree[k]] = block
        rest = rest - _parity(seen_rows, by_degree[k]) @ block
    out[unseen_rows] = _transform(coefficients)[unseen_rows]


def _on_the_unseen(out, values, seen_rows, unseen_rows, by_degree, d):
    """Few unseen points: solve for g's values u on them (the seen values are f's). The
    degree-k weight is |Phi_k u + c_k|^2 / 4**d, Phi_k the degree-k characters on the unseen
    points and c_k the seen points' share; from the top degree down, u moves only in the
    directions that leave every higher degree's characters unchanged (the orthogonal
    complement of their rows, one orthonormal basis grown degree by degree), by the
    least-squares step of minimum norm; once the basis spans everything, u is determined."""
    n = unseen_rows.size
    known = np.zeros(values.shape)
    known[seen_rows] = values[seen_rows]
    shares = _transform(known)  # c_k for every degree at once
    u_values = np.zeros((n, values.shape[1]))
    basis, used = np.empty((n, n), order="F"), 0
    for k in range(d, -1, -1):
        chars = _parity(unseen_rows, by_degree[k])
        residual = chars.T @ u_values + shares[by_degree[k]]
        u, s, vt, used = _extend(basis, used, chars)
        u_values -= u @ ((vt @ residual) / s[:, None])
        if used == n:
            break
    out[unseen_rows] = u_values


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


MAX_EXPANSION_BITS = 62  # subsets are int64 bit masks


def min_degree_expansion(expansion, num_bits, domain_bits, seen):
    """The min-degree interpolator of a function given by its Fourier expansion, on a domain
    that depends on a few bits, as an expansion: never a 2**d array, so d may be large.

    The MDI is linear in f for a fixed domain, and the MDI of one character chi_S depends
    only on the bits S and the domain's (flipping any other bit maps f and the domain to
    themselves), so each monomial is solved exactly on the sub-cube of those bits (the
    domain's bits first, then S's others; monomials alike up to renaming those are solved
    together) and mapped back.

    Args:
        expansion: {tuple of bits: coefficient}, f = sum of coefficient * prod_{j} x_j
            (``{(0, 1): 1.0}`` is x0 x1; ``()`` the constant).
        num_bits: d, the cube's dimension (at most 62).
        domain_bits: the bits the seen domain depends on, distinct.
        seen: boolean mask of length 2**len(domain_bits) over the sub-cube of those bits, in
            its row order (the i-th listed domain bit is row bit i; ``boolean_cube``).

    Returns:
        {tuple of ascending bits: coefficient} of the MDI, coefficients below 1e-12 dropped.

    Raises:
        ValueError: a bit out of range or repeated, a bad mask, or a monomial whose bits
            outside the domain together with the domain's exceed ``MAX_EXACT_BITS``.

    Example:
        >>> seen = np.array([True, True, True, False])    # x0 = 1 or x1 = 1
        >>> min_degree_expansion({(0, 1): 1.0}, 40, (0, 1), seen)
        {(): -1.0, (0,): 1.0, (1,): 1.0}
    """
    d = _check_num_bits(num_bits)
    domain = _check_bits_of("domain_bits", domain_bits, d)
    seen = _check_seen(seen, 2 ** len(domain))
    if not isinstance(expansion, dict):
        raise ValueError(f"expansion must be a dict {{tuple of bits: coefficient}}; received "
                         f"{type(expansion).__name__}")  # fmt: skip
    position = {b: i for i, b in enumerate(domain)}
    by_outside = {}  # m bits outside the domain -> {domain part (row bits): [(bits out, c)]}
    for monomial, coefficient in expansion.items():
        bits = _check_bits_of("a monomial", monomial, d)
        coefficient = float(coefficient)
        if not np.isfinite(coefficient):
            raise ValueError(f"the coefficient of {monomial} is not finite: {coefficient}")
        inside = sum(1 << position[b] for b in bits if b in position)
        outside = tuple(sorted(b for b in bits if b not in position))
        by_outside.setdefault(len(outside), {}).setdefault(inside, []).append(
            (outside, coefficient)
        )
    out = {}
    for m, by_inside in by_outside.items():
        n = len(domain) + m
        if n > MAX_EXACT_BITS:
            raise ValueError(
                f"a monomial with {m} bits outside the domain's {len(domain)} is solved on "
                f"{n} bits, more than MAX_EXACT_BITS = {MAX_EXACT_BITS}"
            )
        rows = np.arange(2**n, dtype=np.int64)
        sub_seen = seen[rows & (2 ** len(domain) - 1)]
        insides = sorted(by_inside)
        subsets = np.array(insides, np.int64) | (((1 << m) - 1) << len(domain))
        values = _parity(rows, subsets)  # each alike monomial's character on the sub-cube
        coefficients = _transform(_exact(values, sub_seen, n)) / 2**n
        support = np.flatnonzero(np.abs(coefficients).max(axis=1) > 0)
        for column, inside in enumerate(insides):
            for outside, c in by_inside[inside]:
                names = domain + outside  # row bit i of the sub-cube is bit names[i]
                for t in support:
                    key = tuple(sorted(names[i] for i in range(n) if (t >> i) & 1))
                    out[key] = out.get(key, 0.0) + c * coefficients[t, column]
    return {k: float(v) for k, v in sorted(out.items()) if abs(v) >= 1e-12}


def _check_num_bits(num_bits):
    if isinstance(num_bits, bool) or not isinstance(num_bits, (int, np.integer)):
        raise ValueError(f"num_bits must be an integer; received {num_bits!r}")
    if not 1 <= num_bits <= MAX_EXPANSION_BITS:
        raise ValueError(f"num_bits must be in [1, {MAX_EXPANSION_BITS}]; received {num_bits}")
    return int(num_bits)


def _check_bits_of(name, bits, d):
    try:
        bits = tuple(bits)
    except TypeError:
        raise ValueError(f"{name} must be a tuple of bits; received {bits!r}") from None
    for b in bits:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 0 <= b < d:
            raise ValueError(f"{name} {bits}: every bit must be an integer in [0, {d})")
    if len(set(bits)) != len(bits):
        raise ValueError(f"{name} {bits} repeats a bit")
    return tuple(int(b) for b in bits)


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


def leak(learned, values, mdi, seen):
    """How far a learned function is towards the min-degree interpolator on the unseen
    points: alpha = mean((f - g)(f - MDI)) / mean((f - MDI)^2) over them (1: the MDI; 0: the
    truth f). All arrays in row order, length 2**d; ``seen`` the training domain's mask.

    Raises:
        ValueError: no unseen point, or f equals its MDI there (alpha is undefined).
    """
    values, _ = _check_values(values)
    seen = _check_seen(seen, values.size)
    learned, mdi = (np.asarray(check_real_dtype(name, np.asarray(a)), np.float64)
                    for name, a in (("learned", learned), ("mdi", mdi)))  # fmt: skip
    if learned.shape != values.shape or mdi.shape != values.shape:
        raise ValueError(f"learned and mdi must have the shape of values, {values.shape}")
    unseen = ~seen
    if not unseen.any():
        raise ValueError("seen marks every point: there is no unseen point to measure")
    return leak_at(learned[unseen], values[unseen], mdi[unseen])


def leak_at(learned, values, mdi):
    """``leak`` over the given points, every one unseen (a sample of them, where the cube is
    too large to list): mean((f - g)(f - MDI)) / mean((f - MDI)^2), arrays of one shape.

    Raises:
        ValueError: f equals its MDI at every point (alpha is undefined).
    """
    gap = values - mdi
    if not np.any(gap):
        raise ValueError("f equals its min-degree interpolator on the unseen points")
    return float(np.mean((values - learned) * gap) / np.mean(gap**2))
