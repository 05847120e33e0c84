"""Multi-hop PVR (pointer chasing, Abnar et al. 2023): accuracy per hop count (the
``chain_quick`` and ``chain_medium`` studies)."""

from .records import as_cell, markdown_table, study_json


def table(study):
    """recipes/chain.py (``chain.json``): per model, the test accuracy per hop count, the
    mean over seeds (and its range), computed from each run's counts by hop count; the
    majority class per hop count; the hop counts trained on marked *."""
    from pvr_keras.analysis import hops

    if not (study / "chain.json").is_file():
        return None
    found = study_json(study, "chain.json")
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
        spread = f" ({as_cell(model['min'][i], 2)}-{as_cell(model['max'][i], 2)})"
        return as_cell(model["mean"][i]) + (spread if model["seeds"] > 1 else "")

    rows = []
    for model in hops.summarise(runs):
        mine = [r for r in runs if r["label"] == model["label"]]
        train = [r["train_accuracy"] for r in mine if r["train_accuracy"] is not None]
        failed = sum(bool(r["failed"]) for r in mine)
        minutes = [r["wall_time_s"] / 60 for r in mine if r["wall_time_s"] is not None]
        rows.append([model["label"], model["seeds"], *(cell(model, k) for k in test_hops),
                     as_cell(sum(train) / len(train)) if train else "-",
                     f"{failed} of {len(mine)}" if failed else "",
                     f"{sum(minutes) / len(minutes):.1f}" if minutes else "-"])  # fmt: skip
    majority = hops.majority(runs)
    majority = dict(zip(majority["hops"], majority["values"], strict=True))
    rows.append(["majority class", "", *(as_cell(majority.get(k)) for k in test_hops), "", "", ""])
    header = ["model", "seeds", *(f"hop {k}{'*' if k in trained else ''}" for k in test_hops),
              "train", "failed", "min"]  # fmt: skip
    return text + markdown_table(header, rows)


def _hops(values):
    """``1-4`` for consecutive hop counts, else ``1, 3, 8``."""
    if len(values) > 1 and list(values) == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))
