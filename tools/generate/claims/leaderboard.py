"""The benchmark page's leaderboard: every committed model on the quick suite."""

from .formats import dec
from .records import as_cell, markdown_table, study_json


def leaderboard(r):
    """docs/benchmarks/README.md's leaderboard: one row per model table of
    ``benchmark/quick/*.json`` (``tools/benchmark.py``, ``tools/studies/leaderboard.sh``, or
    predictions scored from outside Keras), one column per benchmark config of the quick suite
    (its small splits); held-out accuracy for the holdout configs."""
    from pvr_keras.sweeps.suites import CONFIGS

    folder = r.results / "benchmark" / "quick"
    tables = [r.json(f"benchmark/quick/{p.name}") for p in sorted(folder.glob("*.json"))]
    if not tables:
        raise FileNotFoundError(f"{folder}: no benchmark tables")
    header = ["model", *(f"`{c}`" for c in CONFIGS.values()), "minutes"]
    rows = []
    for table in sorted(tables, key=lambda t: (t["kind"], t["label"])):
        cells = [table["label"]]
        for entry in CONFIGS:
            found = table["entries"].get(entry)
            if found is None:
                cells.append("-")
                continue
            cell = dec(found["test_accuracy"], 3)
            cells.append(cell + (" (not fit)" if found.get("failed") else ""))
        minutes = sum(e["minutes"] for e in table["entries"].values())
        cells.append(f"{minutes:.0f}" if minutes >= 10 else f"{minutes:.1f}")
        rows.append(cells)
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def table(study):
    """Per suite, the committed benchmark tables (``tools/benchmark.py``): one row per
    entry, one column per model."""
    text = ""
    for suite in sorted(p for p in study.glob("*") if p.is_dir()):
        tables = [study_json(study, suite.name, p.name) for p in sorted(suite.glob("*.json"))]
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
                    cell = "-" if found is None else as_cell(found["test_accuracy"])
                    if found and found.get("iid_test_accuracy") is not None:
                        cell += f" (IID {as_cell(found['iid_test_accuracy'])})"
                    row.append(cell + (" failed" if found and found.get("failed") else ""))
                rows.append(row)
            minutes = ["minutes (all entries)"] + [
                f"{sum(e['minutes'] for e in t['entries'].values()):.1f}" for t in mine
            ]
            rows.append(minutes)
            text += (f"\n{suite.name} suite, {kind} models:\n\n" if text else
                     f"{suite.name} suite, {kind} models:\n\n")  # fmt: skip
            text += markdown_table(["entry", *(t["label"] for t in mine)], rows)
    return text or None
