"""Paper-style plots of sweep results: accuracy against one field, one line per another.

``sweeps.make_figures(RESULTS)`` draws every sweep of a results directory with these.

A figure spec (a JSON-ready dict, stored with each sweep) says what to draw::

    {"title": ..., "x": "num_examples", "line": "window", "panels": ["model"],
     "metrics": ["test_accuracy", "train_accuracy"], "discard_below": None}

One panel per value of the ``panels`` fields (and of any other config field that varies in
the records, so no two settings are ever averaged together); in each, one line per value of
``line``; points are the mean over seeds with the standard deviation as error bars. Failed
runs (the paper's rule: final training accuracy < 20%, or NaN loss) are drawn as crosses and
left out of the mean, never dropped silently. With ``discard_below`` (Figure 14: 0.6), runs
whose final training accuracy is below it are drawn as open circles and left out as well.
"""

import csv
import io
import json
import math
import re
import reprlib

import matplotlib
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from pvr_keras import kinds, registry
from pvr_keras.errors import UntrustedCode
from pvr_keras.files import save_figure, write_text
from pvr_keras.runconfig import section_fields

FIGURES = {
    "size_window": {
        "title": "Accuracy vs training-set size, per window and architecture (Figures 9-11)",
        "x": "num_examples",
        "line": "window",
        "panels": ["model"],
        "metrics": ["test_accuracy", "train_accuracy"],
        "discard_below": None,
    },
    "aggregations": {
        "title": "Test accuracy per aggregation (Figure 16)",
        "x": "num_examples",
        "line": "window",
        "panels": ["aggregation"],
        "metrics": ["test_accuracy"],
        "discard_below": None,
    },
    "pointer": {
        "title": "Without and with pointer (Figure 17)",
        "x": "num_examples",
        "line": "window",
        "panels": ["pointer"],
        "metrics": ["test_accuracy"],
        "discard_below": None,
    },
    "holdout": {
        "title": "Holdout-k: test only on held-out windows (Figure 14)",
        "x": "holdout",
        "line": "num_examples",
        "panels": ["window"],
        "metrics": ["test_accuracy", "train_accuracy"],
        "discard_below": 0.6,
    },
}
# Sweeps of other kinds draw with the same machinery, e.g. a grid of block runs (Figure 7's
# setting over CNN widths and training-set sizes, IID and held out):
FIGURES["blocks"] = {
    "title": "2x2 blocks: accuracy vs training-set size, per CNN width (Figure 7's setting)",
    "x": "num_examples",
    "line": "width",
    "panels": ["model", "holdout"],
    "metrics": ["test_accuracy", "train_accuracy"],
    "discard_below": None,
}
LABELS = {
    "num_examples": "training examples",
    "holdout": "held-out permutations k",
    "test_accuracy": "test accuracy",
    "train_accuracy": "training accuracy (evaluated)",
}
CHANCE = 0.1  # 10 token values, 10 classes


def _value_label(field, value):
    if field == "pointer":
        return "with pointer" if value else "without pointer"
    if field == "window":
        return f"window {value} (m={value - 1})"
    if field == "width" and value is None:  # not recorded: the default, the paper's widths
        return "paper's width"
    if field == "holdout" and isinstance(value, bool):
        return "holdout (Figure 6)" if value else "IID"
    if field == "num_examples":
        return f"n={value:,}"
    if field == "holdout_values":  # None: the paper's main-text tuple (0, 1, ..., m)
        return f"held out: orders of {'(0, ..., m)' if value is None else value}"
    return f"{field}={value}" if not isinstance(value, str) else value


def _compact(value):
    """1000 -> 1k, 50000000 -> 50M: short tick labels."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 1000:
        for div, unit in ((1e6, "M"), (1e3, "k")):
            if value >= div:
                return f"{value / div:g}{unit}"
    return str(value)


def _span(values):
    return str(values[0]) if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


def _key(record, field):
    value = record.get(field)
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def run_fields(records=()):
    """The run fields of the records' task kinds (the token kind's without records); the
    ``system`` fields are never in a record. A kind of someone's own code that is not
    imported is not imported for this (drawing runs no code): its records' own keys stand in
    for its fields."""
    names = {r.get("kind", "token") for r in records} or {"token"}
    fields = {}
    for kind in sorted(names):
        try:
            with registry.reading("the records to draw"):
                owner = section_fields(kinds.kind(kind))
        except UntrustedCode:
            for record in records:
                if record.get("kind", "token") == kind:
                    fields.update(dict.fromkeys(record))
            continue
        fields.update({f: None for f, section in owner.items() if section != "system"})
    return tuple(fields)


# An accuracy field of the records (``test_accuracy``, ``train_accuracy``, ...): drawn on
# [0, 1], and each names a PNG file, so letters, digits and _ only.
METRIC = re.compile(r"[A-Za-z0-9_]*accuracy")


def spec_problem(spec, where=""):
    """What is wrong with a figure spec read from a file (a sweep's ``figure``), or None.

    A spec is a JSON object with keys of ``FIGURES``' specs (any left out takes the
    default): ``title`` a string, ``x`` and ``line`` field names, ``panels`` a list of
    them, ``metrics`` a non-empty list of accuracy fields (``METRIC``), ``discard_below``
    null or a number in [0, 1]. Whether the names are the records' run fields is for
    ``check_spec``, with the records. ``where``: the spec's key in the file (``figure``),
    put before each key named.
    """
    name = f"{where}." if where else ""
    if not isinstance(spec, dict):
        return f"{where or 'the figure spec'} is {reprlib.repr(spec)}, not a JSON object"
    unknown = sorted(set(spec) - set(FIGURES["size_window"]))
    if unknown:
        return (f"not a key of a figure spec: {', '.join(map(str, unknown))} (it has "
                f"{', '.join(FIGURES['size_window'])})")  # fmt: skip
    for key, value in spec.items():
        if key in ("title", "x", "line"):
            if not isinstance(value, str):
                return f"{name}{key} is {reprlib.repr(value)}, not a string"
        elif key in ("panels", "metrics"):
            if not isinstance(value, list) or (key == "metrics" and not value):
                what = "field names" if key == "panels" else "at least one accuracy field"
                return f"{name}{key} is {reprlib.repr(value)}, not a list of {what}"
            for item in value:
                if key == "panels" and not isinstance(item, str):
                    return f"{name}{key} holds {reprlib.repr(item)}, not a field name"
                if key == "metrics" and not (isinstance(item, str) and METRIC.fullmatch(item)):
                    return (f"{name}{key} holds {reprlib.repr(item)}, not an accuracy field "
                            "(test_accuracy, train_accuracy, ...)")  # fmt: skip
        elif value is not None and (
            not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1
        ):  # discard_below
            return f"{name}{key} is {reprlib.repr(value)}, not null or a number in [0, 1]"
    return None


def check_spec(spec, records=()):
    """A figure spec with defaults filled in, or a ValueError that says what is wrong."""
    if not isinstance(spec, dict):
        raise ValueError(f"a figure spec must be a dict; received {reprlib.repr(spec)}")
    problem = spec_problem(spec)
    if problem:
        raise ValueError(f"a figure spec that cannot be drawn: {problem}")
    spec = {**FIGURES["size_window"], "title": "", **spec}
    fields = run_fields(records)
    for name in (spec["x"], spec["line"], *spec["panels"]):
        if name not in fields:
            raise ValueError(
                f"figure fields must be run fields ({', '.join(fields)}); received {name!r}"
            )
    return spec


def _order(value):
    """A sort key for any mix of None, numbers, strings and tuples of them (None last)."""
    if isinstance(value, tuple | list):
        return (False, "tuple", tuple(_order(v) for v in value))
    return (value is None, str(type(value)), value if value is not None else 0)


def _sort(values):
    return sorted(values, key=_order)


def summarise(records, spec, metric):
    """Rows of a figure: one per (panel, line, x) with the mean, standard deviation and range
    (min, max) over the kept seeds, and the epochs its runs ran (``epochs_ran``: a run of a
    tiny training set runs more than ``epochs``, to reach ``min_steps``)."""
    spec = check_spec(spec, records)
    x, line = spec["x"], spec["line"]
    varying = [
        f
        for f in run_fields(records)
        if f not in (x, line, "seed") and len({str(_key(r, f)) for r in records}) > 1
    ]
    panel_fields = list(spec["panels"]) + [f for f in varying if f not in spec["panels"]]
    groups = {}
    for record in records:
        key = (tuple(_key(record, f) for f in panel_fields), _key(record, line), _key(record, x))
        groups.setdefault(key, []).append(record)
    rows = []
    for (panel, line_value, x_value), group in groups.items():
        kept, failed, discarded = [], [], []
        for record in group:
            value = record.get(metric)
            if record.get("failed") or value is None:
                failed.append(value)
            elif spec["discard_below"] is not None and not (
                (record.get("train_accuracy") or 0.0) >= spec["discard_below"]
            ):
                discarded.append(value)
            else:
                kept.append(value)
        rows.append(
            {
                **dict(zip(panel_fields, panel, strict=True)),
                line: line_value,
                x: x_value,
                "metric": metric,
                "mean": float(np.mean(kept)) if kept else None,
                "std": float(np.std(kept)) if kept else None,
                "min": float(np.min(kept)) if kept else None,
                "max": float(np.max(kept)) if kept else None,
                "_epochs": sorted(
                    {r["epochs_completed"] for r in group if r.get("epochs_completed") is not None}
                ),  # fmt: skip
                "seeds": len(kept),
                "failed": len(failed),
                "discarded": len(discarded),
                "failed_values": failed,
                "discarded_values": discarded,
                "_panel": panel,
            }
        )
    rows.sort(key=lambda r: (str(r["_panel"]), str(r[line]), r[x] if r[x] is not None else 0))
    return rows, panel_fields


def panel_title(fields, panel, ran=(), width=None):
    """A panel's title: the value of each of its ``fields``, the first on a line of its own,
    the others two to a line. ``ran``: the epochs its runs ran, said where they differ from
    an ``epochs`` field (a tiny training set runs more epochs, to reach min_steps);
    ``width``: the width multiplier every run of the figure shares, said after the model.

    Example:
        >>> panel_title(["model", "epochs"], ("mixer", 30), ran=[80], width=0.125)
        "mixer at 0.125x the paper's width\\nepochs=30 (ran 80)"
    """
    parts = [_value_label(f, v) for f, v in zip(fields, panel, strict=True)]
    if "epochs" in fields and ran and list(ran) != [panel[fields.index("epochs")]]:
        parts[fields.index("epochs")] += f" (ran {_span(ran)})"
    if "model" in fields and width is not None:
        parts[fields.index("model")] += f" at {width:g}x the paper's width"
    lines = [", ".join(parts[i : i + 2]) for i in range(1, len(parts), 2)]
    return "\n".join(filter(None, [parts[0] if parts else "", *lines]))


def plot(records, spec, path, metric="test_accuracy"):
    """Draws ``metric`` of ``records`` as the paper does and saves a PNG at ``path``.

    Args:
        records: result lines (dicts) of one sweep.
        spec: figure spec (see the module docstring).
        path: where the PNG goes.
        metric: ``"test_accuracy"`` or ``"train_accuracy"``.

    Returns:
        The summary rows drawn (see ``summarise``).
    """
    if not records:
        raise ValueError("no records to plot")
    spec = check_spec(spec, records)
    rows, panel_fields = summarise(records, spec, metric)
    x, line = spec["x"], spec["line"]
    # One width for every run, drawn nowhere else: the model's panels say it.
    widths = {r.get("width") for r in records} - {None}
    drawn = {*panel_fields, x, line}
    width = widths.pop() if len(widths) == 1 and "width" not in drawn else None
    panels = _sort({r["_panel"] for r in rows}) if len(panel_fields) else [()]
    ncols = min(4, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    # A Figure, not pyplot: plotting never switches the program's matplotlib backend.
    fig = Figure(figsize=(max(6.4, 4.2 * ncols), 3.4 * nrows + 0.9))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    line_values = _sort({r[line] for r in rows})
    # Training-set sizes on one scale in every panel, so that panels compare by eye.
    all_xs = [r[x] for r in rows if r[x] is not None]
    colors = {
        v: matplotlib.colormaps["viridis"](i / max(1, len(line_values) - 1) * 0.9)
        for i, v in enumerate(line_values)
    }
    for ax, panel in zip(axes.flat, panels, strict=False):
        mine = [r for r in rows if r["_panel"] == panel]
        for value in line_values:
            pts = [r for r in mine if r[line] == value]
            if not pts:
                continue
            good = [r for r in pts if r["mean"] is not None]
            color = colors[value]
            ax.errorbar(
                [r[x] for r in good],
                [r["mean"] for r in good],
                # The range over seeds (2-5 of them: a std would say little).
                yerr=[[r["mean"] - r["min"] for r in good], [r["max"] - r["mean"] for r in good]],
                color=color,
                marker="o",
                ms=4,
                capsize=3,
                label=_value_label(line, value),
            )
            for r in pts:
                fails = [v for v in r["failed_values"] if v is not None]
                ax.scatter([r[x]] * len(fails), fails, marker="x", color=color, s=40, zorder=3)
                ax.scatter(
                    [r[x]] * len(r["discarded_values"]),
                    r["discarded_values"],
                    marker="o",
                    facecolors="none",
                    edgecolors=color,
                    s=40,
                    zorder=3,
                )
        ax.axhline(CHANCE, color="grey", lw=0.8, ls=":")
        ran = sorted({e for r in mine for e in r["_epochs"]})
        ax.set_title(panel_title(panel_fields, panel, ran, width), fontsize=9)
        ax.set(xlabel=LABELS.get(x, x), ylim=(-0.02, 1.02))
        xs = sorted({r[x] for r in mine if r[x] is not None})
        if x == "num_examples":
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xlim(min(all_xs) / 1.5, max(all_xs) * 1.5)
        ax.set_xticks(xs, [_compact(v) for v in xs])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    for ax in axes[:, 0]:
        ax.set_ylabel(LABELS.get(metric, metric))
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    seeds = sorted({r["seeds"] + r["failed"] + r["discarded"] for r in rows})
    n_failed = sum(r["failed"] for r in rows)
    n_discarded = sum(r["discarded"] for r in rows)
    note = (
        f"points: mean over seeds, bars: their range ({_span(seeds)} runs per point); dotted: "
        f"chance. x: failed run (final training accuracy < 20% or NaN loss, the paper's "
        f"rule), shown, not averaged ({n_failed} runs)."
    )
    if any(len(r["_epochs"]) > 1 or r["_epochs"][:1] != [r.get("epochs")] for r in rows
           if r["_epochs"] and "epochs" in r):  # fmt: skip
        note += " ran: the epochs run, more where a small training set needs min_steps steps."
    if spec["discard_below"] is not None:
        note += (
            f"\no: discarded, final training accuracy < {spec['discard_below']:.0%} as the "
            f"paper does for Figure 14; shown, not averaged ({n_discarded} runs)."
        )
    fig.suptitle(spec["title"] or metric, fontsize=10)
    fig.text(0.01, 0.005, note, fontsize=7, va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.09 if spec["discard_below"] is not None else 0.06, 1, 0.97))
    save_figure(fig, path, dpi=110)
    return rows


CSV_COLUMNS = ("metric", "mean", "std", "min", "max", "seeds", "failed", "discarded",
               "epochs_ran")  # fmt: skip


def write_csv(path, rows):
    """The rows ``plot`` drew (``summarise``) as a CSV: the numbers of a figure."""
    rows = [{**r, "epochs_ran": _span(r["_epochs"]) if r["_epochs"] else ""} for r in rows]
    fields = [f for f in rows[0] if f not in CSV_COLUMNS and not f.startswith("_")]
    fields = [f for f in fields if not f.endswith("_values")]
    out = io.StringIO()
    writer = csv.DictWriter(out, [*fields, *CSV_COLUMNS], extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, out.getvalue())
