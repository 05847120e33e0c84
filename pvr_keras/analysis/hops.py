"""Accuracy per hop count (multi-hop PVR, the ``chain`` kind): the counts of one run's test
set by hop count, and their summary over seeds.

A run's counts are what a record keeps (``{"hops", "examples", "correct", "majority"}``, one
entry per hop count): the examples of each hop count, how many the model got right, and how
many the most frequent label of that hop count covers (the majority-class baseline: the
label's distribution moves with the hop count). Accuracies are computed from them, so a table
made from records is made from these counts.

    >>> import numpy as np
    >>> row = hop_counts(np.array([1, 1, 2, 2, 2]), np.array([3, 3, 0, 1, 1]),
    ...                  np.array([3, 0, 0, 1, 1]))
    >>> row["correct"], accuracies(row)
    ([1, 3], [0.5, 1.0])
"""

import numpy as np


def hop_counts(hops, labels, predicted, values=None):
    """The counts of one test set by hop count.

    Args:
        hops: (N,) hop count of each example (``ChainTask.count_hops``).
        labels: (N,) true labels.
        predicted: (N,) predicted labels.
        values: the hop counts to report, in order (default: those present, sorted); a hop
            count without examples has 0 examples.

    Returns:
        ``{"hops": [k, ...], "examples": [...], "correct": [...], "majority": [...]}``
        (plain ints): per hop count, its examples, those predicted right, and those of its
        most frequent label.
    """
    hops, labels, predicted = (np.asarray(a).reshape(-1) for a in (hops, labels, predicted))
    if not len(hops) == len(labels) == len(predicted):
        raise ValueError(
            f"hops, labels and predicted must have one entry per example; received lengths "
            f"{len(hops)}, {len(labels)}, {len(predicted)}"
        )
    values = sorted(int(k) for k in np.unique(hops)) if values is None else list(values)
    row = {"hops": [int(k) for k in values], "examples": [], "correct": [], "majority": []}
    for k in values:
        mine = hops == k
        row["examples"].append(int(mine.sum()))
        row["correct"].append(int((predicted[mine] == labels[mine]).sum()))
        counts = np.unique(labels[mine], return_counts=True)[1]
        row["majority"].append(int(counts.max()) if len(counts) else 0)
    return row


def accuracies(row, key="correct"):
    """``row[key] / row["examples"]`` per hop count (None where there is no example):
    the accuracy, or with ``key="majority"`` the majority class's."""
    return [c / n if n else None for c, n in zip(row[key], row["examples"], strict=True)]


def summarise(rows, label="label"):
    """Per ``row[label]`` (in first-seen order), over its rows (seeds): ``{"label", "seeds",
    "hops", "mean", "min", "max"}``, the accuracy per hop count of the hop counts all its rows
    report (None where no row has an example of it)."""
    groups = {}
    for row in rows:
        groups.setdefault(row[label], []).append(row)
    found = []
    for name, mine in groups.items():
        hops = [k for k in mine[0]["hops"] if all(k in r["hops"] for r in mine)]
        per_hop = []
        for k in hops:
            values = [accuracies(r)[r["hops"].index(k)] for r in mine]
            per_hop.append([v for v in values if v is not None])
        found.append({
            "label": name,
            "seeds": len(mine),
            "hops": hops,
            "mean": [float(np.mean(v)) if v else None for v in per_hop],
            "min": [float(np.min(v)) if v else None for v in per_hop],
            "max": [float(np.max(v)) if v else None for v in per_hop],
        })  # fmt: skip
    return found


def majority(rows):
    """The majority class's accuracy per hop count, pooled over the distinct test sets of
    ``rows`` (one per ``row["seed"]``: runs of one seed share their test set):
    ``{"hops": [...], "values": [...]}`` for the first row's hop counts (None where no row
    has an example of one), or None without rows."""
    if not rows:
        return None
    sets = list({row["seed"]: row for row in rows}.values())
    values = []
    for k in rows[0]["hops"]:
        pairs = [(r["majority"][r["hops"].index(k)], r["examples"][r["hops"].index(k)])
                 for r in sets if k in r["hops"]]  # fmt: skip
        total = sum(n for _, n in pairs)
        values.append(sum(m for m, _ in pairs) / total if total else None)
    return {"hops": list(rows[0]["hops"]), "values": values}


__all__ = ["accuracies", "hop_counts", "majority", "summarise"]
