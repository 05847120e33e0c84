"""Logit analysis (Figure 8 and Figure 15): what a model predicts, per true class."""

import numpy as np


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
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise ValueError(f"num_classes must be a positive integer; received {num_classes!r}")
    if num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer; received {num_classes!r}")
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels)
    if logits.ndim != 2 or logits.shape[1] != num_classes:
        raise ValueError(
            f"logits must have shape (N, num_classes={num_classes}); received {logits.shape}"
        )
    if labels.shape != (logits.shape[0],):
        raise ValueError(
            f"labels must have shape (N,) = ({logits.shape[0]},) to match logits; received "
            f"{labels.shape}"
        )
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integers; received dtype {labels.dtype}")
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"labels must be in 0..{num_classes - 1}; received values in "
            f"{labels.min()}..{labels.max()}"
        )
    sums = np.zeros((num_classes, num_classes))
    np.add.at(sums, labels, logits)
    counts = np.bincount(labels.astype(np.int64), minlength=num_classes)[:, None]
    with np.errstate(invalid="ignore"):
        return sums / counts
