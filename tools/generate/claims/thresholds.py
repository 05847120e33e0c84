"""Figures 9 and 10: test accuracy against dataset size and window (the ``thresholds``
study and the leaderboard's MLP 2x)."""

import statistics

from .formats import _mean_by, dec, field, pct, pcts, run_minutes, total
from .records import as_cell, fit_cell, markdown_table, study_records


def fig9(r):
    t = r["thresholds"]

    def mlp(**where):
        return t.runs(model="mlp", **where)

    def test(window, n, epochs=None):
        where = dict(window=window, num_examples=n)
        runs = mlp(**where)
        if epochs is not None:
            runs = [x for x in runs if x["epochs_completed"] == epochs]
        else:  # the sweep's own schedule, not the 200-epoch reruns
            runs = [x for x in runs if x["epochs_completed"] != 200]
        return runs

    w2, w3 = 30, 80
    short = {n: test(2, n) for n in (10_000, 30_000, 100_000, 300_000)}
    long = {n: test(3, n) for n in (10_000, 30_000, 100_000, 300_000)}
    paper = {n: test(2, n, epochs=200) for n in (10_000, 30_000)}
    fitted = long[30_000] + long[100_000] + long[300_000]
    w3_300k = sorted(field(long[300_000], "test_accuracy"), reverse=True)
    quick = r["size_window_quick"]
    q1 = _mean_by(quick.runs(window=1), "num_examples")  # over the seeds
    ours = (
        f"window 2: test {pcts(field(short[10_000] + short[30_000], 'test_accuracy'), 0)} at "
        f"10^4 and 3x10^4, {pcts(field(short[100_000], 'test_accuracy'), 0)} at 10^5, "
        f"{pcts(field(short[300_000], 'test_accuracy'), 0)} at 3x10^5; window 3: "
        f"{pcts(field(long[10_000] + long[30_000] + long[100_000], 'test_accuracy'), 0)} up to "
        f"10^5, {' / '.join(pct(x) for x in w3_300k)} at 3x10^5. Training accuracy: window 3 "
        f"({w3} epochs) {pcts(field(fitted, 'train_accuracy'))}"
        f" from 3x10^4 up, {pcts(field(long[10_000], 'train_accuracy'))} at 10^4; window 2 on "
        f"the {w2}-epoch schedule fits only at 3x10^5 "
        f"({pcts(field(short[300_000], 'train_accuracy'), 0)}), with "
        f"{pcts(field(short[10_000], 'train_accuracy'))} at 10^4 (80 epochs), "
        f"{pcts(field(short[30_000], 'train_accuracy'))} at 3x10^4 and "
        f"{pcts(field(short[100_000], 'train_accuracy'))} at 10^5 (runs that did not fit). On the "
        f"paper's 200-epoch recipe, window 2: "
        f"{pcts(field(paper[10_000] + paper[30_000], 'train_accuracy'), 0)} train; "
        f"{pcts(field(paper[10_000], 'test_accuracy'))} test at 10^4 (memorised), "
        f"{pcts(field(paper[30_000], 'test_accuracy'))} at 3x10^4 "
        f"({statistics.mean(field(paper[30_000], 'test_accuracy')) / 0.1:.1f}x chance: partly "
        f"generalising). Quick (mean of {len({x['seed'] for x in quick.lines})} seeds): window 1 "
        f"{dec(q1[2_000])} (2k) to {dec(q1[10_000])} (10k)"
    )  # fmt: skip
    time = (f"[`thresholds`](thresholds.md) medium study, "
            f"{run_minutes(t.runs(model='mlp'))} per run; quick "
            f"`python recipes/token_sweep.py --sweep size_window`, "
            f"{total(quick.sweep('size_window'))}")  # fmt: skip
    return ours, time


def fig10_mlp2x(r):
    """The quick suite's MLP and MLP 2x (docs/results/benchmark/quick), entry by entry."""
    one, two = (r.json(f"benchmark/quick/{m}.json")["entries"] for m in ("mlp", "mlp2x"))
    cells = ", ".join(f"{k} {dec(one[k]['test_accuracy'], 3)} vs {dec(two[k]['test_accuracy'], 3)}"
                      for k in one if k in two)  # fmt: skip
    ours = f"the leaderboard's quick suite (20,000 examples, 12 epochs), MLP vs MLP 2x: {cells}"
    time = ("`bash tools/studies/leaderboard.sh` (`mlp2x`, 5,052,426 parameters: "
            f"{dec(sum(e['minutes'] for e in two.values()), 0)} min); the size x window grid "
            "not run: `python recipes/token_sweep.py --model mlp mlp2x --window 2 "
            "--num-examples 30000 100000 300000`")  # fmt: skip
    return ours, time


def fig10(r):
    t, f11 = r["thresholds"], r["figure11"]

    def tests(model, window, n):
        return field(t.runs(model=model, window=window, num_examples=n), "test_accuracy")

    mlp = {n: [x for x in t.runs(model="mlp", window=2, num_examples=n)] for n in (10_000, 30_000)}
    short = [x["test_accuracy"] for n in mlp for x in mlp[n] if x["epochs_completed"] != 200]
    paper = {n: [x["test_accuracy"] for x in mlp[n] if x["epochs_completed"] == 200] for n in mlp}
    mlp3 = [x["test_accuracy"] for x in t.runs(model="mlp", window=3)
            if x["num_examples"] <= 100_000]  # fmt: skip
    mixer3 = f11.one(model="mixer", window=3, num_examples=50_000, seed=0)["test_accuracy"]
    ours = (f"window 2: Mixer {pcts(tests('mixer', 2, 10_000))} test from 10^4 examples and "
            f"{pcts(tests('mixer', 2, 30_000), 0)} from 3x10^4; Transformer "
            f"{pcts(tests('transformer', 2, 10_000))}, {pcts(tests('transformer', 2, 30_000))} "
            f"(3x10^4) and {pcts(tests('transformer', 2, 100_000), 0)} (10^5); the paper's MLP "
            f"at {pcts(short, 0)} at 10^4 and 3x10^4 on 30 epochs ({pcts(paper[10_000])} and "
            f"{pcts(paper[30_000])} on the paper's 200-epoch recipe), "
            f"{pcts(tests('mlp', 2, 300_000), 0)} only at 3x10^5. Window 3: the Mixer "
            f"{pct(mixer3, 2)} at 5x10^4 (the `figure11` study), where the MLP is at "
            f"{pcts(mlp3, 0)} up to 10^5 (80 epochs)")  # fmt: skip
    others = t.runs(model="mixer") + t.runs(model="transformer")
    time = f"`thresholds` medium study, {run_minutes(others)} per run"
    return ours, time


def table(study):
    records = sorted(study_records(study), key=lambda r: (r["model"], r["window"],
                                                     r["num_examples"], r["seed"]))  # fmt: skip
    if not records:
        return None
    rows = []
    for r in records:
        width = r.get("width")
        model = r["model"] + (f" (width x{width:g})" if width not in (None, 1, 1.0) else "")
        rows.append([model, r["window"], f"{r['num_examples']:,}", r["seed"], r["epochs_completed"],
                     as_cell(r["train_accuracy"]), as_cell(r["test_accuracy"]), fit_cell(r),
                     "yes" if r["failed"] else "", f"{r['wall_time_s'] / 60:.1f}"])  # fmt: skip
    header = ["model", "window", "examples", "seed", "epochs", "train", "test", "fit epoch",
              "failed", "min"]  # fmt: skip
    return markdown_table(header, rows)
