"""Figures of the paper's analyses: logits (Figure 8), CKA (Figure 13), noise sensitivity
(Figure 5) and what holdout runs predict on their held-out windows (Figure 14's misses)."""

import math
import textwrap

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from pvr_keras.files import save_figure


def _save(fig, path, dpi=110):
    fig.tight_layout()
    return save_figure(fig, path, dpi=dpi)


def distinct_colors(n):
    """``n`` colours, no two alike: tab10's for up to 10 series, tab20's for up to 20, evenly
    spaced hues beyond (tab10 indexed past its end repeats its last colour)."""
    if n <= 10:
        return [matplotlib.colormaps["tab10"](i) for i in range(n)]
    if n <= 20:
        return [matplotlib.colormaps["tab20"](i) for i in range(n)]
    return [matplotlib.colormaps["hsv"](i / n) for i in range(n)]


def logits(analysis, held_out, path, title):
    """Figure 8: mean logit of each class, per model (rows) and subset of the held-out test
    examples (columns); the classes held out in that subset's cell in red.

    Args:
        analysis: ``analysis.logit_analysis``'s result, ``{model: summary}``.
        held_out: per subset (column), the classes held out there.
        path: where the PNG goes.
    """
    models = list(analysis)
    subsets = list(next(iter(analysis.values()))["subsets"])
    fig = Figure(figsize=(3.4 * len(subsets), 2.8 * len(models)))
    axes = fig.subplots(len(models), len(subsets), sharey=True, squeeze=False)
    num_classes = len(next(iter(analysis.values()))["mean_logits_by_class"])
    classes = np.arange(num_classes)
    for i, model in enumerate(models):
        for j, subset in enumerate(subsets):
            ax = axes[i, j]
            group = analysis[model]["subsets"][subset]
            colors = ["tab:red" if c in held_out[j] else "tab:gray" for c in classes]
            ax.bar(classes, group["mean_logits"], color=colors)
            ax.axhline(0, color="black", linewidth=0.5)
            ax.set_xticks(classes)
            ax.set_title(f"{subset} (n={group['count']})", fontsize=9)
            if j == 0:
                accuracy = analysis[model]["accuracy"]
                ax.set_ylabel(f"trained {model}\nmean logit (acc {accuracy:.0%})")
            if i == len(models) - 1:
                ax.set_xlabel("class")
    fig.suptitle(f"{title}\nheld-out test examples; red: classes held out in the named cell")
    return _save(fig, path)


def cka_bars(bars, path, title):
    """Figure 13: one bar per compared pair (``[(label, value, color), ...]``)."""
    fig = Figure(figsize=(1.6 + 1.3 * max(1, len(bars)), 3.8))
    ax = fig.subplots()
    if bars:
        ax.bar([b[0] for b in bars], [b[1] for b in bars], color=[b[2] for b in bars])
        for i, (_, value, _) in enumerate(bars):
            ax.text(i, value + 0.01, f"{value:.3f}", ha="center", fontsize=9)
        ax.set_title(title, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    else:
        ax.text(0.5, 0.5, title, ha="center")
    ax.set(ylim=(0, 1.05), ylabel="CKA")
    return _save(fig, path)


def noise_curves(deltas, curves, path, *, title, log_delta_range):
    """Figure 5a: NS_delta against delta (log axis), one line per window.

    Args:
        deltas: the delta grid.
        curves: ``{window: NS values over deltas}``.
        log_delta_range: (ln of least, ln of largest delta), for the ticks.
    """
    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    colors = matplotlib.colormaps["viridis"](np.linspace(0, 0.9, len(curves)))
    for (window, ns), color in zip(curves.items(), colors, strict=True):
        ax.plot(deltas, ns, marker=".", color=color, label=f"window {window}")
    ax.set_xscale("log")
    low, high = log_delta_range
    powers = range(math.ceil(low), math.floor(high) + 1)
    ax.set_xticks([math.exp(p) for p in powers], [f"$e^{{{p}}}$" for p in powers])
    ax.minorticks_off()
    ax.set_xlabel(r"$\delta$")
    ax.set_ylabel(r"NS$_\delta$")
    ax.set_title(title)
    ax.legend(fontsize="small", ncol=2)
    return _save(fig, path, dpi=120)


def noise_averages(windows, averages, path, *, log_delta_range):
    """Figure 5b: NS_delta averaged over the delta grid, one line per aggregation.

    Args:
        windows: the windows (x axis).
        averages: ``{aggregation: [mean NS per window]}``.
    """
    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    for aggregation, values in averages.items():
        ax.plot(windows, values, marker="o", label=aggregation)
    ax.set_xlabel("window size")
    low, high = (f"{v:g}" for v in log_delta_range)
    ax.set_ylabel(rf"mean NS$_\delta$ over $\delta \in [e^{{{low}}}, e^{{{high}}}]$")
    ax.set_xticks(windows)
    ax.set_title("Noise sensitivity by aggregation")
    ax.legend(fontsize="small")
    return _save(fig, path, dpi=120)


def held_out_predictions(summaries, path):
    """The labels each holdout run predicts on its held-out test windows (green: their true
    labels), one panel per run (``analysis.held_out_summary`` results with id fields)."""
    cols = min(4, len(summaries))
    rows = -(-len(summaries) // cols)
    fig = Figure(figsize=(3.2 * cols, 2.6 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, s in zip(axes.flat, summaries, strict=False):
        counts = s["predicted_counts"]
        labels = {t["label"] for t in s["tuples"]}
        colors = ["tab:green" if c in labels else "tab:gray" for c in range(len(counts))]
        ax.bar(range(len(counts)), counts, color=colors)
        base = "".join(map(str, s["holdout_values"]))
        ax.set_title(f"w{s['window']} k={s['holdout']} of ({base}) s{s['seed']}\n"
                     f"held-out acc {s['accuracy']:.2f}, IID {s['iid_test_accuracy'] or 0:.2f}",
                     fontsize=8)  # fmt: skip
        ax.set_xticks(range(len(counts)))
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(summaries) :]:
        ax.axis("off")
    fig.suptitle("Predicted labels on the held-out test windows (green: their true labels)",
                 fontsize=9)  # fmt: skip
    return _save(fig, path)


def benchmark(entries, columns, path, title):
    """A benchmark suite's table as grouped bars: one group per entry, one bar per model.

    Args:
        entries: the entry names (x axis).
        columns: ``{model label: [test accuracy per entry, or None]}``, the benchmarked model
            first.
    """
    fig = Figure(figsize=(max(6.0, 1.1 * len(entries) * max(1, len(columns)) ** 0.5 + 2), 3.8))
    ax = fig.subplots()
    width = 0.8 / max(1, len(columns))
    colors = distinct_colors(len(columns))
    for i, (label, values) in enumerate(columns.items()):
        xs = [j + (i - (len(columns) - 1) / 2) * width for j in range(len(entries))]
        ys = [v if v is not None else 0.0 for v in values]
        ax.bar(xs, ys, width=width, label=label, color=colors[i],
               edgecolor="black" if i == 0 else None)  # fmt: skip
        for x, v in zip(xs, values, strict=True):
            if v is None:
                ax.text(x, 0.02, "-", ha="center", fontsize=7)
    ax.axhline(0.1, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(entries)), entries, fontsize=8, rotation=20)
    ax.set(ylim=(0, 1.05), ylabel="test accuracy")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=min(4, len(columns)), loc="upper right")
    return _save(fig, path)


def boolean_holdout(points, tracks, path, title):
    """Generalisation error against Boolean influence (Abbe et al. 2022), and what one run
    learned epoch by epoch.

    Args:
        points: per frozen bit, ``(bit, influence, [half MSE on the cube per seed])``.
        tracks: ``None``, or one run's tracking: ``{"bit", "epochs": [...], "half_mse":
            [...], "lines": [(label, [coefficient per epoch], target)]}``, the monomials
            whose coefficients are drawn (the target's coefficient dashed).
        path: where the PNG goes.
    """
    fig = Figure(figsize=(10.5 if tracks else 5.2, 4.4))
    axes = fig.subplots(1, 2 if tracks else 1, squeeze=False)[0]
    ax = axes[0]
    top = max([p[1] for p in points] + [max(p[2]) for p in points] + [1e-3]) * 1.1
    ax.plot([0, top], [0, top], color="gray", linestyle="--", linewidth=1, label="½·MSE = Inf")
    for bit, influence, errors in points:
        mean = float(np.mean(errors))
        low, high = mean - min(errors), max(errors) - mean
        ax.errorbar([influence], [mean], yerr=[[low], [high]], fmt="o", color="tab:blue",
                    capsize=3)  # fmt: skip
        ax.annotate(str(bit), (influence, mean), textcoords="offset points", xytext=(4, 3),
                    fontsize=7)  # fmt: skip
    ax.set(xlim=(0, top), ylim=(0, top), xlabel="Boolean influence of the frozen bit, Inf_i(f)",
           ylabel="generalisation error (½·MSE on the cube)")  # fmt: skip
    seeds = max(len(p[2]) for p in points)
    ax.set_title(f"one point per frozen bit (labelled); {seeds} seed{'s' * (seeds > 1)}"
                 f"{', bars: min-max' if seeds > 1 else ''}", fontsize=8)  # fmt: skip
    ax.legend(fontsize=7, loc="upper left")
    if tracks:
        ax = axes[1]
        colors = distinct_colors(len(tracks["lines"]))
        for k, (label, values, target) in enumerate(tracks["lines"]):
            ax.plot(tracks["epochs"], values, color=colors[k], label=label)
            ax.axhline(target, color=colors[k], linestyle=":", linewidth=1)
        ax.plot(tracks["epochs"], tracks["half_mse"], color="black", linewidth=2,
                label="½·MSE on the cube")  # fmt: skip
        ax.set(xlabel="epoch", ylabel="Fourier coefficient of the learned function")
        ax.set_title(f"frozen bit {tracks['bit']}: coefficients per epoch (dotted: those of f "
                     f"with x{tracks['bit']} = +1)", fontsize=8)  # fmt: skip
        ax.legend(fontsize=6, ncol=2)
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def gotu(coefficients, metric, path, title):
    """What networks learn on the unseen (Abbe et al. 2023): the coefficients of the relevant
    monomials against the truth and the min-degree interpolator, and one number per variant.

    Args:
        coefficients: ``{"monomials": [name, ...], "target": [...], "mdi": [...],
            "learned": {variant: [mean coefficient over seeds, ...]}}``, optionally with
            ``"measured"``, how (the axis; default "on the whole cube"); or, where each variant
            has its own MDI (length generalisation), ``{"profiles": {variant: [share of the
            Fourier weight per degree, ...]}, "mdi_degrees": {variant: degree}}``.
        metric: ``{"name": axis label, "variants": [label, ...], "values": [[per seed], ...],
            "reference": {label: y}}``: the leak per model (1: the MDI, 0: the truth), per
            learning rate or per ball radius, or the steps to the loss threshold.
        path: where the PNG goes.
    """
    fig = Figure(figsize=(11, 4.4))
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    if "profiles" in coefficients:
        _degree_profiles(left, coefficients)
    else:
        _monomials(left, coefficients)
    _metric_panel(right, metric)
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)


def _monomials(left, coefficients):
    """The relevant monomials' coefficients: truth, MDI and each variant's (mean over seeds)."""
    names = coefficients["monomials"]
    learned = coefficients["learned"]
    series = [
        ("truth f", coefficients["target"], "black"),
        ("MDI", coefficients["mdi"], "lightgray"),
    ]
    colors = distinct_colors(len(learned))
    series += [(f"learned: {v}", c, colors[i]) for i, (v, c) in enumerate(learned.items())]
    width = 0.8 / len(series)
    for k, (label, values, color) in enumerate(series):
        hatch = "//" if label == "MDI" else None
        left.bar(np.arange(len(names)) + (k - (len(series) - 1) / 2) * width, values, width,
                 label=label, color=color, hatch=hatch, edgecolor="gray")  # fmt: skip
    left.axhline(0, color="gray", linewidth=0.5)
    left.set_xticks(np.arange(len(names)), names, rotation=45, ha="right", fontsize=7)
    measured = coefficients.get("measured", "on the whole cube")
    left.set(ylabel=f"Fourier coefficient ({measured})")
    left.set_title("the relevant monomials: truth, min-degree interpolator, learned (mean "
                   "over seeds)", fontsize=8)  # fmt: skip
    # room above the bars for the legend: a row of it takes about 7% of the axes
    rows = math.ceil(len(series) / 3)
    low, high = left.get_ylim()
    left.set_ylim(low, high + (high - low) * 0.07 * rows / max(0.1, 1 - 0.07 * rows))
    left.legend(fontsize=6, ncol=3, loc="upper left")


def _degree_profiles(left, coefficients):
    """Each variant's learned degree profile (share of the Fourier weight per degree, mean over
    seeds), its MDI's degree marked by a dotted line of the same colour."""
    profiles = coefficients["profiles"]
    colors = distinct_colors(len(profiles))
    for k, (label, shares) in enumerate(profiles.items()):
        left.plot(range(len(shares)), shares, "o-", color=colors[k], label=f"learned: {label}")
        degree = coefficients["mdi_degrees"].get(label)
        if degree is not None:
            left.axvline(degree, color=colors[k], linestyle=":", linewidth=1)
    left.set(xlabel="degree", ylabel="share of the Fourier weight (on the whole cube)")
    left.set_title("learned degree profiles; dotted: each MDI's degree", fontsize=8)
    left.legend(fontsize=6, ncol=2)


def _metric_panel(right, metric):
    """One number per run (dots) and per variant (the mean, a bar), with reference lines."""
    variants = metric["variants"]
    for i, values in enumerate(metric["values"]):
        found = [v for v in values if v is not None]
        if not found:
            continue
        right.plot([i] * len(found), found, "o", color="tab:blue", alpha=0.6)
        right.plot([i - 0.25, i + 0.25], [np.mean(found)] * 2, color="black", linewidth=2)
    for label, y in metric.get("reference", {}).items():
        right.axhline(y, color="gray", linestyle="--", linewidth=1)
        right.annotate(label, (len(variants) - 0.5, y), fontsize=7, ha="right", va="bottom")
    right.set_xticks(np.arange(len(variants)), variants, rotation=30, ha="right", fontsize=7)
    right.set(ylabel=metric["name"])
    right.set_title("per variant: seeds (dots) and their mean (bar)", fontsize=8)


def hop_accuracy(lines, path, title, *, train_hops=(), baseline=None):
    """Multi-hop PVR: test accuracy against the hop count, one line per model (the mean over
    seeds, a band from the worst seed to the best), the hop counts trained on shaded.

    Args:
        lines: ``{label: {"hops": [k, ...], "mean": [...], "min": [...], "max": [...]}}``,
            accuracies in [0, 1] (``min`` and ``max`` may be left out: one seed).
        path: where the PNG goes.
        title: the figure's title.
        train_hops: the hop counts of the training split (shaded).
        baseline: ``{"hops": [...], "values": [...]}``: the majority class's accuracy per hop
            count (dotted), or None.
    """
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    for k in train_hops:
        ax.axvspan(k - 0.5, k + 0.5, color="tab:green", alpha=0.12, linewidth=0)
    colors = distinct_colors(len(lines))
    for i, (label, line) in enumerate(lines.items()):
        ax.plot(line["hops"], line["mean"], "o-", color=colors[i], label=label)
        if line.get("min") is not None and line.get("max") is not None:
            ax.fill_between(line["hops"], line["min"], line["max"], color=colors[i],
                            alpha=0.2, linewidth=0)  # fmt: skip
    if baseline:
        ax.plot(baseline["hops"], baseline["values"], ":", color="gray",
                label="majority class")  # fmt: skip
    hops = sorted({k for line in lines.values() for k in line["hops"]} | set(train_hops))
    if hops:
        ax.set_xticks(hops)
        ax.set_xlim(hops[0] - 0.5, hops[-1] + 0.5)
    ax.set(ylim=(0, 1.02), xlabel="hops (pointers followed)", ylabel="test accuracy")
    shaded = " (shaded: the hop counts trained on)" if train_hops else ""
    ax.set_title(f"mean over seeds, band: min-max{shaded}", fontsize=8)
    ax.legend(fontsize=7, loc="best")
    fig.suptitle(textwrap.fill(title, 90), fontsize=9)
    return _save(fig, path)
