"""Scoring predictions made anywhere on a benchmark config's split.

``score(name, predictions)``: predictions for every example of the split, in index order:
class ids (N,) or scores / logits (N, classes) for token, block and sequence configs; real
values (N,) for Boolean configs. The report names the config, its version, the split, its
size and the split's SHA-256 (from the committed manifest; token and Boolean), so a number is
tied to the examples it was measured on.
"""

import numpy as np

from pvr_keras.benchmarks.sources import Source
from pvr_keras.checks import check_real_dtype


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
        with ``per_pointer`` (accuracy per pointer value, i.e. per window position) and, for
        holdout configs, ``held_out`` / ``rest`` (examples whose window is a held-out tuple,
        and the others); Boolean: ``mse``, ``half_mse`` (on the cube for the test split: the
        generalisation error of Abbe et al. 2022), ``sign_accuracy`` and, for a frozen bit,
        ``frozen_bit`` with its Boolean ``influence`` (the prediction of ``half_mse``).

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
    report = {"config": config.name, "version": config.version, "split": split, "size": size,
              "examples": n,
              "sha256": recorded(config.name, split, size) if config.family in ("token", "boolean")
              else None}  # fmt: skip
    if config.family == "boolean":
        p = np.asarray(predictions)
        if p.ndim == 2 and p.shape[1] == 1:
            p = p[:, 0]
        if p.shape != (n,):
            raise ValueError(f"Boolean predictions must be real values of shape ({n},); "
                             f"received shape {p.shape}")  # fmt: skip
        if not np.issubdtype(p.dtype, np.number) or not np.isfinite(p).all():
            raise ValueError("Boolean predictions must be finite numbers")
        error = (p.astype(np.float64) - rows["label"]) ** 2
        report.update(mse=float(error.mean()), half_mse=float(error.mean() / 2),
                      sign_accuracy=float((np.sign(p) == np.sign(rows["label"])).mean()),
                      )  # fmt: skip
        frozen = config.holdout
        if frozen and frozen & (frozen - 1) == 0:  # one frozen bit
            from pvr_keras.analysis.boolean import boolean_influence, target_values

            bit = frozen.bit_length() - 1
            influence = boolean_influence(target_values(src.task))[bit]
            report.update(frozen_bit=bit, influence=float(influence))
        return report
    num_classes = 10
    classes = _classes(predictions, n, num_classes)
    correct = classes == rows["label"]
    report["accuracy"] = _accuracy(correct)
    if "pointer" in rows:
        pointers = rows["pointer"]
        report["per_pointer"] = {int(v): _accuracy(correct, pointers == v)
                                 for v in np.unique(pointers)}  # fmt: skip
    if "held_out" in rows and config.holdout:
        report["held_out"] = _accuracy(correct, rows["held_out"])
        report["rest"] = _accuracy(correct, ~rows["held_out"])
    return report


__all__ = ["score"]
