"""Figures 16 and 17 (Appendices C, D): the aggregations and the pointer-less control
on the quick presets (``aggregations_quick``, ``pointer_quick``)."""

from .formats import _thousands, dec, field, pct, pcts, total
from .records import as_cell, markdown_table, study_records


def fig16(r):
    a = r["aggregations_quick"]

    def at(agg, window, n):
        return a.one(aggregation=agg, window=window, num_examples=n)

    mod = a.runs(aggregation="mod_sum")
    others = ("median", "maj_vote", "min", "max")
    small = [at(g, w, 3_000)["test_accuracy"] for g in others for w in (2, 3)]
    big = [at(g, w, 10_000)["test_accuracy"] for g in others for w in (2, 3)]

    def drop(agg, n):
        two, three = at(agg, 2, n)["test_accuracy"], at(agg, 3, n)["test_accuracy"]
        return f"{100 * (two - three):.1f} points ({pct(two)} to {pct(three)})"

    minmax3 = [at(g, 3, 3_000)["test_accuracy"] for g in ("min", "max")]
    minmax2 = [at(g, 2, 3_000)["test_accuracy"] for g in ("min", "max")]
    ours = (
        f"mod_sum at chance ({pcts(field(mod, 'test_accuracy'))}) and not fitted (train "
        f"{pcts(field(mod, 'train_accuracy'), 0)}) at windows 2-3, 3k and 10k; median, maj_vote, "
        f"min, max {pcts(small, 0)} (3k) and {pcts(big, 0)} (10k); a larger window helps min and "
        f"max at 3k ({pcts(minmax3, 0)} against {pcts(minmax2, 0)}); against \"only\", from "
        f"window 2 to 3 at 10k maj_vote drops {drop('maj_vote', 10_000)} and median "
        f"{drop('median', 10_000)}, and median {drop('median', 3_000)} at 3k"
    )  # fmt: skip
    time = (f"[`aggregations_quick`](aggregations_quick.md); "
            f"`python recipes/token_sweep.py --sweep aggregations`, "
            f"{total(a.lines)} on the shared CPU")  # fmt: skip
    return ours, time


CHANCE = 0.15  # ten classes: a test accuracy below this is chance here


def fig16_verdict(r):
    """The verdict of Figure 16's row; mod_sum's "harder with the window" half is testable only
    where mod_sum learns something at some window."""
    mod = field(r["aggregations_quick"].runs(aggregation="mod_sum"), "test_accuracy")
    untestable = max(mod) < CHANCE
    return (
        "partly (mod_sum the hardest; "
        + (f"that it gets harder with the window is not testable here: mod_sum is at chance in "
           f"every cell ({pcts(mod)}); " if untestable else "")
        + "that only mod_sum gets harder with the window is contradicted for maj_vote and median "
        "at 10k, 1 seed)"
    )  # fmt: skip


def fig17(r):
    p = r["pointer_quick"]

    def at(pointer, window, n):
        return p.one(pointer=pointer, window=window, num_examples=n)["test_accuracy"]

    def first_full(pointer, window):
        sizes = sorted({x["num_examples"] for x in p.runs(pointer=pointer, window=window)})
        full = [n for n in sizes if at(pointer, window, n) >= 0.98]
        return full[0] if full else None

    w2 = p.runs(pointer=True, window=2)
    ours = (
        f"MLP: without the pointer window 1 at {dec(at(False, 1, first_full(False, 1)))} from "
        f"{first_full(False, 1) // 1000}k examples, window 2 at "
        f"{dec(at(False, 2, first_full(False, 2)))} from {first_full(False, 2) // 1000}k; with "
        f"it, window 1 needs {first_full(True, 1) // 1000}k ({dec(at(True, 1, 2_000))} at 2k, "
        f"{dec(at(True, 1, 10_000))} at 10k) and window 2 stays at chance up to "
        f"{max(x['num_examples'] for x in w2) // 1000}k ({pcts(field(w2, 'test_accuracy'), 0)}; "
        f"fails to fit at {_thousands(x for x in w2 if x['failed'])})"
    )  # fmt: skip
    time = (f"[`pointer_quick`](pointer_quick.md); "
            f"`python recipes/token_sweep.py --sweep pointer`, "
            f"{total(p.lines)} "
            f"on the shared CPU")  # fmt: skip
    return ours, time


def table(study):
    """One row per run of a quick sweep (Figures 16 and 17): its task, size, epochs run,
    training and test accuracy, the failed-run rule."""

    def order(r):
        return r.get("aggregation"), not r["pointer"], r["window"], r["num_examples"], r["seed"]

    records = sorted(study_records(study), key=order)
    if not records:
        return None
    rows = [[r["aggregation"], "yes" if r["pointer"] else "no", r["window"],
             f"{r['num_examples']:,}", r["seed"], r["epochs_completed"],
             as_cell(r["train_accuracy"]), as_cell(r["test_accuracy"]),
             "yes" if r["failed"] else "", f"{r['wall_time_s'] / 60:.1f}"]
            for r in records]  # fmt: skip
    header = ["aggregation", "pointer", "window", "examples", "seed", "epochs", "train", "test",
              "failed", "min"]  # fmt: skip
    return markdown_table(header, rows)
