"""Checks shared by the analyses that take class labels (logits.py, frequencies.py)."""

import numpy as np

from pvr_keras.checks import check_int


def check_num_classes(num_classes, minimum=1):
    """Raises ValueError unless ``num_classes`` is an integer >= ``minimum``."""
    check_int("num_classes", num_classes, minimum)


def check_labels(labels, num_examples, num_classes, match):
    """``labels`` as an array, or ValueError: shape (num_examples,), integers in range.

    ``match`` names the array the labels go with (for the message)."""
    labels = np.asarray(labels)
    if labels.shape != (num_examples,):
        raise ValueError(
            f"labels must have shape (N,) = ({num_examples},) to match {match}; received "
            f"{labels.shape}"
        )
    if labels.size and labels.dtype.kind not in "iu":  # not timedelta64 (NumPy: an integer)
        raise ValueError(f"labels must be integers; received dtype {labels.dtype}")
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"labels must be in 0..{num_classes - 1}; received values in "
            f"{labels.min()}..{labels.max()}"
        )
    return labels
