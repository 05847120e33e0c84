"""The benchmark page's leaderboard: every committed model on the quick suite."""

from .formats import dec


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
