import pytest

from pvr_keras.analysis import Learner, classify, describe_rule, fit_epoch, pick_fast_slow


def _curve(fit_at, epochs=30, start=0.1):
    """Training accuracy rising linearly to 1.0 at epoch ``fit_at`` (None: stalls at 0.9)."""
    if fit_at is None:
        return [min(0.9, start + 0.8 * e / epochs) for e in range(1, epochs + 1)]
    return [
        1.0 if e >= fit_at else start + (0.99 - start) * e / fit_at for e in range(1, epochs + 1)
    ]


def _slow_reference(histories, threshold, fast_within, slow_after, min_gap):
    """The rule written out directly, run by run."""
    fit = {}
    for name, accs in histories.items():
        fit[name] = next((e for e, a in enumerate(accs, 1) if a >= threshold), None)
    finite = [e for e in fit.values() if e is not None]
    speeds = {}
    for name, e in fit.items():
        if e is None:
            speeds[name] = "slow"
        elif e <= fast_within * min(finite):
            speeds[name] = "fast"
        elif e >= slow_after * min(finite) and e - min(finite) >= min_gap:
            speeds[name] = "slow"
        else:
            speeds[name] = "between"
    return speeds


def test_fit_epoch():
    assert fit_epoch([0.5, 0.998, 0.999, 1.0]) == 3
    assert fit_epoch([0.5, 0.9]) is None
    assert fit_epoch([]) is None
    assert fit_epoch([None, float("nan"), 1.0]) == 3
    assert fit_epoch([0.5, 0.95, 0.97], threshold=0.95) == 2
    history = {"epoch": [4, 5, 6], "train_eval_accuracy": [0.2, 1.0, 1.0], "test_accuracy": [0] * 3}
    assert fit_epoch(history) == 5  # epochs as recorded (a resumed run's numbering kept)
    assert fit_epoch(history, key="test_accuracy") is None


def test_two_clear_groups():
    runs = {"s0": _curve(6), "s1": _curve(5), "s2": _curve(7), "s3": _curve(18), "s4": _curve(None)}
    learners = classify(runs)
    assert [(r.name, r.fit_epoch, r.speed) for r in learners] == [
        ("s1", 5, "fast"),
        ("s0", 6, "fast"),
        ("s2", 7, "between"),  # after 1.25 x 5 epochs, before 1.5 x 5
        ("s3", 18, "slow"),
        ("s4", None, "slow"),
    ]
    fast1, fast2, slow = pick_fast_slow(learners)
    assert (fast1.name, fast2.name, slow.name) == ("s1", "s0", "s3")  # slow that fits preferred


def test_even_pace_has_no_slow_learner():
    learners = classify({f"s{i}": _curve(e) for i, e in enumerate([10, 11, 12, 13, 14])})
    assert [r.speed for r in learners] == ["fast", "fast", "fast", "between", "between"]
    assert pick_fast_slow(learners)[2] is None


def test_the_fastest_run_sets_the_pace_even_when_slow_ones_are_the_majority():
    learners = classify({f"s{i}": _curve(e, 60) for i, e in enumerate([10, 40, 45, 50, None])})
    assert [r.speed for r in learners] == ["fast", "slow", "slow", "slow", "slow"]
    fast1, fast2, slow = pick_fast_slow(learners)
    assert fast1.name == "s0" and fast2 is None and slow.fit_epoch == 50


def test_small_jumps_do_not_make_a_slow_learner():
    # Twice as many epochs but one epoch later only: not slow at min_gap=2.
    learners = classify({"a": _curve(1), "b": _curve(2)})
    assert [r.speed for r in learners] == ["fast", "between"]
    learners = classify({"a": _curve(1), "b": _curve(2)}, min_gap=1)
    assert [r.speed for r in learners] == ["fast", "slow"]
    learners = classify({"a": _curve(20), "b": _curve(24)})  # within 1.25 x: both fast
    assert [r.speed for r in learners] == ["fast", "fast"]


def test_none_fits():
    learners = classify({"a": _curve(None), "b": _curve(None)})
    assert [r.speed for r in learners] == ["slow", "slow"]
    fast1, fast2, slow = pick_fast_slow(learners)
    assert fast1 is None and fast2 is None and slow.name == "a"  # a slow that never fits


def test_only_one_fast():
    fast1, fast2, slow = pick_fast_slow(classify({"a": _curve(3), "b": _curve(None)}))
    assert fast1.name == "a" and fast2 is None and slow.name == "b"


@pytest.mark.parametrize("seed", range(30))
def test_against_the_rule_written_out(seed):
    import random

    rng = random.Random(seed)
    histories = {
        f"s{i}": _curve(rng.choice([None, *range(1, 30)])) for i in range(rng.randint(1, 8))
    }
    got = {r.name: r.speed for r in classify(histories, fast_within=1.1, slow_after=1.4, min_gap=3)}
    assert got == _slow_reference(histories, 0.999, 1.1, 1.4, 3)


def test_rule_is_stated():
    text = describe_rule(0.99, 1.2, 2.0, 3)
    assert "0.99" in text and "by 1.2 e0" in text and "at 2.0 e0" in text and ">= 3 epochs" in text
    assert "or never fits" in text
    assert Learner("a", None, "slow").fit_epoch is None


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: fit_epoch([0.5], threshold=0), r"threshold must be in \(0, 1\]"),
        (lambda: fit_epoch([0.5], threshold=1.5), r"threshold must be in \(0, 1\]"),
        (lambda: fit_epoch([0.5], threshold="high"), "threshold must be a number"),
        (lambda: fit_epoch({"epoch": [1]}), "must have a 'train_eval_accuracy' column"),
        (lambda: fit_epoch({"epoch": [1, 2], "train_eval_accuracy": [1.0]}), "same length"),
        (lambda: fit_epoch(3), "sequence of per-epoch accuracies"),
        (lambda: classify({}), "non-empty dict"),
        (lambda: classify([[1.0]]), "non-empty dict"),
        (
            lambda: classify({"a": [1.0]}, fast_within=0.5),
            "fast_within must be a finite number >= 1",
        ),
        (lambda: classify({"a": [1.0]}, slow_after="x"), "slow_after must be a finite number >= 1"),
        (lambda: classify({"a": [1.0]}, fast_within=2, slow_after=1.5), "slow_after must be >="),
        (lambda: classify({"a": [1.0]}, min_gap=-1), "min_gap must be a finite number >= 0"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
