"""Figure 11: the reduced version, the Mixer at each window's threshold size and a tenth
of it (the ``figure11`` study)."""

import math

from .formats import fit, hours, pct, pcts, span


def steps(record):
    """Optimizer steps of a run: its epochs of ceil(examples / batch) steps."""
    return record["epochs_completed"] * math.ceil(record["num_examples"] / record["batch_size"])


def fig11(r):
    f = r["figure11"]

    def at(window, n):
        # The step-budget control (window 2 at 5x10^3 on window 3's 9,800 steps) shares its
        # window and size with a run of the grid: the grid's run has the window's own budget.
        budget = {1: 980, 2: 980, 3: 9780}[window]
        return f.one(model="mixer", window=window, num_examples=n, seed=0, min_steps=budget)

    pairs = {1: (500, 5_000), 2: (5_000, 50_000), 3: (50_000, 500_000)}
    done = {w: (at(w, small), at(w, big)) for w, (small, big) in pairs.items()}
    trains = [x["train_accuracy"] for pair in done.values() for x in pair]
    ours = (
        f"Mixer, same steps at both sizes of a window: window 1 {pct(done[1][1]['test_accuracy'])} "
        f"test at 5x10^3, {pct(done[1][0]['test_accuracy'])} at 5x10^2; window 2 "
        f"{pct(done[2][1]['test_accuracy'])} at 5x10^4, {pct(done[2][0]['test_accuracy'])} at "
        f"5x10^3 ({pcts(trains, 0)} train at every size); window 3 "
        f"{pct(done[3][1]['test_accuracy'])} at its threshold 5x10^5, and "
        f"{pct(done[3][0]['test_accuracy'], 2)} already at 5x10^4 "
        f"({steps(done[3][0]):,} steps). As bounds: "
        "window 1 needs at most 5x10^3 and more than 5x10^2, window 2 at most 5x10^4 and more "
        f"than 5x10^3 (on {steps(done[2][0]):,} steps), "
        "window 3 at most 5x10^4; the paper states sufficiency at ~5x10^(m+3), not failure "
        "below it"
    )  # fmt: skip
    seeds = [x for x in f.runs(model="mixer", window=3, num_examples=50_000) if x["seed"] != 0]
    if seeds:
        seeds.sort(key=lambda x: x["seed"])
        ours += (
            f". Window 3 at 5x10^4, seed{'s' if len(seeds) > 1 else ''} "
            f"{', '.join(str(x['seed']) for x in seeds)}: "
            f"{', '.join(pct(x['test_accuracy'], 2) for x in seeds)} test (fit at epoch"
            f"{'s' if len(seeds) > 1 else ''} {', '.join(str(fit(x)) for x in seeds)})"
        )
    control = f.runs(model="mixer", window=2, num_examples=5_000, seed=0)
    control = [x for x in control if x["min_steps"] == 9_800]
    if control:
        c = control[0]
        ours += (f". Step-budget control: window 2 at 5x10^3 on window 3's {steps(c):,} steps "
                 f"({c['warmup_epochs']} warm-up epochs) still misses: {pct(c['test_accuracy'])} "
                 f"test, {pct(c['train_accuracy'], 0)} train (fit at epoch {fit(c)})")  # fmt: skip
    small = [done[w][0]["wall_time_s"] for w in (1, 2)] + [
        done[w][1]["wall_time_s"] for w in (1, 2)
    ]
    # Window 4 (5x10^5 and 5x10^6 on the step budget of 20 epochs of 5x10^6), at the Mixer's
    # seconds a step measured by tools/probes/bench_engines.py (docs/performance.md, "Choosing
    # the backend").
    w4 = 2 * 20 * math.ceil(5_000_000 / 1024)
    time = (f"reduced version `bash tools/studies/figure11_reduced.sh` ([the study]"
            f"(figure11.md); resumable; window 4 alone is "
            f"{w4:,} Mixer steps: "
            f"~{w4 * 0.2 / 3600:.0f} h at TensorFlow + XLA's ~0.2 s a step, "
            f"{w4 * 0.87 / 3600:.0f}-{w4 * 1.71 / 3600:.0f} h at JAX's 0.87-1.71 s), "
            f"{span([s / 60 for s in small], lambda m: f'{m:.0f}')} min per run for windows 1-2, "
            f"{hours(done[3][0]['wall_time_s'])} and {hours(done[3][1]['wall_time_s'])} for "
            f"window 3 at 5x10^4 and 5x10^5; the full grid: `python recipes/token_sweep.py "
            f"--sweep size_window --preset paper` (GPU-days)")  # fmt: skip
    return ours, time
