"""Logit analysis (Figures 8 and 15): what a model predicts, per true class and per cell."""

import numpy as np

from pvr_keras.analysis.labels import check_labels, check_num_classes
from pvr_keras.checks import check_real_dtype


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
    logits = check_real_dtype("logits", np.asarray(logits)).astype(np.float64)
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


CELLS = ("top right", "bottom left", "bottom right")  # the value cells of a 2x2 block


def logit_analysis(task, logits, cell_labels, labels):
    """Figure 8's numbers for each model, from their logits on the same held-out test set.

    For each model: its accuracy; per subset of the examples (pointer 0 with label 1-3, as
    the paper's Figure 8; and the examples whose pointer names each value cell) the count,
    mean logit vector and accuracy, and for the cell subsets the mean logit of the classes
    held out in that cell against the other classes (how far the holdout pushed them down);
    and the mean logit vector per true class.

    Args:
        task: the 2x2 ``BlockTask``.
        logits: ``{model name: (N, 10) logits}`` on the same held-out test examples.
        cell_labels: (N, 4) class of every cell (cell 0 the pointer digit).
        labels: (N,) true labels.

    Returns:
        ``{model name: summary}`` (JSON-ready).
    """
    pointer = np.asarray(cell_labels)[:, 0]
    labels = np.asarray(labels)
    named = task.named_cell(pointer)  # 1..3
    subsets = {"pointer 0, label 1-3": (pointer == 0) & np.isin(labels, (1, 2, 3))}
    for k, name in enumerate(CELLS):
        subsets[f"pointer to {name}"] = named == k + 1
    held = dict(zip(CELLS, task.holdout_classes(), strict=True))
    result = {}
    for model, z in logits.items():
        z = check_real_dtype(f"the logits of {model}", np.asarray(z)).astype(np.float64)
        predicted = z.argmax(axis=1)
        groups = {}
        for name, mask in subsets.items():
            mean = z[mask].mean(axis=0) if mask.any() else np.full(z.shape[1], np.nan)
            groups[name] = {
                "count": int(mask.sum()),
                "mean_logits": mean.tolist(),
                "accuracy": float((predicted[mask] == labels[mask]).mean()) if mask.any() else None,
            }
        for name in CELLS:  # how much the held-out classes are pushed down
            group = groups[f"pointer to {name}"]
            mask = np.zeros(z.shape[1], bool)
            mask[list(held[name])] = True
            mean = np.asarray(group["mean_logits"])
            group["held_out_classes"] = list(held[name])
            group["mean_logit_held_out"] = float(mean[mask].mean())
            group["mean_logit_other"] = float(mean[~mask].mean())
        result[model] = {
            "accuracy": float((predicted == labels).mean()),
            "subsets": groups,
            "mean_logits_by_class": mean_logits_by_class(z, labels, task.num_classes).tolist(),
        }
    return result
