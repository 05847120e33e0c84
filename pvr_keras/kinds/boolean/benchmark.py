"""The boolean kind's benchmark hooks (``BOOLEAN_KIND.benchmark``): its configs' rows in NumPy
(the test split is the whole cube, in row order), their TFDS features, their text form and
their scoring (the mean squared error). Named by reference from ``kind``; at the benchmarks'
layer (it imports ``benchmarks.sources``), so nothing in the kinds layer imports it."""

import numpy as np

from pvr_keras.benchmarks.sources import cube
from pvr_keras.kinds.boolean.numpy_data import boolean_examples
from pvr_keras.kinds.boolean.task import split_frozen

_AGGREGATION = {
    "parity": "the product of those bits",
    "majority": "the sign of their sum (0 when the sum is 0)",
    "min": "the smallest of those bits",
    "max": "the largest of those bits",
}


def cube_size(task):
    """The test split's size: the cube's 2**d points."""
    return 2**task.num_bits


def rows(source, index):
    """``bits`` int8 (B, d) of +1/-1, ``label`` float32, ``pointer`` int32 (the value bit
    named), ``frozen`` int64 (the split's frozen-bit mask); the test split is the cube's row
    ``index`` (``benchmarks.cube``)."""
    task = source.task
    if source.split == "test":
        x = cube(task.num_bits, index)
        y, frozen = task.label(x).astype(np.float32), 0
    else:
        x, y = boolean_examples(task, index, seed=source.seed, split=source.stream,
                                holdout=source.config.holdout)  # fmt: skip
        frozen = split_frozen(task, source.config.holdout, source.stream)
    return {"bits": x, "label": y, "pointer": task.pointer(x).astype(np.int32),
            "frozen": np.full(len(x), frozen, np.int64)}  # fmt: skip


def features(task):
    import tensorflow_datasets as tfds

    return tfds.features.FeaturesDict({
        "bits": tfds.features.Tensor(shape=(task.num_bits,), dtype=np.int8),
        "label": np.float32,
        "pointer": np.int32,
        "frozen": np.int64,
    })  # fmt: skip


def text_rule(task):
    p, v, w = task.pointer_bits, task.num_value_bits, task.window
    cut = ("wrapping around after the last value bit" if task.window_mode == "cyclic"
           else "stopping at the last value bit")  # fmt: skip
    take = (f"Take {w} value bits starting at position p ({cut}); the answer is "
            f"{_AGGREGATION[task.aggregation]}.")  # fmt: skip
    if w == 1:  # one bit: every aggregation of it is the bit
        take = "Take the value bit at position p; the answer is that bit."
    return (f"Pointer value retrieval on bits. Each sequence has {p + v} values, each +1 or -1. "
            f"The first {p} are pointer bits: read +1 as 1 and -1 as 0, most significant first, "
            f"to get a number p. The other {v} are value bits, at positions 0-{v - 1}. {take} "
            "Reply with the answer (-1, 0 or 1) only.")  # fmt: skip


def text_sequence(row):
    return " ".join(f"{int(b):+d}" for b in row["bits"])


def text_answers(task):
    return (-1, 0, 1)  # the rule's words name all three, whatever the window


def score(source, rows, predictions):
    """Real-valued predictions: ``mse``, ``half_mse`` (on the cube for the test split: the
    generalisation error of Abbe et al. 2022), ``sign_accuracy`` and, for a frozen bit,
    ``frozen_bit`` with its Boolean ``influence`` (the prediction of ``half_mse``)."""
    n = len(rows["label"])
    p = np.asarray(predictions)
    if p.ndim == 2 and p.shape[1] == 1:
        p = p[:, 0]
    if p.shape != (n,):
        raise ValueError(f"Boolean predictions must be real values of shape ({n},); "
                         f"received shape {p.shape}")  # fmt: skip
    if not np.issubdtype(p.dtype, np.number) or not np.isfinite(p).all():
        raise ValueError("Boolean predictions must be finite numbers")
    error = (p.astype(np.float64) - rows["label"]) ** 2
    report = dict(mse=float(error.mean()), half_mse=float(error.mean() / 2),
                  sign_accuracy=float((np.sign(p) == np.sign(rows["label"])).mean()))  # fmt: skip
    frozen = source.config.holdout
    if frozen and frozen & (frozen - 1) == 0:  # one frozen bit
        from pvr_keras.analysis.boolean import boolean_influence, target_values

        bit = frozen.bit_length() - 1
        influence = boolean_influence(target_values(source.task))[bit]
        report.update(frozen_bit=bit, influence=float(influence))
    return report
