"""docs/results/README.md's "What the quick presets show": one bullet per quick preset."""

from .figure7 import _figure7
from .formats import _mean_by, _thousands, dec, decs, field, minutes, pct, pcts, span, total


def _img(*paths):
    return " ".join(f"![]({p})" for p in paths)  # beside docs/results/README.md


def gallery(r):
    """docs/results/README.md's "What the quick presets show": one bullet per quick preset, each
    number from its committed record (``tools/studies/quick_records.sh``, and the quick studies)."""
    bullets = []

    run = r["token_pvr_quick"].json("record.json")
    test = run["history"]["test_accuracy"]
    at90 = next((i + 1 for i, a in enumerate(test) if a >= 0.9), None)
    config = run["config"]
    bullets.append(
        f"{_img('token_pvr_quick/learning_curve.png')}\n"
        f"`python recipes/token_pvr.py` ({minutes(run['wall_time_s'])}, {run['backend']}): the "
        f"paper's MLP on window {config['window']} {config['aggregation']} "
        + (f"passes 90% test accuracy at epoch {at90} " if at90 else "")
        + f"and ends at {pct(test[-1], 2)} after {len(test)} epochs."
    )  # fmt: skip

    summary = r["noise_sensitivity"].json("noise_sensitivity.json")
    ns = summary["mean_ns"]
    windows = sorted(ns["mod_sum"], key=int)
    lo, hi = windows[0], windows[-1]
    flat = [v for a in ("median", "maj_vote") for v in ns[a].values()]
    steps = zip(windows, windows[1:], strict=False)
    rising = all(ns["mod_sum"][a] <= ns["mod_sum"][b] + 1e-3 for a, b in steps)
    bullets.append(
        _img("noise_sensitivity/noise_sensitivity_mod_sum.png",
             "noise_sensitivity/noise_sensitivity_aggregations.png") + "\n"
        + f"`python recipes/noise_sensitivity.py --preset paper` ({summary['wall_time_s']:.0f} s; "
        f"Figure 5): noise sensitivity of mod_sum {'rises' if rising else 'moves'} with the "
        f"window ({dec(ns['mod_sum'][lo])} at window {lo} to {dec(ns['mod_sum'][hi])} at {hi}, "
        f"averaged over delta in [e^-7, e^-1]), while min falls ({dec(ns['min'][lo])} to "
        f"{dec(ns['min'][hi])}), max falls ({dec(ns['max'][lo])} to {dec(ns['max'][hi])}) and "
        f"median / maj_vote stay within {decs(flat)}: only mod_sum gives a clean ladder of "
        "difficulty, as the paper argues. (The quick preset, 5,000 samples x 2 runs, draws the "
        "same curves in seconds.)"
    )  # fmt: skip

    quick = r["size_window_quick"]
    runs = quick.sweep("size_window")
    w1 = _mean_by([x for x in runs if x["window"] == 1], "num_examples")
    w2 = [x for x in runs if x["window"] == 2]
    fitted1 = all(x["train_accuracy"] >= 0.999 for x in runs if x["window"] == 1)
    failed = sorted({x["num_examples"] for x in w2 if x["failed"]})
    seeds = len({x["seed"] for x in runs})
    bullets.append(
        f"{_img('size_window_quick/figures/size_window_test_accuracy.png')}\n"
        f"`python recipes/token_sweep.py --sweep size_window` ({total(runs)}, {len(runs)} runs, "
        f"{runs[0]['backend']}): the paper's MLP "
        + ("fits every window-1 training set, while " if fitted1 else "")
        + f"window-1 test accuracy (mean of {seeds} seeds) climbs "
        + ", ".join(f"{dec(v)} at {n // 1000}k" for n, v in w1.items())
        + f" (Figure 9's threshold). Window 2 stays at chance in this budget "
        f"({decs(field(w2, 'test_accuracy'))})"
        + (f"; its runs that failed to fit (at {', '.join(f'{n // 1000}k' for n in failed)}) "
           "are crosses." if failed else ".")
    )  # fmt: skip

    found = _figure7(r, "block_holdout_quick")["resnet18"]
    logits = found["logits"]
    both = sum(found["runs"][s]["wall_time_s"] for s in ("iid", "holdout"))
    bullets.append(
        f"{_img('block_holdout_quick/resnet18/logits.png')}\n"
        f"`python recipes/block_holdout.py` ({minutes(both)}, real MNIST, ResNet18 at width "
        f"{found['config']['width']}, {found['runs']['iid']['backend']}; Figures 7-8): trained "
        f"IID the CNN gets {pct(logits['models']['IID']['accuracy'])} on the held-out test set "
        f"({pct(logits['iid_test_accuracy'])} on IID test data); trained under holdout it fits "
        f"its training set ({pct(logits['holdout_train_accuracy'])}) yet scores "
        f"{pct(logits['holdout_test_accuracy'], 2)} on the held-out test set, far below chance, "
        "because it gives the classes never seen in the named cell (red) low logits."
    )  # fmt: skip

    summary = r["fast_slow_quick"].json("fast_slow_quick.json")
    runs = r["fast_slow_quick"].sweep("fast_slow_quick")
    by_speed = {}
    for seed in summary["seeds"]:
        by_speed.setdefault(seed["speed"], []).append(seed)
    cka = summary["cka"]
    means = cka["mean_by_kind"]

    def group(speed):
        seeds = by_speed.get(speed, [])
        if not seeds:
            return f"no {speed} learner"
        fits = [s["fit_epoch"] for s in seeds if s["fit_epoch"] is not None]
        never = len(seeds) - len(fits)
        label = "epochs" if len(set(fits)) > 1 else "epoch"
        when = (f"fit at {label} {span(fits, str)}" if fits else "") + (
            f"{', ' if fits else ''}{never} never fit" if never else ""
        )
        return (f"{len(seeds)} {speed} ({when}; test "
                f"{pcts([s['final_test_accuracy'] for s in seeds], 0)})")  # fmt: skip

    def ordering(holds):
        return "the paper's ordering" if holds else "not the paper's ordering"

    ordered = cka["fast1_fast2"] > cka["fast1_slow"]
    mean_ordered = means["fast_fast"] > means["fast_slow"]
    bullets.append(
        _img("fast_slow_quick/fast_slow_quick_learning_curves.png",
             "fast_slow_quick/fast_slow_quick_cka.png") + "\n"
        + f"`python recipes/fast_slow.py` ({total(runs)}, {runs[0]['backend']}; Figures 12-13): "
        f"{len(summary['seeds'])} seeds of a narrower MLP on window 2: {group('fast')}, "
        f"{group('between')}, {group('slow')}. Linear CKA of `pre_logits` on the slow learner's "
        f"training set: the picked pair fast-fast {dec(cka['fast1_fast2'])} against fast-slow "
        f"{dec(cka['fast1_slow'])} ({ordering(ordered)}), "
        f"and over all pairs {dec(means['fast_fast'])} against {dec(means['fast_slow'])} "
        f"({'the same ordering' if mean_ordered else 'no ordering'}; single pairs range widely, "
        "with the label frequency each seed uses). At the paper's scale (`--preset "
        "medium_main`, docs/results) the ordering shows at the first hidden layers and not at "
        "the last."
    )  # fmt: skip

    a = r["aggregations_quick"]
    mod = a.runs(aggregation="mod_sum")
    rest = [x for x in a.lines if x["aggregation"] != "mod_sum"]
    by_n = {n: [x["test_accuracy"] for x in rest if x["num_examples"] == n]
            for n in sorted({x["num_examples"] for x in rest})}  # fmt: skip
    bullets.append(
        f"{_img('aggregations_quick/figures/aggregations_test_accuracy.png')}\n"
        f"`python recipes/token_sweep.py --sweep aggregations` ({total(a.lines)} at low "
        f"priority on the shared CPU, {a.lines[0]['backend']}; Figure 16): the MLP on windows "
        f"2-3 with {' and '.join(f'{n // 1000}k' for n in by_n)} examples. mod_sum stays at "
        f"chance ({pcts(field(mod, 'test_accuracy'))}"
        + (f", failing to fit at {_thousands(x for x in mod if x['failed'])}"
           if any(x["failed"] for x in mod) else "")
        + "); median, maj_vote, min and max reach "
        + " and ".join(f"{decs(v)} test accuracy at {n // 1000}k" for n, v in by_n.items())
        + ". At window 2 median, maj_vote and min are the same function (lower median, ties to "
        "the smallest value), hence identical runs."
    )  # fmt: skip

    p = r["pointer_quick"]

    def acc(pointer, window, n):
        return p.one(pointer=pointer, window=window, num_examples=n)["test_accuracy"]

    w2 = p.runs(pointer=True, window=2)
    bullets.append(
        f"{_img('pointer_quick/figures/pointer_test_accuracy.png')}\n"
        f"`python recipes/token_sweep.py --sweep pointer` ({total(p.lines)} at low priority on "
        f"the shared CPU, {p.lines[0]['backend']}; Figure 17, with the MLP where the paper uses "
        f"MLP-Mixer): without the pointer, window 1 gets {dec(acc(False, 1, 2_000))} from 2k "
        f"examples and window 2 {dec(acc(False, 2, 10_000))} from 10k "
        f"({dec(acc(False, 2, 2_000))} at 2k); with the pointer window 1 needs 10k "
        f"({dec(acc(True, 1, 2_000))} at 2k, {dec(acc(True, 1, 10_000))} at 10k) and window 2 "
        f"is not learned ({decs(field(w2, 'test_accuracy'))}; failed runs at "
        f"{_thousands(x for x in w2 if x['failed'])}), "
        "so the pointer is what makes it hard."
    )  # fmt: skip

    h = r["holdout_quick"]
    runs = h.sweep("holdout")
    by_holdout = {}
    for x in sorted(runs, key=lambda x: (x["holdout"], x["seed"])):
        by_holdout.setdefault(x["holdout"], []).append(dec(x["test_accuracy"], 3))
    first = runs[0]
    bullets.append(
        f"`python recipes/token_sweep.py --sweep holdout` ({total(runs)}, {first['backend']}): "
        f"window {first['window']}, narrower MLP, {first['num_examples'] // 1000}k examples, "
        f"{len({x['seed'] for x in runs})} seeds: held-out test accuracy "
        + ", ".join(f"{' / '.join(v)} with holdout-{k}" for k, v in by_holdout.items())
        + " (the paper's MLP on 300k: docs/results)."
    )  # fmt: skip

    b = r["boolean"]
    f3 = b.json("quick_f3.json")
    runs = b.sweep("quick_f3")
    pointer_bits = f3["config"]["run"].get("pointer_bits", 3)
    pointer = [x for x in f3["bits"] if x["bit"] < pointer_bits]
    below = all(x["half_mse_mean"] < x["influence"] for x in pointer)
    bullets.append(
        f"{_img('boolean/quick_f3.png')}\n"
        f"`python recipes/boolean_holdout.py` (Boolean PVR, Abbe et al. 2022; {len(runs)} runs, "
        f"{total(runs)} on the shared CPU, {runs[0].get('backend', 'jax')}): f3 over "
        f"{len(f3['bits'])} bits with their MLP, one run per frozen bit. Half the MSE on the "
        f"whole cube follows the bit's Boolean influence (correlation {dec(f3['correlation'], 3)}; "
        "left)" + (", below it for the pointer bits" if below else "") + "; right: the learned "
        "function's Fourier coefficients per epoch for frozen bit 0 against those of f with "
        "x0 = +1 (dotted)."
    )  # fmt: skip
    return "".join("- " + b.replace("\n", "\n  ") + "\n" for b in bullets)
