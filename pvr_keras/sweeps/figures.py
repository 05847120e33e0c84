"""Figures of a sweep results directory: every sweep drawn as the paper does.

    python tools/make_figures.py RESULTS          # or sweeps.make_figures(RESULTS)

The drawing itself (``plot``, ``summarise``, the figure specs ``FIGURES``) is
``pvr_keras.figures.accuracy``; this module finds the sweeps of a results directory and their
records, and draws each with it.
"""

import pathlib

from pvr_keras.figures.accuracy import FIGURES, check_spec, plot, summarise, write_csv
from pvr_keras.sweeps.results import ResultsDir

__all__ = ["FIGURES", "make_figures", "plot", "summarise"]


def _sweeps(results, records):
    """``{name: (spec, records)}``: stored sweep definitions, else the records' sweep names."""
    by_id = {r["id"]: r for r in records}
    found, listed = {}, set()
    for name, definition in results.read_sweeps().items():
        spec = definition.get("figure") or FIGURES.get(name) or FIGURES["size_window"]
        mine = [by_id[i] for i in definition.get("run_ids", []) if i in by_id]
        found[name] = (spec, mine, len(definition.get("run_ids", [])))
        listed.update(definition.get("run_ids", []))
    # Records no stored definition lists, by the sweep that first ran them. A run a stored
    # sweep lists belongs to that sweep, whichever sweep trained it (runs are shared).
    unlisted = [r for r in records if r["id"] not in listed]
    for record in unlisted:
        name = record.get("sweep") or "sweep"
        if name not in found:
            mine = [r for r in unlisted if (r.get("sweep") or "sweep") == name]
            found[name] = (FIGURES.get(name, FIGURES["size_window"]), mine, len(mine))
    return found


def make_figures(results_dir, out=None, only=None, log=print):
    """Draws every sweep of a results directory: a PNG per metric and a CSV of the numbers.

    Args:
        results_dir: a sweep results directory.
        out: output folder (default ``results_dir/figures``).
        only: names of the sweeps to draw (default all).
        log: where notes and warnings (bad lines of ``results.jsonl``) go.

    Returns:
        The paths written: ``<sweep>_<metric>.png`` and ``<sweep>.csv`` per sweep.

    Raises:
        FileNotFoundError: not a results directory.
        IncompatibleResultsError: written by another format version.
        ValueError: no readable record, or ``only`` names sweeps that are not there.
    """
    results = ResultsDir(results_dir)
    records, problems = results.read()
    for problem in problems:
        log(f"warning: {results.results}: {problem}")
    if not records:
        what = f"{len(problems)} unreadable lines" if problems else "no lines"
        raise ValueError(
            f"{results.results} holds no readable run record ({what}); nothing to plot"
        )
    sweeps = _sweeps(results, records)
    if only:
        missing = sorted(set(only) - set(sweeps))
        if missing:
            raise ValueError(
                f"sweeps to draw must be among those in {results.path} "
                f"({', '.join(sorted(sweeps))}); received {', '.join(missing)}"
            )
        sweeps = {name: sweeps[name] for name in only}
    out = pathlib.Path(out) if out else results.path / "figures"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (spec, mine, expected) in sweeps.items():
        if not mine:
            log(f"{name}: no finished run yet, nothing drawn")
            continue
        spec = check_spec(spec, mine)
        rows, paths = [], []
        for metric in spec["metrics"]:
            paths.append(out / f"{name}_{metric}.png")
            rows += plot(mine, spec, paths[-1], metric=metric)
        paths.append(out / f"{name}.csv")
        write_csv(paths[-1], rows)
        written += paths
        log(f"{name}: {len(mine)}/{expected} runs drawn -> {', '.join(str(p) for p in paths)}")
    return written
