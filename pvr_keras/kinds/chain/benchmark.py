"""The chain kind's benchmark hooks (``CHAIN_KIND.benchmark``): its configs' rows in NumPy,
their TFDS features, their text form and their scoring per hop count beside the majority-class
baseline. Named by reference from ``kind.py`` (this module stands at the benchmarks' layer).

The baseline of hop count k is the accuracy of always answering that hop count's most
frequent label, computed exactly from the rule (not from a split's labels):

- conditional: the label is uniform in ``0..pk``, pk the largest of k distinct pointers drawn
  from ``1..L-1``, so labels ``0..k`` are the most frequent (tied), each with probability
  ``E[1 / (pk + 1)]``, where ``P(pk = p) = C(p - 1, k - 1) / C(L - 1, k)`` for p in k..L-1
  (at L = 40: 0.084 at k = 1, 0.028 at k = 8);
- cycle: k + 1 steps from 0 on a uniformly random cycle through the L positions reach a
  position uniform in ``1..L-1`` (``1 / (L - 1)``), or 0 itself when k = L - 1 (1.0).
"""

import math

import numpy as np

from pvr_keras.benchmarks.scoring import classification
from pvr_keras.kinds.chain.numpy_data import chain_examples

SLICES = ("hops",)


def rows(source, index):
    """``tokens`` int32 (B, seq_len), ``label`` int32, ``hops`` int32 (the example's hop
    count), ``chain`` int32 (B, task.max_hops): the pointers followed, then -1
    (``ChainTask.chain``; one width for every split of a config)."""
    task = source.task
    x, y = chain_examples(task, index, seed=source.seed, split=source.stream)
    return {"tokens": x, "label": y, "hops": task.count_hops(x).astype(np.int32),
            "chain": task.chain(x, task.max_hops).astype(np.int32)}  # fmt: skip


def features(task):
    import tensorflow_datasets as tfds

    return tfds.features.FeaturesDict({
        "tokens": tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32),
        "label": tfds.features.Tensor(shape=(), dtype=np.int32, minimum=0,
                                      maximum=task.num_classes - 1),  # int32 as the source's
        "hops": np.int32,
        "chain": tfds.features.Tensor(shape=(task.max_hops,), dtype=np.int32),
    })  # fmt: skip


def text_rule(task):
    n, last = task.length, task.length - 1
    if task.form == "cycle":
        return (f"Pointer chasing on a cycle. Each sequence has {task.seq_len} numbers. The "
                f"first is a hop count k. The other {n} numbers are at positions 0-{last} "
                f"(not counting the first), each in 0-{last}: the number at position c is the "
                f"position that comes after c. Start at position 0 and take k + 1 steps, each "
                f"to the number at the current position. The answer is the position reached "
                f"(0-{last}). Reply with the answer number only.")  # fmt: skip
    return (f"Pointer chasing. Each sequence has {n} numbers, at positions 0-{last}, each in "
            f"0-{last}. Start at position 0. Read the number at the current position: if it is "
            f"greater than the current position, move to the position it names and read "
            f"again; otherwise that number is the answer (0-{last}). Reply with the answer "
            f"number only.")  # fmt: skip


def text_sequence(row):
    return " ".join(str(int(t)) for t in row["tokens"])


def majority_baseline(task, hops):
    """The accuracy of always answering the most frequent label of examples with ``hops``
    hops, exactly (see the module docstring)."""
    n, k = task.length, int(hops)
    if task.form == "cycle":
        return 1.0 if k == n - 1 else 1 / (n - 1)
    # log P(pk = p), p = k..L-1: from log C(k - 1, k - 1) = 0 by the ratios p / (p - k + 1).
    p = np.arange(k, n, dtype=np.float64)
    log_c = np.concatenate([[0.0], np.cumsum(np.log(p[1:] - 1) - np.log(p[1:] - k))])
    log_total = math.lgamma(n) - math.lgamma(k + 1) - math.lgamma(n - k)  # log C(L - 1, k)
    return float(np.sum(np.exp(log_c - log_total) / (p + 1)))


def score(source, rows, predictions):
    """Classification (``accuracy``, ``per_hops``: accuracy per hop count) and the
    majority-class baseline beside it: ``baseline_per_hops`` (the same keys as ``per_hops``:
    the accuracy of always answering that hop count's most frequent label, exact from the
    rule) and ``baseline`` (theirs over the split's examples: the accuracy of answering each
    example its hop count's most frequent label)."""
    report = classification(source, rows, predictions, SLICES)
    hops, counts = np.unique(rows["hops"], return_counts=True)
    per_hops = {int(k): majority_baseline(source.task, k) for k in hops}
    report["baseline_per_hops"] = per_hops
    total = counts.sum()
    report["baseline"] = float(sum(per_hops[int(k)] * c for k, c in zip(hops, counts, strict=True))
                               / total) if total else None  # fmt: skip
    return report


def text_answers(task):
    return tuple(range(task.length))
