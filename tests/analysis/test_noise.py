"""Noise sensitivity (Appendix C) against slow references, exact values and the Figure 5 trends."""

import itertools
import statistics

import numpy as np
import pytest

from pvr_keras.analysis import bits_per_token, noise_sensitivity, noise_sensitivity_runs
from pvr_keras.tasks import AGGREGATIONS, TokenTask


def slow_label(task, digits):
    """The rule read off the paper, one sequence of Python ints at a time."""
    pointer = digits[0] if task.pointer else 0
    values = digits[1:]
    window = [values[(pointer + i) % len(values)] for i in range(task.window)]
    if task.aggregation == "mod_sum":
        return sum(window) % task.num_values
    if task.aggregation == "median":
        return sorted(window)[(len(window) - 1) // 2]
    if task.aggregation == "maj_vote":
        counts = {v: window.count(v) for v in window}
        return min(v for v in counts if counts[v] == max(counts.values()))
    return min(window) if task.aggregation == "min" else max(window)


def slow_noise_sensitivity(task, delta, num_samples, runs, seed):
    """Bit by bit, sample by sample, from the same draws the fast version documents."""
    rng = np.random.default_rng(seed)
    num_bits = bits_per_token(task.num_values)
    estimates = []
    for _ in range(runs):
        x_bits = rng.integers(0, 2, size=(num_samples, task.seq_len, num_bits), dtype=np.int64)
        uniforms = rng.random((num_samples, task.seq_len, num_bits))
        differ = 0
        for s in range(num_samples):
            x_digits, y_digits = [], []
            for t in range(task.seq_len):
                x_value = y_value = 0
                for b in range(num_bits):  # most significant bit first
                    bit = int(x_bits[s, t, b])
                    flipped = bit ^ 1 if uniforms[s, t, b] < delta else bit
                    x_value, y_value = 2 * x_value + bit, 2 * y_value + flipped
                x_digits.append(x_value % task.num_values)
                y_digits.append(y_value % task.num_values)
            differ += slow_label(task, x_digits) != slow_label(task, y_digits)
        estimates.append(differ / num_samples)
    return statistics.mean(estimates)


def exact_noise_sensitivity(task, delta):
    """NS_delta by enumerating every bit string x and every flip pattern (tiny tasks only)."""
    num_bits = bits_per_token(task.num_values)
    total = task.seq_len * num_bits
    strings = np.array(list(itertools.product([0, 1], repeat=total)))  # (2^B, B)
    place = 2 ** np.arange(num_bits - 1, -1, -1)
    digits = (strings.reshape(len(strings), task.seq_len, num_bits) @ place) % task.num_values
    labels = task.label(digits)
    distance = (strings[:, None, :] != strings[None, :, :]).sum(axis=2)  # Hamming (2^B, 2^B)
    prob = delta**distance * (1 - delta) ** (total - distance)
    return float((prob * (labels[:, None] != labels[None, :])).sum() / len(strings))


@pytest.mark.parametrize(
    "task",
    [
        TokenTask(window=3, aggregation="mod_sum"),
        TokenTask(window=4, aggregation="maj_vote"),
        TokenTask(window=2, aggregation="median", pointer=False),
        TokenTask(seq_len=6, num_values=7, window=3, aggregation="min"),
        TokenTask(seq_len=5, num_values=4, window=2, aggregation="max", window_mode="restricted"),
    ],
    ids=lambda t: f"{t.aggregation}-w{t.window}-K{t.num_values}",
)
def test_matches_slow_reference_on_the_same_draws(task):
    for delta in (0.03, 0.3):
        fast = noise_sensitivity(task, delta, num_samples=150, runs=2, seed=7)
        slow = slow_noise_sensitivity(task, delta, num_samples=150, runs=2, seed=7)
        assert fast == pytest.approx(slow, abs=1e-12)


@pytest.mark.parametrize(
    "task",
    [
        TokenTask(seq_len=3, num_values=3, window=2, aggregation="mod_sum"),
        TokenTask(seq_len=3, num_values=2, window=2, aggregation="maj_vote"),
        TokenTask(seq_len=3, num_values=4, window=1, aggregation="max"),
    ],
    ids=lambda t: f"{t.aggregation}-K{t.num_values}",
)
def test_agrees_with_exact_enumeration(task):
    deltas = np.array([0.02, 0.15, 0.5])
    per_run = noise_sensitivity_runs(task, deltas, num_samples=40_000, runs=2, seed=1)
    estimate = per_run.mean(axis=0)
    for d, got in zip(deltas, estimate, strict=True):
        exact = exact_noise_sensitivity(task, d)
        sigma = np.sqrt(exact * (1 - exact) / 80_000)
        assert abs(got - exact) < 5 * sigma + 1e-9, (d, got, exact)


def test_only_bits_the_rule_reads_count():
    # Without a pointer and with window 1 the label is the first value token alone: the noise
    # on the other 10 tokens must not matter. Exact: a digit of 4 bits taken mod 10 changes.
    task = TokenTask(window=1, pointer=False)
    single = TokenTask(seq_len=2, num_values=10, window=1, pointer=False)
    got = noise_sensitivity(task, 0.2, num_samples=40_000, runs=1, seed=3)
    exact = exact_noise_sensitivity(single, 0.2)
    assert abs(got - exact) < 5 * np.sqrt(exact * (1 - exact) / 40_000)


def test_dictator_on_one_bit_has_ns_delta():
    # Two values are one bit; the label is that bit: NS_delta = delta exactly in expectation.
    task = TokenTask(seq_len=2, num_values=2, window=1)
    got = noise_sensitivity(task, 0.1, num_samples=50_000, runs=2, seed=0)
    assert abs(got - 0.1) < 5 * np.sqrt(0.1 * 0.9 / 100_000)


def test_vanishing_noise_changes_nothing():
    for aggregation in AGGREGATIONS:
        task = TokenTask(window=3, aggregation=aggregation)
        assert noise_sensitivity(task, 1e-12, num_samples=2000, runs=2) == 0.0


def test_equal_rules_have_equal_sensitivity():
    # With two values in the window, the lower median, the majority vote with ties to the
    # smallest value, and the minimum are the same function: same draws, same estimate.
    deltas = np.exp(np.linspace(-7, -1, 5))
    results = [
        noise_sensitivity(TokenTask(window=2, aggregation=a), deltas, num_samples=3000, runs=2)
        for a in ("median", "maj_vote", "min")
    ]
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_array_of_deltas_matches_scalar_calls_and_is_monotone():
    task = TokenTask(window=3)
    deltas = np.array([0.3, 0.01, 0.1])
    many = noise_sensitivity(task, deltas, num_samples=3000, runs=2, seed=5)
    assert isinstance(many, np.ndarray) and many.shape == (3,)
    for d, value in zip(deltas, many, strict=True):
        single = noise_sensitivity(task, float(d), num_samples=3000, runs=2, seed=5)
        assert isinstance(single, float) and single == value
    # Shared draws: a larger delta flips a superset of bits, so on average more labels change.
    assert many[1] < many[2] < many[0]


def test_seeded_and_runs_are_independent():
    task = TokenTask(window=2)
    a = noise_sensitivity_runs(task, 0.1, num_samples=2000, runs=3, seed=11)
    b = noise_sensitivity_runs(task, 0.1, num_samples=2000, runs=3, seed=11)
    c = noise_sensitivity_runs(task, 0.1, num_samples=2000, runs=3, seed=12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a[:, 0])) > 1  # each run draws its own samples


def test_figure5_trends():
    """mod_sum gets more sensitive with the window; min and max get less (Figure 5b)."""
    deltas = np.exp(np.linspace(-7, -1, 7))

    def curve(aggregation, windows):
        return [
            noise_sensitivity(
                TokenTask(window=w, aggregation=aggregation), deltas, num_samples=4000, runs=2
            ).mean()
            for w in windows
        ]

    assert np.all(np.diff(curve("mod_sum", range(1, 10))) > 0)
    assert np.all(np.diff(curve("min", range(1, 11))) < 0)
    # max first rises (digits 0-5 are twice as likely as 6-9 under uniform bits), then falls.
    maxes = curve("max", range(1, 11))
    assert np.all(np.diff(maxes[1:]) < 0) and maxes[-1] < maxes[0]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"delta": 0.0}, r"delta must be in \(0, 0.5\].*received \[0.0\]"),
        ({"delta": 0.6}, r"delta must be in \(0, 0.5\].*received \[0.6\]"),
        ({"delta": -0.1}, r"delta must be in \(0, 0.5\]"),
        ({"delta": float("nan")}, r"delta must be in \(0, 0.5\]"),
        ({"delta": [0.1, 0.7]}, r"received \[0.7\]"),
        ({"delta": []}, r"non-empty 1-D.*shape \(0,\)"),
        ({"delta": [[0.1]]}, r"non-empty 1-D.*shape \(1, 1\)"),
        ({"delta": "0.1"}, r"delta must be a number.*'0.1'"),
        ({"delta": True}, r"delta must be a number.*True"),
        ({"num_samples": 0}, r"num_samples must be a positive integer; received 0"),
        ({"num_samples": 10.0}, r"num_samples must be a positive integer; received 10.0"),
        ({"runs": 0}, r"runs must be a positive integer; received 0"),
        ({"seed": -1}, r"seed must be a non-negative integer; received -1"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    args = {"delta": 0.1, "num_samples": 10, "runs": 1, "seed": 0, **kwargs}
    delta = args.pop("delta")
    with pytest.raises(ValueError, match=match):
        noise_sensitivity(TokenTask(), delta, **args)


def test_bad_task_raises():
    with pytest.raises(ValueError, match="task must be a pvr_keras.tasks.TokenTask; received dict"):
        noise_sensitivity({"window": 3}, 0.1)
