"""The five window aggregations of the paper (Section 4.1), as NumPy references.

Each function takes the window values, shape (N, window) ints in [0, num_values), and
returns the (N,) labels. Tie rules are pinned in DESIGN.md:

- ``mod_sum``: sum of the window modulo ``num_values``.
- ``median``: the lower middle value of the sorted window when the window is even.
- ``maj_vote``: the most common value; ties go to the smallest value.
- ``min`` / ``max``: smallest / largest value.
"""

import numpy as np

AGGREGATIONS = ("mod_sum", "median", "maj_vote", "min", "max")


def mod_sum(window, num_values):
    return window.sum(axis=1) % num_values


def median(window, num_values):
    del num_values
    return np.sort(window, axis=1)[:, (window.shape[1] - 1) // 2]


def maj_vote(window, num_values):
    counts = np.zeros((window.shape[0], num_values), np.int64)
    np.add.at(counts, (np.arange(window.shape[0])[:, None], window), 1)
    return counts.argmax(axis=1)  # argmax returns the first maximum: the smallest value


def minimum(window, num_values):
    del num_values
    return window.min(axis=1)


def maximum(window, num_values):
    del num_values
    return window.max(axis=1)


AGGREGATE = {
    "mod_sum": mod_sum,
    "median": median,
    "maj_vote": maj_vote,
    "min": minimum,
    "max": maximum,
}


def check_aggregation(aggregation):
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"aggregation must be one of {', '.join(AGGREGATIONS)}; received {aggregation!r}"
        )
    return aggregation


def aggregate(aggregation, window, num_values):
    """Applies ``aggregation`` to ``window`` of shape (N, w); returns (N,) int64 labels."""
    window = np.asarray(window, np.int64)
    return AGGREGATE[check_aggregation(aggregation)](window, num_values).astype(np.int64)
