"""Token holdout (Section 6.2, Figure 14): what a model predicts on the held-out windows, and
what its training data taught it about them.

For each held-out tuple t (its true label y), on the held-out test examples whose window is t:
the accuracy and the histogram of predicted labels; and, on the training split, how often y
comes with each digit of t in its place (``P(label = y | window[j] = t[j])``) and anywhere in
the window. Training never shows t itself, and when every order of t is held out it may never
show y beside any digit of t at all (window 2, mod_sum, (0, 1) and (1, 0) held out: a window
holding a 0 or a 1 never has label 1), so a model that learned the labels of similar windows
rather than the rule predicts anything but y there. With one order held out, (1, 0) still
shows label 1 beside a 0 and a 1.
"""

import numpy as np

from pvr_keras.tasks import aggregate


def windows_of(task, x):
    """The value windows of token sequences: (N, seq_len) -> (N, window)."""
    pointers = x[:, 0] if task.pointer else np.zeros(len(x), np.int64)
    return np.take_along_axis(np.asarray(x)[:, 1:], task.window_positions(pointers), axis=1)


def _rate(labels, mask, label):
    return float((labels[mask] == label).mean()) if mask.any() else None


def held_out_summary(task, holdout, test_x, test_y, predicted, train_x, train_y):
    """Per held-out tuple: test accuracy, predicted-label histogram and training co-occurrence.

    Args:
        task: the ``TokenTask``.
        holdout: holdout-k of the run (>= 1).
        test_x, test_y: held-out test examples (their windows are held-out tuples).
        predicted: (N,) the model's predicted labels on ``test_x``.
        train_x, train_y: examples of the run's training split.

    Returns:
        dict: ``tuples`` (one dict per held-out tuple: ``tuple``, ``label``, ``count``,
        ``accuracy``, ``predicted_counts``, ``train_rate_given_digit`` (per position j,
        P(label = y | window[j] = t[j]) in training), ``train_rate_given_digit_anywhere`` (per
        digit d of t, P(label = y | d anywhere in the window)), ``train_rate``
        (P(label = y))), and ``accuracy``, ``predicted_counts``
        over all held-out test examples.
    """
    task.check_holdout(holdout)
    if holdout < 1:
        raise ValueError(f"holdout must be >= 1 for a held-out analysis; received {holdout}")
    test_x, test_y, predicted = np.asarray(test_x), np.asarray(test_y), np.asarray(predicted)
    if not len(test_x) == len(test_y) == len(predicted):
        raise ValueError(
            f"test_x, test_y and predicted must have one row per example; received "
            f"{len(test_x)}, {len(test_y)}, {len(predicted)}"
        )
    k = task.num_classes
    test_windows = windows_of(task, test_x)
    train_windows = windows_of(task, np.asarray(train_x))
    train_y = np.asarray(train_y)
    rows = []
    for t in task.holdout_tuples(holdout):
        mask = (test_windows == t).all(axis=1)
        label = int(aggregate(task.aggregation, t[None], task.num_values)[0])
        given = [_rate(train_y, train_windows[:, j] == t[j], label) for j in range(task.window)]
        anywhere = [_rate(train_y, (train_windows == d).any(axis=1), label) for d in t]
        rows.append(
            {
                "tuple": t.tolist(),
                "label": label,
                "count": int(mask.sum()),
                "accuracy": float((predicted[mask] == label).mean()) if mask.any() else None,
                "predicted_counts": np.bincount(predicted[mask], minlength=k).tolist(),
                "train_rate_given_digit": given,
                "train_rate_given_digit_anywhere": anywhere,
                "train_rate": float((train_y == label).mean()),
            }
        )
    return {
        "holdout": int(holdout),
        "accuracy": float((predicted == test_y).mean()),
        "predicted_counts": np.bincount(predicted, minlength=k).tolist(),
        "tuples": rows,
    }
