"""How numbers are written in the docs (percentages, spans, minutes) and the small
statistics the verdicts use (Spearman's rho and its exact p, a one-sided upper bound)."""

import statistics


def pct(x, digits=1):
    return f"{100 * x:.{digits}f}%"


def span(values, fmt):
    """``lo-hi`` of the formatted values (one value when they agree)."""
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}-{high}"


def pcts(values, digits=1):
    """``lo-hi%``, one percent sign."""
    return span(values, lambda x: f"{100 * x:.{digits}f}") + "%"


def dec(x, digits=2):
    return f"{x:.{digits}f}"


def decs(values, digits=2):
    return span(values, lambda x: dec(x, digits))


def field(records, key):
    return [r[key] for r in records]


def fit(record):
    from pvr_keras.analysis.dynamics import fit_epoch

    return fit_epoch(record.get("curve_train_eval_accuracy") or [])


def minutes(seconds):
    """Minutes of wall time, as the tables print them."""
    minutes = seconds / 60
    return f"{minutes:.1f} min" if minutes < 10 else f"{minutes:.0f} min"


def run_minutes(records):
    """The range of the runs' wall times, in minutes."""
    return span([r["wall_time_s"] / 60 for r in records], lambda m: f"{m:.0f}") + " min"


def total(records):
    return minutes(sum(r["wall_time_s"] for r in records))


def hours(seconds):
    return f"{seconds / 3600:.1f} h"


def _ranks(values):
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Spearman's rank correlation (Pearson's on average ranks)."""
    return statistics.correlation(_ranks(list(xs)), _ranks(list(ys)))


def spearman_p(xs, ys):
    """The exact two-sided p of Spearman's correlation: the share of the n! pairings of the
    ys' ranks with the xs' whose |correlation| is at least the observed one (n <= 8)."""
    import itertools

    xs, ys = list(xs), list(ys)
    if len(xs) > 8:
        raise ValueError("spearman_p enumerates n! orders: n <= 8")
    rx, ry = _ranks(xs), _ranks(ys)
    observed = abs(statistics.correlation(rx, ry))
    perms = list(itertools.permutations(ry))
    hits = sum(abs(statistics.correlation(rx, list(p))) >= observed - 1e-12 for p in perms)
    return hits / len(perms)


def upper_bound(successes, trials, level=0.95):
    """The one-sided Clopper-Pearson upper bound on a rate from 0 events: 1 - (1-level)^(1/n)."""
    if successes:
        raise ValueError("only the bound from zero events is used here")
    return 1 - (1 - level) ** (1 / trials)


def _mean_by(records, key, value="test_accuracy"):
    """``{records' key: mean of value}``, keys sorted."""
    groups = {}
    for record in records:
        groups.setdefault(record[key], []).append(record[value])
    return {k: statistics.mean(v) for k, v in sorted(groups.items())}


def _thousands(records):
    """The records' training-set sizes as ``2k and 10k``."""
    return " and ".join(f"{n // 1000}k" for n in sorted({x["num_examples"] for x in records}))
