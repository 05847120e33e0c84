"""Values inline in prose.

A number in a docs/results finding is written as ``<!-- = EXPR -->TEXT<!-- /= -->``: TEXT is
what EXPR gives from the committed records (``--write`` puts it there, ``--check`` fails when
it differs). EXPR is a small language, not Python: calls of the functions below, string,
number and list constants, keyword arguments, and ``[key]`` on a result. Nothing else is
evaluated, so a document can name records but never run code, and it reads only inside
docs/results (``Study``). A marker that fails, whatever the reason, is one ValueError
naming it.

Every other number of the prose that reads like a result (a decimal, a percentage, a time:
``MEASURED``) must say where it comes from, or ``unmarked`` reports it and ``--check`` fails:
a value marker (a record), ``<!-- paper -->TEXT<!-- /paper -->`` (quoted from the paper) or
``<!-- setting -->TEXT<!-- /setting -->`` (a setting of the runs, or a rule of ours, fixed
before any result). Tables between ``<!-- table: ... -->`` markers are generated, code (fenced,
indented or inline) and link targets are not prose. Integers are not checked: they name
figures, windows, seeds and sizes far more often than they report a result."""

import ast
import math
import re
import statistics

from .figure11 import steps
from .formats import (
    dec,
    decs,
    field,
    fit,
    hours,
    minutes,
    pct,
    pcts,
    run_minutes,
    span,
    spearman,
    spearman_p,
    total,
)
from .gotu import mdi_replaces
from .interventions import mean_iia

VALUE = re.compile(r"(<!-- = (.+?) -->)(.*?)(<!-- /= -->)", re.S)
# A number that reads like a result: a percentage, a decimal (a ratio "2.7x" too) or a time.
# A range (94.2-99.9%, 16-85 min) is one number.
_N = r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?"
MEASURED = re.compile(
    rf"(?<![\w.^/-])({_N}\s?(?:min|h|s|ms|hours|minutes|seconds)\b|{_N}%"
    rf"|\d+\.\d+(?:-\d+(?:\.\d+)?)?x?(?![\w.]))"
)
# What is not prose, or says where its numbers come from: blanked (newlines kept) before
# MEASURED looks, in this order.
NOT_PROSE = (
    re.compile(r"<!-- table: \w+ -->.*?<!-- end table -->", re.S),
    VALUE,
    re.compile(r"<!-- paper -->.*?<!-- /paper -->", re.S),
    re.compile(r"<!-- setting -->.*?<!-- /setting -->", re.S),
    re.compile(r"```.*?```", re.S),
    re.compile(r"^(?:    |\t).*$", re.M),  # an indented code block's line
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\]\([^)]*\)"),  # a link's target
    re.compile(r"<!--.*?-->", re.S),
)


MAX_EXPRESSION = 1000  # characters of one marker's expression (the longest committed: ~200)


def _value_functions(r):
    def run(study, **where):
        return r[study].one(**where)

    def runs(study, **where):
        return r[study].runs(**where)

    def summary(study, name):
        return r[study].json(name)

    def analysis(study, **where):
        """The row of ``holdout_analysis.json`` (tools/holdout_analysis.py) of one run."""
        run_id = r[study].one(**where)["id"]
        rows = [a for a in r[study].json("holdout_analysis.json") if a["id"] == run_id]
        if len(rows) != 1:
            raise LookupError(f"{study}: no holdout analysis of {run_id}")
        return rows[0]

    def pairs_with(pairs, seed):
        """The values of ``{"a-b": CKA}`` whose pair holds ``seed``."""
        return [v for k, v in pairs.items() if str(seed) in k.split("-")]

    def pairs_without(pairs, seed):
        return [v for k, v in pairs.items() if str(seed) not in k.split("-")]

    def own(study, other):
        """The records of ``study`` that ``other`` does not hold (runs trained for it)."""
        theirs = {x["id"] for x in r[other].lines}
        return [x for x in r[study].lines if x["id"] not in theirs]

    def pick(items, **where):
        """The one item of a list of records (a summary's ``runs``) whose fields equal
        ``where``."""
        found = [x for x in items if all(x.get(k) == v for k, v in where.items())]
        if len(found) != 1:
            raise LookupError(f"{len(found)} items with {where}, expected 1")
        return found[0]

    def where(items, **fields):
        """The items of a list of records whose fields equal ``fields`` (at least one)."""
        found = [x for x in items if all(x.get(k) == v for k, v in fields.items())]
        if not found:
            raise LookupError(f"no item with {fields}")
        return found

    def backends(records):
        """Which backend trained each seed's runs, as the records say: ``seed 1: tensorflow;
        seeds 2-3: jax`` (a seed of mixed backends counts them: ``2 jax, 7 tensorflow``)."""
        by_seed = {}
        for x in records:
            by_seed.setdefault(x["seed"], []).append(x["backend"])
        said = {}
        for seed, found in sorted(by_seed.items()):
            kinds = sorted(set(found))
            mixed = ", ".join(f"{found.count(k)} {k}" for k in kinds)
            said.setdefault(kinds[0] if len(kinds) == 1 else mixed, []).append(seed)
        parts = []
        for text, seeds in said.items():
            contiguous = seeds == list(range(seeds[0], seeds[-1] + 1))
            listed = span(seeds, str) if contiguous else ", ".join(map(str, seeds))
            name = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {listed}"
            parts.append(f"{name}: {text}")
        return "; ".join(parts)

    def share(counts, i):
        """counts[i] as a share of all the counts."""
        return counts[i] / sum(counts)

    return {"run": run, "runs": runs, "summary": summary, "pick": pick, "where": where,
            "backends": backends,
            "at": lambda lists, i: [x[i] for x in lists], "analysis": analysis,
            "share": share,
            "least": min, "most": max, "joined": lambda *lists: [x for xs in lists for x in xs],
            "ball": _ball,
            "values": lambda d: list(d.values()), "pairs_with": pairs_with,
            "excluding": lambda records, key, value: [x for x in records if x[key] != value],
            "points": lambda a, b: f"{100 * (a - b):.1f}",
            "mean": statistics.mean, "part": lambda items, start, stop=None: items[start:stop],
            "fits": lambda records: [fit(x) for x in records], "spearman": spearman,
            "spearman_p": spearman_p, "own": own, "configs": _config_names,
            "sum_hours": lambda records: hours(sum(x["wall_time_s"] for x in records)),
            "pairs_without": pairs_without,
            "field": field, "fit": fit,
            "pct": pct, "pcts": pcts, "dec": dec, "decs": decs, "span": lambda v: span(v, str),
            "minutes": minutes, "run_minutes": run_minutes, "hours": hours, "steps": steps,
            "total": total, "curve": curve, "len": len, "num": _num,
            "nums": lambda v: span(v, _num),
            "mdi_replaces": mdi_replaces, "add": lambda *numbers: sum(numbers),
            "iia": lambda study, name, *cell: mean_iia(r[study].json(name), *cell)}  # fmt: skip


def _num(x):
    """An integer with thousands separators: 16,455."""
    return f"{x:,}"


def _ball(d, k):
    """The share of the d-cube within Hamming distance k of a point; d at most 64 (a marker
    reads untrusted text: no unbounded sum)."""
    if not (isinstance(d, int) and isinstance(k, int) and 0 <= k <= d <= 64):
        raise ValueError(f"ball(d, k) needs integers 0 <= k <= d <= 64; received {d!r}, {k!r}")
    return sum(math.comb(d, j) for j in range(k + 1)) / 2**d


def _config_names(family=None):
    """The benchmark configs' names (``pvr_keras.benchmarks.names``)."""
    from pvr_keras import benchmarks

    return benchmarks.names(family)


def curve(record, name, epoch):
    """A run's learning-curve value after ``epoch`` (1-based): ``curve_<name>`` of its record
    (``test_accuracy``, ``train_eval_accuracy``, ...)."""
    return record[f"curve_{name}"][epoch - 1]


def evaluate(expression, r):
    """The value of one marker's expression (see VALUE), as text.

    Raises:
        ValueError: the expression is too long, not an expression (a ``SyntaxError``: cut
            short, nested too deeply, a number of too many digits), or uses what is not
            allowed.
    """
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"longer than {MAX_EXPRESSION} characters ({len(expression)})")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as error:
        reason = getattr(error, "msg", None) or type(error).__name__
        raise ValueError(f"not an expression ({reason[:120]})") from None
    functions = _value_functions(r)

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | None):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.List | ast.Tuple):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Subscript):
            return value(node.value)[value(node.slice)]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in functions):  # fmt: skip
            args = [value(a) for a in node.args]
            kwargs = {k.arg: value(k.value) for k in node.keywords if k.arg is not None}
            return functions[node.func.id](*args, **kwargs)
        raise ValueError(f"not allowed in a value marker: {ast.unparse(node)!r} (calls of "
                         f"{', '.join(sorted(functions))}, constants and [key])")  # fmt: skip

    return str(value(tree.body))


def fill_values(text, r):
    """``text`` with every value marker's TEXT computed again; returns (text, stale), stale
    the markers whose TEXT changed (expression and old -> new)."""
    stale = []

    def replace(match):
        expression = match.group(2)
        try:
            new = evaluate(expression, r)
        except Exception as error:  # noqa: BLE001 - whatever a marker does wrong: one line
            shown = expression if len(expression) <= 80 else expression[:77] + "..."
            what = str(error).splitlines()[0][:300] if str(error) else ""
            if not isinstance(error, LookupError | ValueError | TypeError | OSError) or not what:
                what = f"{type(error).__name__}{': ' * bool(what)}{what}"  # ZeroDivisionError...
            raise ValueError(f"value marker {shown!r}: {what}") from None
        if new != match.group(3):
            stale.append(f"{expression}: {match.group(3)!r} -> {new!r}")
        return match.group(1) + new + match.group(4)

    return VALUE.sub(replace, text), stale


def unmarked(text):
    """``[(line, number)]``: the numbers of ``text``'s prose that read like a result
    (``MEASURED``) but are in no value, paper or setting marker, by line (1-based)."""
    for pattern in NOT_PROSE:
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return [(i, m.group(0)) for i, line in enumerate(text.split("\n"), 1)
            for m in MEASURED.finditer(line)]  # fmt: skip
