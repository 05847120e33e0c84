"""The tables and numbers of the docs, recomputed from the committed records.

    python tools/generate/results_tables.py docs/results           # print every study's table
    python tools/generate/results_tables.py docs/results --write   # fill them into the docs
    python tools/generate/results_tables.py docs/results --check   # exit 1 if a doc is stale

``--write`` and ``--check`` cover every document: the repository README (``--readme``,
default: the README.md two folders above RESULTS) and every Markdown page of the docs folder
that holds RESULTS (``docs/**/*.md``; the study folders' own files are records, left alone).
A page's ``<!-- table: NAME -->`` block is filled with the table NAME: a study's table (below),
or one of ``tools/generate/results_claims.py``'s: ``claims`` (every claim of the paper, on
docs/results/README.md), ``summary`` (one line per claim, on the README), ``gallery`` (what
the quick presets show) and ``leaderboard`` (the benchmark's). Numbers inline in the prose
are value markers, ``<!-- = EXPR -->TEXT<!-- /= -->`` (``claims.values.VALUE``: TEXT is what
EXPR, a call of the record readers and formats, gives; ``--write`` fills it in). In the README
and the pages of RESULTS, a number that reads like a result (a decimal, a percentage, a time)
outside a value marker must be marked as quoted from the paper or as a setting, else both
``--check`` and ``--write`` name it and exit 1 (``claims.values.unmarked``).
A marker reads only inside RESULTS (a study or file named with ``..`` or reached through a
link is refused), and a marker that is not such an expression (cut short, nested too deeply,
too long) is one line naming it, exit status 2; so is a study file that is a link, a FIFO or
a device, or JSON nested deeper than any record.

Each study folder written by ``tools/export_results.py`` gives one Markdown table:

- ``holdout``: one row per run of ``results.jsonl``: final training accuracy, accuracy on the
  held-out windows, IID test accuracy, fit epoch (``pvr_keras.analysis.fit_epoch``);
- ``thresholds``: one row per run: training and test accuracy, fit epoch, the paper's
  failed-run rule;
- ``figure7``: per CNN, from ``logits.json`` and the run records: IID and holdout accuracies,
  the holdout model's mean logits for the held-out classes against the others;
- ``fast_slow`` and ``fast_slow_main``: per seed, from ``<study>.json``: fit epoch, speed,
  final accuracies and the label frequencies its features use; then the CKA pairs, the same
  pairs at every block, and CKA between every two seeds;
- ``chain_quick``, ``chain_medium``: per model, the test accuracy per hop count (mean over
  seeds and range), computed from each run's counts in ``chain.json``, and the majority class;
- ``interventions``: per setting, model and window, where each variable's mean IIA over seeds
  on changing pairs reaches the threshold (``interventions*.json``).

In a page a table sits between ``<!-- table: STUDY -->`` and ``<!-- end table -->``;
``--write`` replaces what is between, ``--check`` says which tables differ. A study without
records gives no table (its markers are left as they are).
"""

import argparse
import importlib
import pathlib
import re
import sys

from pvr_keras.files import read_plain

MARKER = re.compile(r"(<!-- table: (\w+) -->\n)(.*?)(<!-- end table -->)", re.S)


# Each study folder's table, made by the claims module of its study (tools/generate/claims/).
STUDIES = {"holdout": "holdout", "thresholds": "thresholds", "figure7": "figure7",
           "fast_slow": "fast_slow", "fast_slow_main": "fast_slow", "holdout_paper": "holdout",
           "figure11": "thresholds",
           "fast_slow_paper": "fast_slow", "aggregations_quick": "quick_sweeps",
           "pointer_quick": "quick_sweeps", "benchmark": "leaderboard",
           "boolean": "boolean", "gotu": "gotu", "chain_quick": "chain",
           "chain_medium": "chain", "interventions": "interventions"}  # fmt: skip


def tables(results):
    """``{study: markdown table}`` for every study of ``results`` that has records."""
    results = pathlib.Path(results)
    out = {}
    for name, module in STUDIES.items():
        if (results / name).is_dir():
            table = importlib.import_module(f"claims.{module}").table(results / name)
            if table is not None:
                out[name] = table
    return out


def _claims_module():
    import results_claims  # beside this file (a script's folder is on its import path)

    return results_claims


def _claims(results, text):
    """results_claims.py's blocks of the repository README whose markers ``text`` has:
    ``claims`` (the results table) and ``gallery`` (what the quick presets show)."""

    wanted = [name for name in ("claims", "summary", "gallery", "leaderboard")
              if f"<!-- table: {name} -->" in text]  # fmt: skip
    if not wanted:
        return {}
    from claims import gallery, leaderboard, records

    module = _claims_module()
    found = records.studies(results)
    makers = {"claims": module.table, "summary": module.summary, "gallery": gallery.gallery,
              "leaderboard": leaderboard.leaderboard}  # fmt: skip
    return {name: makers[name](found) for name in wanted}


def documents(results, top):
    """The Markdown documents the tables and numbers go into: ``top`` (the repository README)
    if it exists, then every ``*.md`` of the docs folder beside it (``docs/``, when RESULTS
    lies inside it; else of RESULTS alone), sorted, except what lies inside a study folder
    (records) and links (never followed)."""
    results = pathlib.Path(results).resolve()
    docs = top.resolve().parent / "docs"
    root = docs if results.is_relative_to(docs) else results
    found = [top] if top.is_file() else []
    seen = {p.resolve() for p in found}
    for path in sorted(root.rglob("*.md")):
        inside = (
            path.resolve().relative_to(results).parts
            if path.resolve().is_relative_to(results)
            else ()
        )
        if len(inside) > 1 or path.is_symlink() or path.resolve() in seen:
            continue  # inside a study folder of RESULTS: a record
        seen.add(path.resolve())
        found.append(path)
    return found


def update(readme_text, made):
    """``readme_text`` with each marked table replaced by ``made``'s; returns (text, stale)."""
    stale = []

    def replace(match):
        name = match.group(2)
        if name not in made:
            return match.group(0)
        if match.group(3) != made[name]:
            stale.append(name)
        return match.group(1) + made[name] + match.group(4)

    return MARKER.sub(replace, readme_text), stale


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="docs/results (the folder export_results.py wrote)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="fill the tables into the docs")
    action.add_argument("--check", action="store_true", help="exit 1 if a doc is stale")
    parser.add_argument("--readme", help="the README with the claims table (default: the "
                        "README.md two folders above RESULTS)")  # fmt: skip
    args = parser.parse_args(argv)
    results = pathlib.Path(args.results)
    if not results.is_dir():
        raise FileNotFoundError(f"{results} does not exist")
    made = tables(results)
    if not (args.write or args.check):
        for name, table in made.items():
            print(f"## {name}\n\n{table}")
        return 0
    top = pathlib.Path(args.readme) if args.readme else results.resolve().parents[1] / "README.md"
    if args.readme and not top.is_file():
        raise FileNotFoundError(f"--readme {top} does not exist")
    targets = []
    for document in documents(results, top):
        text = read_plain(document).decode()
        targets.append((document, {**made, **_claims(results, text)}))
    status = 0
    for readme, tables_of in targets:
        before = read_plain(readme).decode()
        text, stale = update(before, tables_of)
        if readme == top or readme.resolve().parent == results.resolve():
            from claims import values as markers

            for line, number in markers.unmarked(text):  # the README and docs/results' pages
                print(f"{readme}:{line}: {number} is in no value, paper or setting marker",
                      file=sys.stderr)  # fmt: skip
                status = 1
        if "<!-- = " in text:  # numbers inline in the prose (claims.values.VALUE)
            from claims import records
            from claims import values as markers

            text, values = markers.fill_values(text, records.studies(results))
            for value in values:
                print(f"{readme}: stale value {value}", file=sys.stderr)
            stale += ["values"] if values else []
        if args.write:
            from pvr_keras import files

            if text != before:
                files.write_text(readme, text)
            print(f"{readme}: {len(stale)} tables replaced ({', '.join(stale) or 'none stale'})")
        elif stale:
            print(f"{readme}: stale tables: {', '.join(stale)}; run with --write",
                  file=sys.stderr)  # fmt: skip
            status = 1
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError, LookupError) as error:  # OSError: a link refused, a missing file
        print(f"results_tables: error: {error!r}", file=sys.stderr)
        sys.exit(2)
