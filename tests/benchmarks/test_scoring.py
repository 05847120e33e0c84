"""benchmarks.score against slow per-example references, its errors, and the text form:
every prompt parsed back gives the task's label as its answer."""

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.analysis.boolean import boolean_influence, target_values


def _noisy(labels, rate, seed=0):
    rng = np.random.default_rng(seed)
    wrong = rng.random(len(labels)) < rate
    return np.where(wrong, (labels + 1 + rng.integers(0, 9, len(labels))) % 10, labels), wrong


def test_token_score_matches_a_slow_count():
    name = "token/w3-holdout6"
    rows = benchmarks.source(name, "validation", size="small")[:]
    predictions, wrong = _noisy(rows["label"], 0.3)
    report = benchmarks.score(name, predictions, "validation", size="small")
    assert report["accuracy"] == pytest.approx(1 - wrong.mean())
    for pointer, accuracy in report["per_pointer"].items():
        mine = [not w for w, p in zip(wrong, rows["pointer"], strict=True) if p == pointer]
        assert accuracy == pytest.approx(sum(mine) / len(mine))
    assert report["held_out"] is None and report["rest"] == pytest.approx(report["accuracy"])
    assert report["config"] == name and report["version"] == "1.0.0"
    assert report["sha256"] == benchmarks.manifest()[name]["sizes"]["small"]["validation"]["sha256"]
    test = benchmarks.score(name, benchmarks.source(name, "test", size="small")[:]["label"],
                            size="small")  # fmt: skip
    assert test["held_out"] == 1.0 and test["rest"] is None


def test_logits_score_as_their_argmax():
    labels = benchmarks.source("token/w1", "test", size="small")[:]["label"]
    logits = np.eye(10)[labels] * 3.0 + 0.1
    assert benchmarks.score("token/w1", logits, size="small")["accuracy"] == 1.0
    assert benchmarks.score("token/w1", labels.astype(np.float64), size="small")["accuracy"] == 1.0


@pytest.mark.parametrize("predictions, message", [
    (np.zeros(1999, np.int64), "one class id per example of the split \\(2000\\)"),
    (np.full(2000, 10), "class ids must be in 0..9"),
    (np.full(2000, -1), "class ids must be in 0..9"),
    (np.full(2000, 0.5), "must be integers"),
    (np.zeros((2000, 9)), "must be \\(2000, 10\\)"),
    (np.full((2000, 10), np.nan), "finite"),
    (np.array(["1"] * 2000), "must be real numbers"),
    # Not real: an argmax orders complex logits, timedelta64 counts as an integer.
    (np.eye(10)[np.zeros(2000, int)] * (1 + 1j), "real numbers .*received dtype complex128"),
    (np.zeros(2000, "timedelta64[s]"), "real numbers .*received dtype timedelta64"),
    (np.zeros(2000, "datetime64[D]"), "real numbers"),
    (np.zeros(2000, object), "real numbers"),
])  # fmt: skip
def test_bad_predictions(predictions, message):
    with pytest.raises(ValueError, match=message):
        benchmarks.score("token/w3", predictions, size="small")


def test_complex_boolean_predictions_are_refused_not_cut_to_their_real_part():
    truth = target_values(benchmarks.task_of("boolean/f3"))
    with pytest.raises(ValueError, match="real numbers .*received dtype complex128"):
        benchmarks.score("boolean/f3", truth + 1e-3j)


def test_boolean_score_is_the_error_on_the_cube():
    name = "boolean/f3-frozen0"
    task = benchmarks.task_of(name)
    truth = target_values(task)
    frozen = truth.copy().reshape(-1)
    guess = np.where(benchmarks.cube(11, np.arange(2048))[:, 0] == 1, truth, -truth)
    report = benchmarks.score(name, guess)
    assert report["half_mse"] == pytest.approx(np.mean((guess - truth) ** 2) / 2)
    assert report["mse"] == pytest.approx(2 * report["half_mse"])
    assert report["frozen_bit"] == 0
    assert report["influence"] == pytest.approx(boolean_influence(frozen)[0])
    assert benchmarks.score(name, truth)["half_mse"] == 0.0
    with pytest.raises(ValueError, match="shape \\(2048,\\)"):
        benchmarks.score(name, truth[:-1])
    assert "frozen_bit" not in benchmarks.score("boolean/f3", truth)


@pytest.mark.parametrize(
    "name",
    [
        "token/w1",
        "token/w3",
        "token/w3-median",
        "token/w3-maj_vote",
        "token/w3-min",
        "token/w3-max",
        "token/w2-nopointer",
        "token/w3-holdout6-of123",
        "boolean/f3",
        "boolean/parity3",
    ],
)
def test_every_prompt_states_a_sequence_whose_label_is_its_answer(name):
    """Parse the sequence back out of each question: the task's NumPy rule gives the answer."""
    task = benchmarks.task_of(name)
    entries = benchmarks.text_source(name, "test", size="small")[:300]
    rules = {e["question"].split("\nSequence:")[0] for e in entries}
    assert len(rules) == 1  # the rule is stated once, the same for every example
    for index, entry in enumerate(entries):
        sequence = entry["question"].split("Sequence: ")[1].split("\n")[0]
        x = np.array([[int(t) for t in sequence.split()]])
        assert entry["answer"] == str(int(task.label(x)[0]))
        assert entry["metadata"]["index"] == index
        assert benchmarks.score_answer(entry["answer"], entry) == 1.0
        assert benchmarks.score_answer(f"I think it is {entry['answer']}.", entry) == 1.0


def test_a_window_of_one_reads_as_one_digit_or_bit():
    """A window of one is "the digit at" a position (not "starting at" it); wider windows
    keep their words (token w2+, Boolean w2+)."""
    from pvr_keras.benchmarks import text
    from pvr_keras.kinds.boolean.benchmark import text_rule as boolean_rule
    from pvr_keras.kinds.token.benchmark import text_rule as token_rule
    from pvr_keras.tasks import BooleanTask, TokenTask

    w1 = text.rule(benchmarks.get("token/w1"), benchmarks.task_of("token/w1"))
    assert "Look at the digit at value position p. The answer is that digit." in w1
    nopointer = token_rule(TokenTask(window=1, pointer=False))
    assert "Look at the digit at value position 0 of the 10 values that follow it." in nopointer
    bit = boolean_rule(BooleanTask(window=1))
    assert "Take the value bit at position p; the answer is that bit. Reply" in bit
    for rule in (w1, nopointer, bit):
        assert "starting" not in rule and " 1 value bits" not in rule, rule
    w3 = text.rule(benchmarks.get("token/w3"), benchmarks.task_of("token/w3"))
    assert ("Look at 3 consecutive digits starting at value position p (wrapping around after "
            "position 9). The answer is the sum of those digits modulo 10.") in w3  # fmt: skip
    assert ("Take 3 value bits starting at position p (stopping at the last value bit); the "
            "answer is the sign of their sum (0 when the sum is 0). Reply") in text.rule(
        benchmarks.get("boolean/f3"), benchmarks.task_of("boolean/f3"))  # fmt: skip


def test_score_answer():
    entry = {"answer": "-1"}
    assert benchmarks.score_answer("-1", entry) == 1.0
    assert benchmarks.score_answer("1", entry) == 0.0
    assert benchmarks.score_answer("", entry) == 0.0
    assert benchmarks.score_answer(None, entry) == 0.0
    assert benchmarks.score_answer("3 then -1", entry) == 1.0  # the last number counts
    assert benchmarks.score_answer("-0001", entry) == 1.0  # leading zeros are the number
    assert benchmarks.score_answer("+3", {"answer": "3"}) == 1.0
    with pytest.raises(ValueError, match="the block kind has no text form"):
        benchmarks.text_source("block/mnist-2x2", "test")


def test_an_answer_of_thousands_of_digits_scores_zero():
    # int() refuses more than 4,300 digits (ValueError): the answer is simply wrong
    assert benchmarks.score_answer("1" * 5000, {"answer": "1"}) == 0.0
    assert benchmarks.score_answer("-" + "9" * 100_000, {"answer": "-1"}) == 0.0
    assert benchmarks.score_answer("0" * 5000 + "7", {"answer": "7"}) == 1.0
