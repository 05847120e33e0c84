"""Scoring predictions made anywhere on a benchmark config's split.

``score(name, predictions)``: predictions for every example of the split, in index order:
class ids (N,) or scores / logits (N, classes) for token, block and sequence configs; real
values (N,) for Boolean configs. The report names the config, its version, the split, its
size and the split's SHA-256 (from the committed manifest; token and Boolean), so a number is
tied to the examples it was measured on. A kind scores its own way with ``BenchmarkHooks.score``
(the Boolean kind: the mean squared error); the others are classification, with accuracy per
value of the kind's ``slices`` (the token kind: per pointer).
"""

import numpy as np

from pvr_keras.benchmarks.sources import Source
from pvr_keras.checks import check_real_dtype
from pvr_keras.references import resolve


def _classes(predictions, n, num_classes):
    p = np.asarray(predictions)
    if p.ndim == 2:
        if p.shape != (n, num_classes):
            raise ValueError(f"predictions of shape (N, classes) must be ({n}, {num_classes}); "
                             f"received {p.shape}")  # fmt: skip
        if not np.issubdtype(p.dtype, np.number) or not np.isfinite(p).all():
            raise ValueError("score predictions must be finite numbers")
        return p.argmax(axis=1)
    if p.ndim != 1 or len(p) != n:
        raise ValueError(f"predictions must hold one class id per example of the split ({n}); "
                         f"received shape {p.shape}")  # fmt: skip
    if not np.issubdtype(p.dtype, np.integer):
        if not (np.issubdtype(p.dtype, np.floating) and np.isfinite(p).all()
                and (p == np.round(p)).all()):  # fmt: skip
            raise ValueError(f"class-id predictions must be integers; received dtype {p.dtype}")
    if len(p) and (p.min() < 0 or p.max() >= num_classes):
        raise ValueError(f"class ids must be in 0..{num_classes - 1}; received "
                         f"{p.min()}..{p.max()}")  # fmt: skip
    return p.astype(np.int64)


def _accuracy(correct, mask=None):
    if mask is not None:
        correct = correct[mask]
    return float(correct.mean()) if correct.size else None


def score(name, predictions, split="test", *, size="standard", data_dir=None):
    """Scores ``predictions`` on a split of config ``name``.

    Returns:
        A dict: ``config``, ``version``, ``split``, ``size``, ``examples``, ``sha256`` (the
        committed hash of the split; None for image configs), and the metrics: ``accuracy``
        with ``per_pointer`` (token: accuracy per pointer value, i.e. per window position)
        and, for holdout configs, ``held_out`` / ``rest`` (examples whose window is a
        held-out tuple, and the others); or the metrics of the kind's
        ``BenchmarkHooks.score``: Boolean ``mse``, ``half_mse`` (on the cube for the test
        split: the generalisation error of Abbe et al. 2022), ``sign_accuracy`` and, for a
        frozen bit, ``frozen_bit`` with its Boolean ``influence`` (the prediction of
        ``half_mse``).

    Raises:
        ValueError: an unknown config or split, predictions of the wrong length, shape,
            dtype or class range.
    """
    from pvr_keras.benchmarks.hashes import recorded

    # Real numbers only: no complex logits or values, no timedelta64 "integers".
    predictions = check_real_dtype("predictions", np.asarray(predictions), "iuf")
    src = Source(name, split, size=size, data_dir=data_dir)
    config = src.config
    n = len(src)
    rows = src.rows(np.arange(n, dtype=np.int64))
    hooks = config.hooks
    report = {"config": config.name, "version": config.version, "split": split, "size": size,
              "examples": n,
              "sha256": recorded(config.name, split, size) if hooks.hashed else None}  # fmt: skip
    if hooks.score is not None:
        report.update(resolve(hooks.score)(src, rows, predictions))
        return report
    report.update(classification(src, rows, predictions, hooks.slices))
    return report


def classification(source, rows, predictions, slices=()):
    """``accuracy`` of class-id predictions (or scores, their argmax) on ``rows``,
    ``per_<key>`` (accuracy per value of ``rows[key]``) for each key of ``slices``, and
    ``held_out`` / ``rest`` for a holdout config whose rows hold ``held_out``."""
    n = len(rows["label"])
    classes = _classes(predictions, n, source.task.num_classes)
    correct = classes == rows["label"]
    report = {"accuracy": _accuracy(correct)}
    for key in slices:
        values = rows[key]
        report[f"per_{key}"] = {int(v): _accuracy(correct, values == v)
                                for v in np.unique(values)}  # fmt: skip
    if "held_out" in rows and source.config.holdout:
        report["held_out"] = _accuracy(correct, rows["held_out"])
        report["rest"] = _accuracy(correct, ~rows["held_out"])
    return report


__all__ = ["score"]
