"""A task's min-degree interpolator on its seen domain (Abbe, Bengio, Lotfi, Rizk 2023), on the
whole cube, by the fastest exact route: ``task_mdi(task)``.

Where the target and the domain are both symmetric (unchanged by any permutation of the bits:
a Hamming ball with the parity, majority, min or max of every bit) the MDI is symmetric too
(it is unique), so it is a function of the weight H(x) alone: g = sum_k c_k K_k, with K_k the
Krawtchouk polynomial (the sum of the degree-k characters) and W^k(g) = c_k^2 C(d, k). The
lexicographic minimisation then runs over d + 1 numbers, degree by degree from the top, on
the seen weights with each weight counted C(d, w) times: exact for any d the cube allows
(``symmetric_mdi``). A target written as a polynomial goes monomial by monomial
(``interpolation.min_degree_expansion``: each on the bits of the monomial and the domain), and
any other through ``interpolation.min_degree_interpolator``. The polynomial route's expansion
itself (``mdi_expansion``) gives the MDI at any points of a cube too large to list
(``expansion_at``).

    >>> from pvr_keras.tasks import FunctionTask
    >>> task = FunctionTask(num_bits=6, target="parity:all", domain="ball:2")
    >>> mdi = task_mdi(task)      # sum_{j <= 2} C(H, j) (-2)^j: 1, -1, 1, 7, 17, 31, 49
    >>> sorted({round(float(v)) for v in mdi})
    [-1, 1, 7, 17, 31, 49]
"""

from math import comb

import numpy as np

from pvr_keras.analysis import boolean, interpolation
from pvr_keras.kinds.boolean.domains import Domain
from pvr_keras.kinds.boolean.task import BooleanFunction
from pvr_keras.kinds.gotu.targets import expansion_of

SYMMETRIC_TARGETS = ("parity", "majority", "min", "max")


def krawtchouk(num_bits):
    """K[w, k] = sum over |S| = k of prod_{j in S} x_j at any x of weight w: (d+1, d+1)."""
    d = num_bits
    return np.array([
        [sum((-1) ** j * comb(w, j) * comb(d - w, k - j) for j in range(k + 1))
         for k in range(d + 1)]
        for w in range(d + 1)
    ], np.float64)  # fmt: skip


def symmetric_mdi(by_weight, seen_weights, num_bits):
    """The MDI of a symmetric f on a symmetric domain, as a function of the weight.

    Args:
        by_weight: f at weight w = 0..d, (d + 1,).
        seen_weights: bool (d + 1,): which weights are seen.

    Returns:
        float64 (d + 1,): the MDI at each weight (equal to f on the seen ones).
    """
    d = num_bits
    f = np.asarray(by_weight, np.float64)
    seen = np.asarray(seen_weights, bool)
    if f.shape != (d + 1,) or seen.shape != (d + 1,) or not seen.any():
        raise ValueError(f"give f and the seen mask at the d + 1 = {d + 1} weights, one seen")
    scale = np.sqrt([comb(d, w) for w in range(d + 1)])[seen]  # each weight C(d, w) times
    k_seen = krawtchouk(d)[seen] * scale[:, None]
    target = f[seen] * scale
    c = np.zeros(d + 1)
    tolerance = 1e-9 * max(1.0, float(np.abs(k_seen).max()))
    for k in range(d, -1, -1):
        rest = target - k_seen[:, k + 1 :] @ c[k + 1 :]
        column = k_seen[:, k].copy()
        if k:  # what the lower degrees can still fit is theirs
            u, s, _ = np.linalg.svd(k_seen[:, :k], full_matrices=False)
            u = u[:, s > tolerance]
            column -= u @ (u.T @ column)
            rest = rest - u @ (u.T @ rest)
        norm = float(column @ column)
        c[k] = float(column @ rest) / norm if np.sqrt(norm) > tolerance else 0.0
    return krawtchouk(d) @ c


def _symmetric(task):
    """Whether the task's target and domain are unchanged by permuting the bits."""
    domain = Domain.parse(getattr(task, "domain", "all"))
    function = getattr(task, "function", None)
    if domain.kind != "ball" or function is None or function.aggregation is None:
        return False
    return (function.aggregation in SYMMETRIC_TARGETS
            and sorted(function.subset) == list(range(task.num_bits)))  # fmt: skip


def expansion_at(expansion, x):
    """A Fourier expansion {bits: coefficient} at the points ``x`` (N, d) of +1/-1: float64
    (N,)."""
    x = np.asarray(x).astype(np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (N, d); received shape {x.shape}")
    out = np.zeros(len(x))
    for bits, c in expansion.items():
        out += c * (x[:, list(bits)].prod(axis=1) if bits else 1.0)
    return out


def expansion_values(expansion, num_bits):
    """A Fourier expansion {bits: coefficient} on the whole cube in row order: (2**d,)."""
    return expansion_at(expansion, boolean.boolean_cube(num_bits))


def seen_mask(task):
    """bool (2**d,): the task's seen rows of the cube (every row for the domain ``all``)."""
    return Domain.parse(getattr(task, "domain", "all")).mask(task.num_bits)


def mdi_expansion(task):
    """The task's target's min-degree interpolator on its seen domain as a Fourier expansion
    {tuple of bits: coefficient} (``interpolation.min_degree_expansion``, monomial by
    monomial: any d), where the target is a polynomial and the domain no Hamming ball; None
    otherwise."""
    function = getattr(task, "function", task)
    expansion = expansion_of(function) if isinstance(function, BooleanFunction) else None
    domain = Domain.parse(getattr(task, "domain", "all"))
    if expansion is None or domain.kind == "ball":
        return None
    bits = domain.depends_on(task.num_bits)
    return interpolation.min_degree_expansion(
        expansion, task.num_bits, bits, domain.seen_patterns(task.num_bits)
    )


def task_mdi(task):
    """The task's target's min-degree interpolator on its seen domain, on the whole cube in
    row order: float64 (2**d,)."""
    mdi = mdi_expansion(task)
    if mdi is not None:  # monomial by monomial
        return expansion_values(mdi, task.num_bits)
    values = boolean.target_values(task)
    seen = seen_mask(task)
    if _symmetric(task):
        d = task.num_bits
        weight = boolean.subset_sizes(d)  # the number of -1 entries of each row
        by_weight = np.zeros(d + 1)
        by_weight[weight] = values  # f depends on the weight only
        seen_weights = np.zeros(d + 1, bool)
        seen_weights[weight] = seen
        return symmetric_mdi(by_weight, seen_weights, d)[weight]
    return interpolation.min_degree_interpolator(values, seen)


__all__ = ["expansion_at", "expansion_values", "krawtchouk", "mdi_expansion", "seen_mask",
           "symmetric_mdi", "task_mdi"]  # fmt: skip
