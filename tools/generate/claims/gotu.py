"""Generalization on the unseen (Abbe et al. 2023): the leak towards the min-degree
interpolator, judged by the paper's words per model (the ``gotu`` study)."""

import collections
import math
import statistics

from .formats import dec, decs, span
from .records import as_cell, markdown_table, study_json

GOTU_TASKS = ("2parity", "threesym", "rfexample", "cyclic3dim15", "maj3", "2parity40", "lr",
              "lengthgen", "full16parity")  # fmt: skip


def _gotu(r):
    """The committed gotu tasks: ``{task: gotu.json}`` in the study's order."""
    root = r.results / "gotu"
    return {t: r.json(f"gotu/{t}/gotu.json") for t in GOTU_TASKS
            if (root / t / "gotu.json").is_file()}  # fmt: skip


def gotu(r):
    found = _gotu(r)
    parts = []
    for task, g in found.items():
        seeds = sorted({v["seeds"] for v in g["variants"]})
        counted = f"{span(seeds, str)} seed{'s' * (max(seeds) > 1)}"
        if task == "full16parity":
            cells = ", ".join(f"{v['variant']} {v['steps_mean']:.0f}" for v in g["variants"]
                              if v["steps_mean"] is not None)  # fmt: skip
            parts.append(f"{task} (steps to loss < 1e-3, {counted}): {cells}")
            continue
        cells = ", ".join(f"{v['variant']} {dec(v['leak_mean'])}" for v in g["variants"]
                          if v["leak_mean"] is not None)  # fmt: skip
        parts.append(f"{task} ({counted}): {cells}")
    ours = ("leak alpha on the unseen points (1: the MDI, 0: the truth), per model: "
            + "; ".join(parts)) if parts else "running"  # fmt: skip
    engines = collections.Counter(line["backend"] for task in found
                                  for line in r[f"gotu/{task}"].lines)  # fmt: skip
    on = ", ".join(f"{n} on {b}" for b, n in sorted(engines.items()))
    time = (f"[`gotu`](gotu.md) study; `bash tools/studies/gotu_study.sh` "
            f"({sum(engines.values())} runs so far: {on}; "
            "resumable)")  # fmt: skip
    return ours, time


# their Figure 1-3 tasks, Figure 9's 2parity at d = 40 and Figure 10's maj3
MDI_TASKS = ("2parity", "threesym", "cyclic3dim15", "rfexample", "maj3", "2parity40")


# A model whose worst seed ends above this MSE on the seen points has not interpolated them:
# its leak says nothing about the MDI (the targets' mean squares are 1 to 15).
SEEN_FIT = 0.05


LEARNED = 0.1  # a full-parity run has learned f when its MSE on the whole cube is below this


def _curriculum(runs):
    """(holds, text) of "the Degree-Curriculum learns parity with fewer samples or steps" on
    full16parity's runs. Per size N, each mode has learned f when its mean MSE on the whole cube
    (its seen domain) is below LEARNED. Fewer samples: the curriculum learns at a smaller N than
    normal training does (or normal training at none); at the same smallest N, fewer steps (to
    a training loss below 1e-3) there. The text says both: each mode's smallest N, and the
    curriculum's steps against normal training's at every size (where normal training does not
    learn, its steps are those it took to memorise the seen points)."""
    by = collections.defaultdict(list)
    for run in runs:
        by[run["variant"]].append(run)

    def mode(n, name):
        mine = by.get(f"N{n}-{name}")
        if not mine:
            return None
        steps = [r["steps"] for r in mine if r["reached_eps"]]
        mse = statistics.fmean(r["seen_mse"] for r in mine)
        return mse < LEARNED, statistics.fmean(steps) if steps else math.inf, mse

    def said(name, found):
        learned, steps, mse = found
        step = "never reaches the loss" if steps == math.inf else f"{steps:.0f} steps"
        return f"{name} {'learns' if learned else 'does not'} ({step}, cube MSE {dec(mse)})"

    sizes = sorted({int(name.split("-")[0][1:]) for name in by})
    rows = [(n, mode(n, "normal"), mode(n, "curriculum")) for n in sizes]
    rows = [(n, normal, curriculum) for n, normal, curriculum in rows
            if normal is not None and curriculum is not None]  # fmt: skip
    first = {i: next((n for n, *modes in rows if modes[i][0]), None) for i in (0, 1)}
    normal_n, curriculum_n = first[0], first[1]
    if curriculum_n is None:
        holds = False
    elif normal_n is None or curriculum_n < normal_n:
        holds = True  # fewer samples
    elif curriculum_n == normal_n:
        _, normal, curriculum = next(row for row in rows if row[0] == curriculum_n)
        holds = curriculum[1] < normal[1]  # as many samples, fewer steps
    else:
        holds = False
    ratios = [f"{c[1] / m[1]:.1f}x at N = {n}" for n, m, c in rows
              if math.isfinite(c[1]) and math.isfinite(m[1]) and m[1] > 0]  # fmt: skip
    tried = ", ".join(str(n) for n, *_ in rows)

    def smallest(n):
        return f"N = {n}" if n is not None else f"none of N = {tried}"

    cells = "; ".join(f"N = {n}: {said('normal', m)}, {said('curriculum', c)}"
                      for n, m, c in rows)  # fmt: skip
    text = (
        f"the Degree-Curriculum learns the parity of 16 bits with fewer samples or steps (the "
        f"smallest size each learns at: curriculum {smallest(curriculum_n)}, normal training "
        f"{smallest(normal_n)}; the curriculum's steps against normal training's: "
        f"{', '.join(ratios) or 'none to compare'}) ({cells})"
    )
    return holds, text


# "A min-degree interpolator is learned": a model's seeds' mean leak at least MDI_ALPHA and
# every tracked coefficient of its seeds' mean function within MDI_COEFFICIENT of the MDI's.
MDI_ALPHA, MDI_COEFFICIENT = 0.9, 0.1
LEAKY = 0.9  # a mean-field net below this leak is "leaky" (short of the MDI); above 1: past it


PAPER_MODELS = {"rfrelu": "random features", "transformer": "the Transformer (ours at width 1/8)"}


CONTRAST = ("rfexample", "x3x4x5", "rfrelu", "rfpoly")  # their Figure 5: ReLU against poly


def _mdi_gap(g, variant):
    """The largest distance of the variant's seeds' mean coefficient from the MDI's."""
    mdi = g["tracking"]["mdi"]
    rows = [r["coefficients"] for r in g["runs"] if r["variant"] == variant and r["coefficients"]]
    means = [statistics.fmean(c[i] for c in rows) for i in range(len(mdi))]
    return max(abs(a - b) for a, b in zip(means, mdi, strict=True))


def _mdi_claims(found, unfit, leaks):
    """[(holds, text)] of the MDI claims, each by the standard above, per model the paper
    names (holds None: a model it does not name, said as ours): "a min-degree interpolator is
    learned" by random features and by the Transformer; the MLP's place; Figure 5's contrast
    (the x3x4x5 coefficient as a share of the MDI's, ReLU against the polynomial activation);
    mean-field nets reach "leaky" solutions (leak below LEAKY; past 1 is past the MDI)."""
    out = []
    per_model = collections.defaultdict(list)  # variant: [(task, leak, gap)]
    for (t, v), a in leaks.items():
        if t != CONTRAST[0] and v != "meanfield" and found[t]["tracking"]["mdi"]:
            per_model[v].append((t, a, _mdi_gap(found[t], v)))
    standard = (f"leak >= {MDI_ALPHA} and every coefficient within {MDI_COEFFICIENT} of the "
                "MDI's, seeds' mean")  # fmt: skip
    for v, name in PAPER_MODELS.items():
        if per_model.get(v):
            cells = ", ".join(f"{t} {dec(a)} (gap {dec(g)})" for t, a, g in per_model[v])
            meets = [a >= MDI_ALPHA and g <= MDI_COEFFICIENT for _, a, g in per_model[v]]
            out.append((all(meets), f"{name}, {v}: the MDI learned ({standard}) on "
                                    f"{sum(meets)} of {len(meets)} tasks: {cells}"))  # fmt: skip
    if per_model.get("mlp"):
        alphas = [a for _, a, _ in per_model["mlp"]]
        out.append((None, f"the MLP (not named by the paper) sits between the truth and the "
                          f"MDI: leak {decs(alphas)}"))  # fmt: skip
    task, monomial, relu, poly = CONTRAST
    if task in found and found[task]["tracking"]["mdi"]:
        g = found[task]
        i = g["tracking"]["monomials"].index(monomial)
        share = {m: [r["coefficients"][i] / g["tracking"]["mdi"][i] for r in g["runs"]
                     if r["variant"] == m and r["coefficients"]] for m in (relu, poly)}  # fmt: skip
        if share[relu] and share[poly]:
            out.append((min(share[poly]) > max(share[relu]),
                        f"their Figure 5's contrast on {task}: the {monomial} coefficient as a "
                        f"share of the MDI's, {relu} {decs(share[relu])}, {poly} "
                        f"{decs(share[poly])}"))  # fmt: skip
    mean_field = {t: a for (t, v), a in leaks.items() if v == "meanfield"}
    if mean_field:
        leaky = [f"{t} {dec(a)}" for t, a in mean_field.items() if a < LEAKY]
        past = [f"{t} {dec(a)}" for t, a in mean_field.items() if a > 1]
        text = (f"the mean-field net is leaky (leak below {LEAKY}) on {len(leaky)} of "
                f"{len(mean_field)} tasks ({', '.join(leaky) or 'none'})"
                + (f"; past the MDI on {', '.join(past)}" if past else ""))  # fmt: skip
        out.append((2 * len(leaky) > len(mean_field), text))
    return out


def _lr_fall(lr):
    """(holds, text) of "large learning rates leak" on the lr task's variants: alpha falls when
    the largest rate's seeds all end below the smallest rate's (their ranges apart); the rates
    whose seed range overlaps the smallest's are said as flat."""
    rows = sorted((float(v["variant"][2:]), v) for v in lr["variants"]
                  if v["leak_mean"] is not None)  # fmt: skip
    (low, first), (high, last) = rows[0], rows[-1]

    def cell(v, rate):
        return f"{dec(v['leak_mean'])} ({dec(v['leak_min'])}-{dec(v['leak_max'])}) at {rate:g}"

    lo, hi = first["leak_min"], first["leak_max"]
    flat = [rate for rate, v in rows if v["leak_min"] <= hi and v["leak_max"] >= lo]
    seeds = span(sorted({v["seeds"] for _, v in rows}), str)
    text = (f"alpha falls with the learning rate ({seeds} seeds; mean, seed range): "
            f"{cell(first, low)} to {cell(last, high)}; flat within the seeds' spread from "
            f"{low:g} to {max(flat):g}")  # fmt: skip
    return last["leak_max"] < first["leak_min"], text


def gotu_verdict(r):
    """Each of the row's claims checked on the committed records: whether random features and
    the Transformer learn the MDI, Figure 5's contrast and the mean-field net's leaky solutions
    (``_mdi_claims``; models that did not fit the seen points left out), whether alpha falls
    with the learning rate (``_lr_fall``), whether the MLP trained on a Hamming ball stays at
    the MDI's degrees (``low_degree_weight`` > 0.5),
    and whether the curriculum learns the parity with fewer samples or steps (``_curriculum``)."""
    found = _gotu(r)
    missing = [t for t in GOTU_TASKS if t not in found]
    counts = [v["seeds"] for g in found.values() for v in g["variants"]] or [0]
    seeds = min(counts)
    held, failed = [], []

    def claim(ok, text):
        (held if ok else failed).append(text)

    seen = collections.defaultdict(float)  # (task, variant): the worst seed's seen MSE
    for t in MDI_TASKS:
        for run in found.get(t, {}).get("runs", []):
            key = (t, run["variant"])
            seen[key] = max(seen[key], run["seen_mse"])
    unfit = {k: e for k, e in seen.items() if e > SEEN_FIT}
    leaks = {
        (t, v["variant"]): v["leak_mean"]
        for t in MDI_TASKS
        if t in found
        for v in found[t]["variants"]
        if v["leak_mean"] is not None and (t, v["variant"]) not in unfit
    }
    for ok, text in _mdi_claims(found, unfit, leaks):
        if ok is None:
            held.append(text)  # said, not judged: a model the paper does not name
        else:
            claim(ok, text)
    if "lr" in found:
        claim(*_lr_fall(found["lr"]))
    if "lengthgen" in found:
        low = collections.defaultdict(list)  # k (the MDI's degree): each seed's weight <= k
        for run in found["lengthgen"]["runs"]:
            low[run["mdi_degree"]].append(run["low_degree_weight"])
        means = {k: statistics.fmean(w) for k, w in sorted(low.items())}
        cells = ", ".join(f"{dec(w)} at k = {k}" for k, w in means.items())
        text = (
            f"trained on the Hamming ball H <= k, the MLP keeps its Fourier weight at degree <= k "
            f"(the MDI's degrees; the parity's is {found['lengthgen']['task']['num_bits']}): "
            f"{cells}"
        )
        claim(all(w > 0.5 for w in means.values()), text)
    if "full16parity" in found:
        claim(*_curriculum(found["full16parity"]["runs"]))
    if unfit:
        cells = ", ".join(f"{v} on {t} (seen MSE {dec(e)})" for (t, v), e in unfit.items())
        failed.append(f"left out, not fit on the seen points in their epochs: {cells}")
    if not held and not failed:
        return "running"
    if not failed and not missing and seeds >= 3:
        head = "reproduced"
    else:
        head = "not reproduced" if not held and not missing else "partly"
    said = "; ".join([*held, *(f"not: {x}" for x in failed)])
    left = f"; {', '.join(missing)} not yet run" if missing else ""
    many = "s" * (max(counts) != 1)
    return f"{head} ({span(counts, str)} seed{many} per model, theirs 10): {said}{left}"


def polynomial(terms):
    """``[(coefficient, monomial)]`` as a polynomial: ``1 - x0 + 1.5x1``."""
    out = ""
    for c, m in terms:
        size = abs(c)
        body = m if size == 1 and m != "1" else f"{size:g}" if m == "1" else f"{size:g}{m}"
        out += (("-" if c < 0 else "") if not out else (" - " if c < 0 else " + ")) + body
    return out or "0"


def mdi_replaces(summary):
    """What a gotu task's MDI puts in place of the target's terms, from its ``gotu.json``
    (the solver's coefficients as tracked): the target's terms whose coefficient the MDI
    changes, by the MDI's terms there (``x0x1x2 by 1 - x0 - x1 + ...``; the target minus the
    first plus the second is the MDI)."""
    t = summary["tracking"]
    rows = list(zip(t["monomials"], t["target"], t["mdi"], strict=True))
    changed = [(m, f, g) for m, f, g in rows if abs(g - f) > 1e-9]
    gone = [(f, m) for m, f, _ in changed if f]
    new = [(round(g, 6), m) for m, _, g in changed if abs(g) > 1e-9]
    return f"{polynomial(gone)} by {polynomial(new)}"


def table(study):
    """Per recipes/gotu.py task (``gotu/<task>/gotu.json``): one row per variant, the leak
    towards the min-degree interpolator (mean and range over seeds), the unseen MSE, the
    steps (the Degree-Curriculum's study) and the seeds."""
    text = ""
    for path in sorted(study.glob("*/gotu.json")):
        found = study_json(study, path.parent.name, path.name)
        run = found["task"]  # the first variant's task (recipes/gotu.py)
        steps = any(v["steps_mean"] is not None for v in found["variants"])
        rows = []
        for v in found["variants"]:
            leak = ("-" if v["leak_mean"] is None else
                    f"{as_cell(v['leak_mean'])} "
                    f"({as_cell(v['leak_min'])}-{as_cell(v['leak_max'])})")  # fmt: skip
            seen = [r["seen_mse"] for r in found["runs"] if r["variant"] == v["variant"]
                    and r["seen_mse"] is not None]  # fmt: skip
            unseen = "-" if v["unseen_mse_mean"] is None else as_cell(v["unseen_mse_mean"], 3)
            row = [v["variant"], leak, unseen, as_cell(max(seen), 4) if seen else "-"]
            if steps:
                reached = [r["reached_eps"] for r in found["runs"] if r["variant"] == v["variant"]]
                row.append(f"{v['steps_mean']:.0f} ({sum(map(bool, reached))}/{len(reached)} "
                           f"reached)")  # fmt: skip
            rows.append([*row, v["seeds"]])
        text += (f"{'' if not text else chr(10)}{path.parent.name}: f = {run['target']} "
                 f"on {run['domain']}, d = {run['num_bits']}\n\n")  # fmt: skip
        header = ["variant", "leak alpha (range)", "unseen MSE", "seen MSE (worst seed)"]
        text += markdown_table(
            [*header, *(["steps to loss < eps"] if steps else []), "seeds"], rows
        )
    return text or None
