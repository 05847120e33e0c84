"""Fast and slow learners (Section 6.1, Figure 12; Appendix E, Figure 18).

The rule, stated once (``RULE``):

1. A run's *fit epoch* is the first epoch after which its training accuracy, evaluated on
   training examples after the epoch (``train_eval_accuracy`` of the run record), is
   ``>= threshold`` (default 0.999, i.e. 100% up to 1 example in 1000). A run that never
   gets there has no fit epoch.
2. Let ``e0`` be the earliest fit epoch among the runs. A run is *fast* if it fits by
   ``fast_within * e0`` (default 1.25), *slow* if it fits at ``slow_after * e0`` (default 1.5)
   or later and at least ``min_gap`` epochs (default 2) after ``e0``, or never fits, and
   *between* otherwise (neither, left out of the comparison).

So "fast" and "slow" are relative to the other runs (seeds) of the same setting, as in the
paper; runs that all learn at about the same pace have no slow learner, and the fastest run
sets the pace whatever the majority does.
"""

import dataclasses
import math

from pvr_keras.checks import check_number

THRESHOLD = 0.999
FAST_WITHIN = 1.25
SLOW_AFTER = 1.5
MIN_GAP = 2
RULE = (
    "fit epoch = first epoch with training accuracy (evaluated after the epoch) >= "
    "{threshold}; with e0 the earliest fit epoch of the runs: fast = fits by {fast_within} e0, "
    "slow = fits at {slow_after} e0 or later and >= {min_gap} epochs after e0, or never fits; "
    "between = neither"
)


@dataclasses.dataclass(frozen=True)
class Learner:
    """How one run learned: name, fit epoch (None: never), ``"fast"``/``"between"``/``"slow"``."""

    name: str
    fit_epoch: int | None
    speed: str


def _accuracies(history, key):
    """(epochs, accuracies) of a run-record history dict or a plain per-epoch sequence."""
    if isinstance(history, dict):
        if key not in history:
            raise ValueError(f"history must have a {key!r} column; has {sorted(history)}")
        values = list(history[key])
        epochs = list(history.get("epoch") or range(1, len(values) + 1))
        if len(epochs) != len(values):
            raise ValueError(
                f"history 'epoch' and {key!r} must have the same length; received "
                f"{len(epochs)} and {len(values)}"
            )
    else:
        try:
            values = list(history)
        except TypeError:
            raise ValueError(
                f"history must be a run-record history dict or a sequence of per-epoch "
                f"accuracies; received {type(history).__name__}"
            ) from None
        epochs = list(range(1, len(values) + 1))
    return epochs, values


def fit_epoch(history, threshold=THRESHOLD, key="train_eval_accuracy"):
    """The first epoch whose evaluated training accuracy is ``>= threshold``, else None.

    Args:
        history: a run record's ``history`` dict (``epoch`` and ``key`` columns), or a
            sequence of per-epoch accuracies (epoch 1 first). ``None`` entries count as not
            reached.
        threshold: accuracy in (0, 1] that counts as fitting the training set.
        key: the history column to read.

    Example:
        >>> fit_epoch([0.2, 0.9, 0.9995, 1.0])
        3
        >>> fit_epoch({"epoch": [1, 2], "train_eval_accuracy": [0.5, 0.6]}) is None
        True
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"threshold must be a number in (0, 1]; received {threshold!r}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1]; received {threshold}")
    epochs, values = _accuracies(history, key)
    for epoch, value in zip(epochs, values, strict=True):
        if value is not None and math.isfinite(value) and value >= threshold:
            return int(epoch)
    return None


def classify(
    histories,
    *,
    threshold=THRESHOLD,
    fast_within=FAST_WITHIN,
    slow_after=SLOW_AFTER,
    min_gap=MIN_GAP,
):
    """Labels each run fast, slow or between by the rule of this module (``RULE``).

    Args:
        histories: ``{name: history}`` (see ``fit_epoch``), e.g. one entry per seed.
        threshold: training accuracy that counts as fitted.
        fast_within: fast runs fit within this factor of the earliest fit epoch.
        slow_after: slow runs fit at this factor of the earliest fit epoch or later.
        min_gap: and at least this many epochs after it.

    Returns:
        A list of ``Learner``, sorted fastest first (never-fitting runs last, by name).

    Example:
        >>> runs = {"s0": [0.5, 1.0], "s1": [0.4, 1.0], "s2": [0.1, 0.2, 0.3, 0.5, 1.0]}
        >>> [(r.name, r.fit_epoch, r.speed) for r in classify(runs)]
        [('s0', 2, 'fast'), ('s1', 2, 'fast'), ('s2', 5, 'slow')]
    """
    if not isinstance(histories, dict) or not histories:
        raise ValueError("histories must be a non-empty dict {name: history}")
    check_number("fast_within", fast_within, 1)
    check_number("slow_after", slow_after, 1)
    check_number("min_gap", min_gap, 0)
    if slow_after < fast_within:
        raise ValueError(
            f"slow_after must be >= fast_within; received {slow_after} < {fast_within}"
        )
    epochs = {name: fit_epoch(h, threshold) for name, h in histories.items()}
    fitted = [e for e in epochs.values() if e is not None]
    first = min(fitted) if fitted else math.inf

    def speed(e):
        if e is None or (e >= slow_after * first and e - first >= min_gap):
            return "slow"
        return "fast" if e <= fast_within * first else "between"

    learners = [Learner(str(name), e, speed(e)) for name, e in epochs.items()]
    return sorted(learners, key=lambda r: (r.fit_epoch is None, r.fit_epoch or 0, r.name))


def pick_fast_slow(learners):
    """Two fast learners and one slow learner for the CKA comparison of Figure 13.

    The two fastest fast learners, and the slow learner that fits the training set latest
    (the paper's slow learners reach 100% training accuracy); a slow learner that never fits
    is taken only if no slow learner fits.

    Returns:
        ``(fast1, fast2, slow)`` as ``Learner`` or None where there is none.
    """
    fast = [r for r in learners if r.speed == "fast"]
    slow = [r for r in learners if r.speed == "slow"]
    slow_fitted = [r for r in slow if r.fit_epoch is not None]
    slow_pick = max(slow_fitted, key=lambda r: r.fit_epoch) if slow_fitted else None
    if slow_pick is None and slow:
        slow_pick = slow[0]
    return (
        fast[0] if fast else None,
        fast[1] if len(fast) > 1 else None,
        slow_pick,
    )


def describe_rule(
    threshold=THRESHOLD, fast_within=FAST_WITHIN, slow_after=SLOW_AFTER, min_gap=MIN_GAP
):
    """The rule in words, with its parameters filled in."""
    return RULE.format(
        threshold=threshold, fast_within=fast_within, slow_after=slow_after, min_gap=min_gap
    )
