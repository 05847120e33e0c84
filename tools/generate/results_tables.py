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
  seeds and range), computed from each run's counts in ``chain.json``, and the majority class.

In README.md a table sits between ``<!-- table: STUDY -->`` and ``<!-- end table -->``;
``--write`` replaces what is between, ``--check`` says which tables differ. A study without
records gives no table (its markers are left as they are).
"""

import argparse
import pathlib
import re
import sys

from pvr_keras.files import read_json, read_plain

MARKER = re.compile(r"(<!-- table: (\w+) -->\n)(.*?)(<!-- end table -->)", re.S)


def _f(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows]) + "\n"


def _json(study, *names):
    """The JSON file ``study/names...``, read inside the results folder that holds the study:
    no link at the study, on the way or at the file, no FIFO or device (``files.read_plain``),
    whole JSON nested no deeper than a record (else one line naming the file)."""
    return read_json(study.joinpath(*names), inside=study.parent)


def _records(study, inside=None):
    """The whole records of a study's ``results.jsonl`` (the sweeps' own reader: a cut or
    repeated line is reported on standard error and left out), read inside ``inside``
    (default: the folder that holds the study; see ``_json``)."""
    from pvr_keras.sweeps.results import parse_lines

    path = study / "results.jsonl"
    try:
        data = read_plain(path, inside=study.parent if inside is None else inside)
    except FileNotFoundError:
        return []
    records, problems = parse_lines(data)
    for problem in problems:
        print(f"results_tables: {path}: {problem}", file=sys.stderr)
    return records


def _fit(record):
    from pvr_keras.analysis.dynamics import fit_epoch

    return fit_epoch(record.get("curve_train_eval_accuracy") or []) or "never"


def holdout(study):
    records = sorted(_records(study), key=lambda r: (r["window"], r.get("holdout_values") or [],
                                                     r["holdout"], r["seed"]))  # fmt: skip
    if not records:
        return None
    rows = []
    for r in records:
        values = r.get("holdout_values") or list(range(r["window"]))
        held = f"{r['holdout']} of ({', '.join(map(str, values))})" if r["holdout"] else "0"
        iid = r.get("iid_test_accuracy") if r["holdout"] else r["test_accuracy"]
        rows.append([r["window"], held, r["seed"], _f(r["train_accuracy"]),
                     _f(r["test_accuracy"]) if r["holdout"] else "-", _f(iid), _fit(r),
                     f"{r['wall_time_s'] / 60:.0f}"])  # fmt: skip
    header = ["window", "held out", "seed", "train", "held-out test", "IID test",
              "fit epoch", "min"]  # fmt: skip
    return _table(header, rows)


def thresholds(study):
    records = sorted(_records(study), key=lambda r: (r["model"], r["window"],
                                                     r["num_examples"], r["seed"]))  # fmt: skip
    if not records:
        return None
    rows = []
    for r in records:
        width = r.get("width")
        model = r["model"] + (f" (width x{width:g})" if width not in (None, 1, 1.0) else "")
        rows.append([model, r["window"], f"{r['num_examples']:,}", r["seed"], r["epochs_completed"],
                     _f(r["train_accuracy"]), _f(r["test_accuracy"]), _fit(r),
                     "yes" if r["failed"] else "", f"{r['wall_time_s'] / 60:.1f}"])  # fmt: skip
    header = ["model", "window", "examples", "seed", "epochs", "train", "test", "fit epoch",
              "failed", "min"]  # fmt: skip
    return _table(header, rows)


def figure7(study):
    rows = []
    for run in sorted(p for p in study.glob("*") if (p / "logits.json").is_file()):
        logits = _json(study, run.name, "logits.json")
        records = {}
        for sub in ("iid", "holdout"):
            path = run / sub / "record.json"
            records[sub] = _json(study, run.name, sub, "record.json") if path.is_file() else {}
        minutes = [records[s].get("wall_time_s") for s in ("iid", "holdout")]
        held = logits["models"]["holdout"]["subsets"]["pointer to top right"]
        iid = logits["models"]["IID"]["subsets"]["pointer to top right"]
        config = _json(study, run.name, "config.json")
        config = config.get("run", config)  # the run's identity (flat before the run config)
        rows.append([
            f"{config['model']}, width {config['width']}",
            f"{_f(records['iid'].get('final', {}).get('train_eval_accuracy'))} / "
            f"{_f(logits['iid_test_accuracy'])}",
            f"{_f(logits['holdout_train_accuracy'])} / {_f(logits['holdout_test_accuracy'])}",
            f"{_f(held['mean_logit_held_out'], 2)} / {_f(held['mean_logit_other'], 2)}",
            f"{_f(iid['mean_logit_held_out'], 2)} / {_f(iid['mean_logit_other'], 2)}",
            " + ".join("-" if m is None else f"{m / 60:.1f}" for m in minutes),
        ])  # fmt: skip
    if not rows:
        return None
    header = ["model", "IID train / test", "holdout train / held-out test",
              "holdout model: logit 1-3 / others", "IID model: logit 1-3 / others",
              "min (IID + holdout)"]  # fmt: skip
    return _table(header, rows)


def fast_slow(study):
    from pvr_keras.analysis import main_frequencies

    path = study / f"{study.name}.json"  # recipes/fast_slow.py --name = the study's folder
    if not path.is_file():
        return None
    summary = _json(study, path.name)
    cka = summary.get("cka") or {}
    freq = cka.get("label_frequencies") or {}
    rows = [[s["seed"], s["fit_epoch"] or "never", s["speed"], _f(s["final_train_accuracy"]),
             _f(s["final_test_accuracy"])] for s in summary["seeds"]]  # fmt: skip
    header = ["seed", "fit epoch", "speed", "train", "test"]
    if freq:  # the label circles of each seed's pre_logits (recipes/fast_slow.py)
        header.append("label frequencies k (share; >= 0.1)")
        for row in rows:  # a seed whose model was not there has none (CKA's seeds)
            seed = freq.get(str(row[0]))
            shares = main_frequencies(seed["frequency_share"]) if seed else []
            row.append(", ".join(f"{k} ({s:.2f})" for k, s in shares) or
                       ("none" if seed else "no model"))  # fmt: skip
    text = _table(header, rows)
    pairs = [["fast-fast", summary["fast1"], summary["fast2"], cka.get("fast1_fast2")],
             ["fast-slow", summary["fast1"], summary["slow"], cka.get("fast1_slow")]]  # fmt: skip
    rows = [[kind, f"{a} vs {b}", _f(v)] for kind, a, b, v in pairs if None not in (a, b, v)]
    means = cka.get("mean_by_kind") or {}
    rows += [[f"mean {k.replace('_', '-')}", "all pairs", _f(means[k])]
             for k in ("fast_fast", "fast_slow") if means.get(k) is not None]  # fmt: skip
    if rows:
        text += "\n" + _table([f"linear CKA ({cka.get('layer')}, {cka.get('on')})", "seeds",
                               "CKA"], rows)  # fmt: skip
    layers = cka.get("by_layer") or {}
    picked = [k for k in ("fast1_fast2", "fast1_slow") if any(k in v for v in layers.values())]
    if layers and picked:  # the picked pairs at every block (the paper names no layer)
        names = {"fast1_fast2": f"fast-fast ({summary['fast1']} vs {summary['fast2']})",
                 "fast1_slow": f"fast-slow ({summary['fast1']} vs {summary['slow']})"}  # fmt: skip
        rows = [[layer] + [_f(values[k]) if k in values else "-" for k in picked]
                for layer, values in layers.items()]  # fmt: skip
        text += "\n" + _table(["layer"] + [names[k] for k in picked], rows)
    matrix = cka.get("all_pairs") or {}
    if matrix:  # every pair, so that no pick decides the comparison
        pair = {tuple(sorted(map(int, k.split("-")))): v for k, v in matrix.items()}
        seeds = sorted({s for p in pair for s in p})
        speed = {s["seed"]: s["speed"] for s in summary["seeds"]}
        rows = [[f"{a} ({speed.get(a, '?')})"]
                + [_f(pair[tuple(sorted((a, b)))]) if a != b else "1" for b in seeds]
                for a in seeds]  # fmt: skip
        text += "\n" + _table(["CKA, every pair"] + [str(s) for s in seeds], rows)
    return text


def quick_sweep(study):
    """One row per run of a quick sweep (Figures 16 and 17): its task, size, epochs run,
    training and test accuracy, the failed-run rule."""

    def order(r):
        return r.get("aggregation"), not r["pointer"], r["window"], r["num_examples"], r["seed"]

    records = sorted(_records(study), key=order)
    if not records:
        return None
    rows = [[r["aggregation"], "yes" if r["pointer"] else "no", r["window"],
             f"{r['num_examples']:,}", r["seed"], r["epochs_completed"], _f(r["train_accuracy"]),
             _f(r["test_accuracy"]), "yes" if r["failed"] else "", f"{r['wall_time_s'] / 60:.1f}"]
            for r in records]  # fmt: skip
    header = ["aggregation", "pointer", "window", "examples", "seed", "epochs", "train", "test",
              "failed", "min"]  # fmt: skip
    return _table(header, rows)


def benchmark(study):
    """Per suite, the committed benchmark tables (``tools/benchmark.py``): one row per
    entry, one column per model."""
    text = ""
    for suite in sorted(p for p in study.glob("*") if p.is_dir()):
        tables = [_json(study, suite.name, p.name) for p in sorted(suite.glob("*.json"))]
        for kind in ("token", "image"):
            mine = [t for t in tables if t.get("kind") == kind]
            if not mine:
                continue
            entries = list(dict.fromkeys(e for t in mine for e in t["entries"]))
            rows = []
            for entry in entries:
                row = [entry]
                for t in mine:
                    found = t["entries"].get(entry)
                    cell = "-" if found is None else _f(found["test_accuracy"])
                    if found and found.get("iid_test_accuracy") is not None:
                        cell += f" (IID {_f(found['iid_test_accuracy'])})"
                    row.append(cell + (" failed" if found and found.get("failed") else ""))
                rows.append(row)
            minutes = ["minutes (all entries)"] + [
                f"{sum(e['minutes'] for e in t['entries'].values()):.1f}" for t in mine
            ]
            rows.append(minutes)
            text += (f"\n{suite.name} suite, {kind} models:\n\n" if text else
                     f"{suite.name} suite, {kind} models:\n\n")  # fmt: skip
            text += _table(["entry", *(t["label"] for t in mine)], rows)
    return text or None


def boolean(study):
    """Per boolean_holdout setting (``NAME.json``) and frozen bit: the bit's influence, half
    the MSE on the cube (mean and range over seeds), the in-distribution half MSE and the
    distance to f with the bit frozen; a line per setting with the correlation."""
    text = ""
    for path in sorted(study.glob("*.json")):
        if path.name.startswith("config_") or path.name == "sweep.json":
            continue
        found = _json(study, path.name)
        if "bits" not in found:
            continue
        run = found["config"]["run"]
        task = (
            f"{run.get('pointer_bits', 3)} pointer bits, window {run.get('window', 1)}, "
            f"{run.get('aggregation', 'parity')}, {run.get('window_mode', 'cyclic')}"
        )
        width = f" (width x{run['width']})" if run.get("width") else ""
        rows = [[r["bit"], _f(r["influence"], 4),
                 f"{_f(r['half_mse_mean'], 4)} ({_f(r['half_mse_min'], 4)}-"
                 f"{_f(r['half_mse_max'], 4)})",
                 _f(r["in_distribution_half_mse_mean"], 4),
                 _f(r["half_mse_to_frozen_target_mean"], 4), r["seeds"]]
                for r in found["bits"]]  # fmt: skip
        correlation = found["correlation"]
        text += (
            f"{'' if not text else chr(10)}{path.stem}: {run['model']}{width}, {task}; "
            f"correlation {_f(correlation)}, mean |½MSE - Inf| "
            f"{_f(found['mean_abs_difference'], 4)}\n\n"
        )
        text += _table(["bit", "Inf_i", "½MSE on the cube (range)", "in-distribution ½MSE",
                        "½MSE to f with x_i = +1", "seeds"], rows)  # fmt: skip
    return text or None


def gotu(study):
    """Per recipes/gotu.py task (``gotu/<task>/gotu.json``): one row per variant, the leak
    towards the min-degree interpolator (mean and range over seeds), the unseen MSE, the
    steps (the Degree-Curriculum's study) and the seeds."""
    text = ""
    for path in sorted(study.glob("*/gotu.json")):
        found = _json(study, path.parent.name, path.name)
        run = found["task"]  # the first variant's task (recipes/gotu.py)
        steps = any(v["steps_mean"] is not None for v in found["variants"])
        rows = []
        for v in found["variants"]:
            leak = ("-" if v["leak_mean"] is None else
                    f"{_f(v['leak_mean'])} ({_f(v['leak_min'])}-{_f(v['leak_max'])})")  # fmt: skip
            seen = [r["seen_mse"] for r in found["runs"] if r["variant"] == v["variant"]
                    and r["seen_mse"] is not None]  # fmt: skip
            row = [v["variant"], leak, "-" if v["unseen_mse_mean"] is None else
                   _f(v["unseen_mse_mean"], 3), _f(max(seen), 4) if seen else "-"]  # fmt: skip
            if steps:
                reached = [r["reached_eps"] for r in found["runs"] if r["variant"] == v["variant"]]
                row.append(f"{v['steps_mean']:.0f} ({sum(map(bool, reached))}/{len(reached)} "
                           f"reached)")  # fmt: skip
            rows.append([*row, v["seeds"]])
        text += (f"{'' if not text else chr(10)}{path.parent.name}: f = {run['target']} "
                 f"on {run['domain']}, d = {run['num_bits']}\n\n")  # fmt: skip
        header = ["variant", "leak alpha (range)", "unseen MSE", "seen MSE (worst seed)"]
        text += _table([*header, *(["steps to loss < eps"] if steps else []), "seeds"], rows)
    return text or None


def _hops(values):
    """``1-4`` for consecutive hop counts, else ``1, 3, 8``."""
    if len(values) > 1 and list(values) == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def chain(study):
    """recipes/chain.py (``chain.json``): per model, the test accuracy per hop count, the
    mean over seeds (and its range), computed from each run's counts by hop count; the
    majority class per hop count; the hop counts trained on marked *."""
    from pvr_keras.analysis import hops

    if not (study / "chain.json").is_file():
        return None
    found = _json(study, "chain.json")
    runs = found["runs"]
    if not runs:
        return None
    trained, test_hops = set(found["train_hops"]), found["test_hops"]
    task = found["task"]
    budget = sorted({(r["num_examples"], r["epochs"]) for r in runs})
    budget = "; ".join(f"{n:,} examples, {e} epochs" for n, e in budget)
    text = (f"L = {task['length']}, {task['form']}: trained on hops "
            f"{_hops(found['train_hops'])} (*), tested on {_hops(test_hops)}; "
            f"{budget}\n\n")  # fmt: skip

    def cell(model, k):
        if k not in model["hops"] or model["mean"][model["hops"].index(k)] is None:
            return "-"
        i = model["hops"].index(k)
        spread = f" ({_f(model['min'][i], 2)}-{_f(model['max'][i], 2)})"
        return _f(model["mean"][i]) + (spread if model["seeds"] > 1 else "")

    rows = []
    for model in hops.summarise(runs):
        mine = [r for r in runs if r["label"] == model["label"]]
        train = [r["train_accuracy"] for r in mine if r["train_accuracy"] is not None]
        failed = sum(bool(r["failed"]) for r in mine)
        minutes = [r["wall_time_s"] / 60 for r in mine if r["wall_time_s"] is not None]
        rows.append([model["label"], model["seeds"], *(cell(model, k) for k in test_hops),
                     _f(sum(train) / len(train)) if train else "-",
                     f"{failed} of {len(mine)}" if failed else "",
                     f"{sum(minutes) / len(minutes):.1f}" if minutes else "-"])  # fmt: skip
    majority = hops.majority(runs)
    majority = dict(zip(majority["hops"], majority["values"], strict=True))
    rows.append(["majority class", "", *(_f(majority.get(k)) for k in test_hops), "", "", ""])
    header = ["model", "seeds", *(f"hop {k}{'*' if k in trained else ''}" for k in test_hops),
              "train", "failed", "min"]  # fmt: skip
    return text + _table(header, rows)


STUDIES = {"holdout": holdout, "thresholds": thresholds, "figure7": figure7,
           "fast_slow": fast_slow, "fast_slow_main": fast_slow, "holdout_paper": holdout,
           "figure11": thresholds,
           "fast_slow_paper": fast_slow, "aggregations_quick": quick_sweep,
           "pointer_quick": quick_sweep, "benchmark": benchmark,
           "boolean": boolean, "gotu": gotu, "chain_quick": chain,
           "chain_medium": chain}  # fmt: skip


def tables(results):
    """``{study: markdown table}`` for every study of ``results`` that has records."""
    results = pathlib.Path(results)
    out = {}
    for name, make in STUDIES.items():
        if (results / name).is_dir():
            table = make(results / name)
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
