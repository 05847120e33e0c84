"""Logit analysis (Figure 8 and Figure 15): what a model predicts, per true class."""

import numpy as np

from pvr_keras.analysis.labels import check_labels, check_num_classes


def mean_logits_by_class(logits, labels, num_classes):
    """The mean logit vector of the examples of each true class.

    Args:
        logits: (N, num_classes) model outputs.
        labels: (N,) true classes in ``0..num_classes-1``.
        num_classes: number of classes.

    Returns:
        float64 (num_classes, num_classes): row ``c`` is the mean logit vector over the examples
        whose label is ``c``; a class with no example gets a row of NaN (its mean is undefined).

    Example:
        >>> logits = np.array([[2.0, 0.0], [4.0, 0.0], [0.0, 1.0]])
        >>> mean_logits_by_class(logits, np.array([0, 0, 1]), 2)
        array([[3., 0.],
               [0., 1.]])
    """
    check_num_classes(num_classes)
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[1] != num_classes:
        raise ValueError(
            f"logits must have shape (N, num_classes={num_classes}); received {logits.shape}"
        )
    labels = check_labels(labels, logits.shape[0], num_classes, "logits")
    sums = np.zeros((num_classes, num_classes))
    np.add.at(sums, labels, logits)
    counts = np.bincount(labels.astype(np.int64), minlength=num_classes)[:, None]
    with np.errstate(invalid="ignore"):
        return sums / counts
