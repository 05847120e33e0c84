"""Centered kernel alignment (CKA) between two representations of the same examples.

Follows Kornblith et al. 2019 ("Similarity of Neural Network Representations Revisited") and
the reference notebook of that paper (``gram_linear``, ``gram_rbf``, ``center_gram``, ``cka``,
``feature_space_linear_cka``); the paper of PVR uses it in Section 6.1 and Appendix E. For a
representation too large for one Gram matrix, ``MinibatchCKA`` averages the unbiased HSIC of
Song et al. 2012 over minibatches, as Nguyen et al. 2021 do.

Inputs are 2-D, (examples, features), and are read as float64. Higher-rank activations are
refused rather than flattened silently: flatten them per example yourself
(``x.reshape(len(x), -1)``, which is what ``analysis.activations`` returns).

``debiased=True`` replaces HSIC by its unbiased estimator: the biased estimator of two
independent representations is positive and grows with the number of features, the unbiased
one is centred on zero. It needs at least 4 examples.
"""

import numpy as np


def _as_features(name, x):
    """``x`` as a float64 (examples, features) array, or a ValueError that says why not."""
    try:
        x = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array; received {type(x).__name__}") from None
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (examples, features); received shape {x.shape}. Flatten "
            f"higher-rank activations per example first: x.reshape(len(x), -1)"
        )
    if not np.isfinite(x).all():
        raise ValueError(f"{name} must be finite; received NaN or infinite values")
    return x


def _check_pair(x, y, debiased):
    x, y = _as_features("X", x), _as_features("Y", y)
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and Y must hold the same examples (same first dimension); received "
            f"{x.shape[0]} and {y.shape[0]}"
        )
    need = 4 if debiased else 2
    if x.shape[0] < need:
        kind = "the debiased estimator" if debiased else "CKA"
        raise ValueError(f"{kind} needs at least {need} examples; received {x.shape[0]}")
    for name, z in (("X", x), ("Y", y)):
        if not np.any(z != z[0]):
            raise ValueError(f"all examples of {name} are identical: CKA is undefined")
    return x, y


def _check_gram(name, gram):
    gram = np.asarray(gram, dtype=np.float64)
    if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
        raise ValueError(f"{name} must be a square Gram matrix; received shape {gram.shape}")
    if not np.isfinite(gram).all():
        raise ValueError(f"{name} must be finite; received NaN or infinite values")
    if not np.allclose(gram, gram.T):
        raise ValueError(f"{name} must be symmetric")
    return gram


def gram_linear(x):
    """Linear kernel Gram matrix: (n, features) -> (n, n) ``x x^T``."""
    x = _as_features("x", x)
    return x @ x.T


def gram_rbf(x, threshold=0.5):
    """RBF kernel Gram matrix with a bandwidth set by the median distance.

    ``k(a, b) = exp(-|a - b|^2 / (2 sigma^2))`` with ``sigma = threshold * median distance``;
    as in the reference notebook, the median is that of the squared distances over all
    ``n^2`` pairs, the zero diagonal included.

    Args:
        x: (n, features) array.
        threshold: bandwidth as a fraction of the median distance (> 0).

    Returns:
        (n, n) float64 Gram matrix.
    """
    x = _as_features("x", x)
    number = isinstance(threshold, int | float | np.integer | np.floating)
    if isinstance(threshold, bool) or not number or not threshold > 0:
        raise ValueError(f"threshold must be a positive number; received {threshold!r}")
    dots = x @ x.T
    sq_norms = np.diag(dots)
    # Rounding can make a distance slightly negative; it is zero.
    sq_distances = np.maximum(sq_norms[:, None] + sq_norms[None, :] - 2 * dots, 0.0)
    sq_median = np.median(sq_distances)
    if sq_median == 0:
        raise ValueError(
            "the median distance between examples is 0 (most examples coincide): the RBF "
            "bandwidth is undefined"
        )
    return np.exp(-sq_distances / (2 * threshold**2 * sq_median))


def center_gram(gram, unbiased=False):
    """Centres a symmetric Gram matrix; ``unbiased=True`` gives the U-centring (n >= 4).

    With ``unbiased=True`` the diagonal is zeroed and the matrix centred so that the Frobenius
    inner product of two such matrices is ``n (n - 3)`` times the unbiased HSIC (Song et al.
    2012), as in Kornblith et al.'s notebook.
    """
    gram = _check_gram("gram", gram).copy()
    n = gram.shape[0]
    if unbiased:
        if n < 4:
            raise ValueError(f"unbiased centring needs at least 4 examples; received {n}")
        np.fill_diagonal(gram, 0)
        means = gram.sum(axis=0) / (n - 2)
        means -= means.sum() / (2 * (n - 1))
        gram -= means[:, None]
        gram -= means[None, :]
        np.fill_diagonal(gram, 0)
    else:
        means = gram.mean(axis=0)
        means -= means.mean() / 2
        gram -= means[:, None]
        gram -= means[None, :]
    return gram


def cka(gram_x, gram_y, debiased=False):
    """CKA from two Gram matrices of the same ``n`` examples (any kernel).

    Example:
        >>> x = np.random.default_rng(0).normal(size=(20, 3))
        >>> round(cka(gram_linear(x), gram_linear(2 * x)), 6)
        1.0
    """
    gram_x, gram_y = _check_gram("gram_x", gram_x), _check_gram("gram_y", gram_y)
    if gram_x.shape != gram_y.shape:
        raise ValueError(
            f"gram_x and gram_y must be over the same examples; received shapes "
            f"{gram_x.shape} and {gram_y.shape}"
        )
    gram_x = center_gram(gram_x, unbiased=debiased)
    gram_y = center_gram(gram_y, unbiased=debiased)
    norm_x, norm_y = np.linalg.norm(gram_x), np.linalg.norm(gram_y)
    if norm_x == 0 or norm_y == 0:
        raise ValueError("a centred Gram matrix is zero (no variation): CKA is undefined")
    return float(gram_x.ravel() @ gram_y.ravel() / (norm_x * norm_y))


def _debiased_dot(xty, rows_x, rows_y, sq_norm_x, sq_norm_y, n):
    """Unbiased HSIC (times n (n - 3)) of linear kernels from feature-space statistics."""
    return xty - n / (n - 2.0) * rows_x @ rows_y + sq_norm_x * sq_norm_y / ((n - 1) * (n - 2))


def linear_cka(x, y, debiased=False):
    """Linear CKA of two representations of the same examples.

    Computed in feature space (``feature_space_linear_cka`` of the reference notebook, O(n
    features^2), no n x n matrix) when there are at least as many examples as features, and
    from the n x n Gram matrices otherwise; the two are the same number.

    Args:
        x: (n, features_x) array.
        y: (n, features_y) array, the same n examples in the same order.
        debiased: use the unbiased HSIC estimator (needs n >= 4).

    Returns:
        CKA as a float, 1.0 for representations equal up to rotation and scale.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(100, 8))
        >>> q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
        >>> round(linear_cka(x, 3 * x @ q), 6)
        1.0
    """
    x, y = _check_pair(x, y, debiased)
    if max(x.shape[1], y.shape[1]) > x.shape[0]:
        return cka(x @ x.T, y @ y.T, debiased=debiased)
    x = x - x.mean(axis=0, keepdims=True)
    y = y - y.mean(axis=0, keepdims=True)
    xty = np.linalg.norm(x.T @ y) ** 2
    norm_x = np.linalg.norm(x.T @ x)
    norm_y = np.linalg.norm(y.T @ y)
    if debiased:
        n = x.shape[0]
        rows_x, rows_y = np.einsum("ij,ij->i", x, x), np.einsum("ij,ij->i", y, y)
        sq_x, sq_y = rows_x.sum(), rows_y.sum()
        xty = _debiased_dot(xty, rows_x, rows_y, sq_x, sq_y, n)
        norm_x = np.sqrt(max(_debiased_dot(norm_x**2, rows_x, rows_x, sq_x, sq_x, n), 0.0))
        norm_y = np.sqrt(max(_debiased_dot(norm_y**2, rows_y, rows_y, sq_y, sq_y, n), 0.0))
    if norm_x == 0 or norm_y == 0:
        raise ValueError("a representation has no variation left to compare: CKA is undefined")
    return float(xty / (norm_x * norm_y))


def rbf_cka(x, y, threshold=0.5, debiased=False):
    """CKA with RBF kernels whose bandwidth is ``threshold`` times the median distance.

    Args:
        x: (n, features_x) array.
        y: (n, features_y) array, the same n examples in the same order.
        threshold: bandwidth as a fraction of the median distance (see ``gram_rbf``).
        debiased: use the unbiased HSIC estimator (needs n >= 4).

    Example:
        >>> x = np.random.default_rng(0).normal(size=(50, 4))
        >>> round(rbf_cka(x, 10 * x + 1), 6)
        1.0
    """
    x, y = _check_pair(x, y, debiased)
    return cka(gram_rbf(x, threshold), gram_rbf(y, threshold), debiased=debiased)


def hsic_unbiased(gram_x, gram_y):
    """The unbiased HSIC estimator of Song et al. 2012 from two (n, n) Gram matrices, n >= 4.

    ``[tr(K L) + 1'K1 1'L1 / ((n-1)(n-2)) - 2/(n-2) 1'K L1] / (n (n-3))`` with the diagonals of
    ``K`` and ``L`` set to zero.
    """
    gram_x, gram_y = _check_gram("gram_x", gram_x), _check_gram("gram_y", gram_y)
    n = gram_x.shape[0]
    if gram_y.shape != gram_x.shape:
        raise ValueError(
            f"gram_x and gram_y must be over the same examples; received shapes "
            f"{gram_x.shape} and {gram_y.shape}"
        )
    if n < 4:
        raise ValueError(f"the unbiased HSIC needs at least 4 examples; received {n}")
    k = gram_x - np.diag(np.diag(gram_x))
    l_ = gram_y - np.diag(np.diag(gram_y))
    rows_k, rows_l = k.sum(axis=1), l_.sum(axis=1)
    total = (
        np.sum(k * l_)  # tr(K L) for symmetric matrices
        + rows_k.sum() * rows_l.sum() / ((n - 1) * (n - 2))
        - 2.0 / (n - 2) * rows_k @ rows_l
    )
    return float(total / (n * (n - 3)))


class MinibatchCKA:
    """Linear CKA accumulated over minibatches (Nguyen et al. 2021).

    Each ``update`` adds the unbiased HSIC (``hsic_unbiased``, linear kernels) of one minibatch
    for the pairs (X, Y), (X, X) and (Y, Y); ``result`` returns
    ``mean HSIC(X, Y) / sqrt(mean HSIC(X, X) * mean HSIC(Y, Y))``, the means taken over the
    minibatches with equal weight.

    What it estimates: every minibatch term is an unbiased estimate of the population HSIC, so
    the result is a consistent estimate of the population CKA, the quantity the debiased
    ``linear_cka`` estimates from the full data. It equals the full debiased CKA exactly when
    there is one minibatch; with several it is not the full-data statistic (pairs of examples
    in different minibatches never meet) and agrees with it up to sampling noise of order
    ``1 / sqrt(n)``. Memory is O(batch^2 + batch x features), whatever the number of examples.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(400, 6))
        >>> metric = MinibatchCKA()
        >>> for i in range(0, 400, 100):
        ...     metric.update(x[i : i + 100], 2 * x[i : i + 100])
        >>> round(metric.result(), 6)
        1.0
    """

    def __init__(self):
        self.reset()

    def reset(self):
        """Forgets all minibatches seen so far."""
        self.num_batches = 0
        self._sums = np.zeros(3)  # HSIC(X, Y), HSIC(X, X), HSIC(Y, Y)
        self._features = None

    def update(self, x_batch, y_batch):
        """Adds one minibatch: (b, features_x) and (b, features_y) of the same b >= 4 examples."""
        x, y = _as_features("X", x_batch), _as_features("Y", y_batch)
        if x.shape[0] != y.shape[0]:
            raise ValueError(
                f"X and Y must hold the same examples (same first dimension); received "
                f"{x.shape[0]} and {y.shape[0]}"
            )
        if x.shape[0] < 4:
            raise ValueError(
                f"each minibatch needs at least 4 examples for the unbiased HSIC; received "
                f"{x.shape[0]}"
            )
        features = (x.shape[1], y.shape[1])
        if self._features is not None and features != self._features:
            raise ValueError(
                f"every minibatch must have the same feature sizes as the first, "
                f"{self._features}; received {features}"
            )
        self._features = features
        gram_x, gram_y = x @ x.T, y @ y.T
        self._sums += (
            hsic_unbiased(gram_x, gram_y),
            hsic_unbiased(gram_x, gram_x),
            hsic_unbiased(gram_y, gram_y),
        )
        self.num_batches += 1

    def result(self):
        """The minibatch CKA over everything seen since the last ``reset``."""
        if self.num_batches == 0:
            raise ValueError("no minibatch seen yet: call update(x_batch, y_batch) first")
        xy, xx, yy = self._sums / self.num_batches
        if xx <= 0 or yy <= 0:
            raise ValueError("a representation has no variation left to compare: CKA is undefined")
        return float(xy / np.sqrt(xx * yy))
