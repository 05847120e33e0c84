"""Which circular frequencies of the label a representation uses (for the mod_sum tasks).

A network that computes a sum modulo C can place the C labels on circles: the mean feature
vector of class y then varies like cos(2 pi k y / C) and sin(2 pi k y / C) for a few
frequencies k. Two networks that picked different frequencies encode the label equally well,
yet their class-mean Gram matrices, cos(2 pi k (y - y') / C), are orthogonal for different k,
so linear CKA between them is near 0. ``label_frequencies`` says which frequencies each
representation uses, so that a CKA value can be read against them (recipes/fast_slow.py).
"""

import numpy as np

from pvr_keras.analysis.labels import check_labels, check_num_classes


def label_frequencies(features, labels, num_classes):
    """How much of a representation is explained by the label, and by which frequencies.

    The features are centred over the examples; ``M[c]`` is the mean centred feature vector of
    the examples of class ``c``. The power of frequency ``k`` is ``||sum_c M[c] exp(2 pi i k c
    / C)||^2`` (the discrete Fourier transform over the classes); frequencies ``k`` and ``C - k``
    are one frequency (cos and sin of the same circle) and are counted together.

    Args:
        features: (N, D) activations (e.g. ``pre_logits``), one row per example.
        labels: (N,) integer labels in ``0..num_classes-1``; every class must occur.
        num_classes: C, the number of classes.

    Returns:
        dict with ``class_share``: the fraction of the feature variance that the class means
        explain (sum over examples of ||M[y]||^2 over the total squared norm; 0 when the
        features are constant), and ``frequency_share``: a list of C // 2 + 1 floats, the
        share of the class means' power at frequency k = 0, 1, ..., C // 2 (summing to 1; all
        0 when the class means are all 0). Frequency 0 is nonzero only when the classes have
        unequal counts.

    Example:
        >>> y = np.arange(10).repeat(3)
        >>> circle = np.stack([np.cos(2 * np.pi * 3 * y / 10), np.sin(2 * np.pi * 3 * y / 10)], 1)
        >>> [round(s, 3) for s in label_frequencies(circle, y, 10)["frequency_share"]]
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    """
    check_num_classes(num_classes, minimum=2)
    features = np.asarray(features, dtype=np.float64)
    if features.ndim != 2 or features.shape[0] == 0:
        raise ValueError(f"features must have shape (N, D) with N >= 1; received {features.shape}")
    labels = check_labels(labels, features.shape[0], num_classes, "features")
    counts = np.bincount(labels, minlength=num_classes)
    if (counts == 0).any():
        missing = np.flatnonzero(counts == 0).tolist()
        raise ValueError(f"every class needs an example; classes {missing} have none")
    if not np.isfinite(features).all():
        raise ValueError("features must be finite (no NaN or inf)")
    centred = features - features.mean(axis=0)
    sums = np.zeros((num_classes, features.shape[1]))
    np.add.at(sums, labels, centred)
    means = sums / counts[:, None]
    total = float((centred**2).sum())
    explained = float((counts * (means**2).sum(axis=1)).sum())
    power = (np.abs(np.fft.fft(means, axis=0)) ** 2).sum(axis=1)  # (C,), power[k] = power[C-k]
    half = num_classes // 2
    folded = power[: half + 1].copy()
    folded[1 : (num_classes + 1) // 2] *= 2  # k and C - k together (not 0, nor C/2 if C even)
    whole = folded.sum()
    return {
        "class_share": explained / total if total > 0 else 0.0,
        "frequency_share": (folded / whole if whole > 0 else np.zeros_like(folded)).tolist(),
    }


def main_frequencies(frequency_share, at_least=0.1):
    """The frequencies that count: ``[(k, share), ...]`` with share >= ``at_least``, largest
    first (``frequency_share`` as ``label_frequencies`` returns it).

    Example:
        >>> main_frequencies([0.0, 0.66, 0.0, 0.0, 0.05, 0.29])
        [(1, 0.66), (5, 0.29)]
    """
    kept = [(k, float(s)) for k, s in enumerate(frequency_share) if s >= at_least]
    return sorted(kept, key=lambda ks: (-ks[1], ks[0]))
