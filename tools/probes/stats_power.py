"""Power of the suite's distributional tests, by simulation (run once; results noted in tests).

    PYTHONPATH=. python tools/probes/stats_power.py            # ~2 min on 2 cores
    PYTHONPATH=. python tools/probes/stats_power.py --reps 500 --only holdout

Each test of ``tests/`` that checks a distribution calls ``tests.stats.check_counts_uniform``
on ``n`` draws over ``k`` cells. For each such (test, k, n) this draws multinomial samples
with one cell's probability scaled by ``r`` (the others renormalised) and reports:

- the false-alarm rate (r = 1; designed to be about 1e-4),
- the detection rate of one cell never drawn (r = 0),
- the smallest r > 1 and the largest r < 1 detected with >= 99% probability.

These numbers are what the ``# power:`` comments in the tests quote.
"""

import argparse
import math

import numpy as np

from tests.stats import check_counts_uniform

# (test and what is counted, cells k, draws n): the configurations the tests use.
CASES = [
    ("data/test_token: pointer, each position", 10, 200_000),
    ("data/test_token: pairs of positions", 100, 200_000),
    ("data/test_token: restricted pointer (window 4)", 7, 50_000),
    ("data/test_token holdout: train windows, window 1 holdout 1", 9, 100_000),
    ("data/test_token holdout: train windows, window 2 holdout 2", 98, 100_000),
    ("data/test_token holdout: train windows, window 3 holdout 6", 994, 100_000),
    ("data/test_token holdout: train windows, window 3 holdout 1", 999, 100_000),
    ("data/test_token holdout: train pointer", 10, 100_000),
    ("data/test_token holdout: train tokens outside the window (w3)", 10, 700_000),
    ("data/test_token holdout: test pointer", 10, 30_000),
    ("data/test_block: pointer jitter (0..8, 2 axes)", 9, 8_000),
    ("data/test_block: CIFAR jitter (0..4, 3 cells x 2 axes)", 5, 24_000),
    ("data/test_block: image index of each cell (500 images)", 500, 30_000),
    ("data/test_sequence: image within a digit (~50 images)", 50, 2_200),
]


def detection(k, n, r, reps, rng):
    """Fraction of ``reps`` samples the test rejects when cell 0 has probability x r."""
    p = np.ones(k)
    p[0] = r
    p /= p.sum()
    samples = rng.multinomial(n, p, size=reps)
    return float(np.mean([check_counts_uniform(s) is not None for s in samples]))


def threshold(k, n, reps, rng, up):
    """Smallest r > 1 (``up``) or largest r < 1 detected in >= 99% of ``reps`` samples."""
    if not up and detection(k, n, 0.0, reps, rng) < 0.99:
        return None  # not even a missing cell
    low, high = 0.0, 1.0  # log-scale bisection on the size of the defect
    far = math.log(50.0) if up else 1.0
    for _ in range(14):
        mid = (low + high) / 2
        r = math.exp(mid * far) if up else 1.0 - mid * far
        if detection(k, n, r, reps, rng) >= 0.99:
            high = mid
        else:
            low = mid
    return math.exp(high * far) if up else 1.0 - high * far


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="samples per estimate")
    parser.add_argument("--null-reps", type=int, default=20_000, help="samples under r = 1")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| test | k | n | false alarm | missing cell caught | r up (99%) | r down (99%) |")
    print("|---|---|---|---|---|---|---|")
    for name, k, n in CASES:
        if args.only not in name:
            continue
        null = detection(k, n, 1.0, args.null_reps, rng)
        missing = detection(k, n, 0.0, args.reps, rng)
        up = threshold(k, n, args.reps, rng, up=True)
        down = threshold(k, n, args.reps, rng, up=False)
        down_text = "-" if down is None else f"x{down:.3f}"
        print(
            f"| {name} | {k} | {n} | {null:.1e} | {missing:.3f} | x{up:.3f} | {down_text} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
