"""Where the token models resolve the pointer (recipes/interventions.py, Geiger et al. 2022):
interchange intervention accuracy per layer and position (the ``interventions`` study)."""

import statistics

from .records import as_cell, markdown_table, study_json

SETTINGS = ("interventions.json", "interventions_w3.json", "interventions_mlp.json")


def settings(study):
    """``{file: summary}`` of the settings run in the study folder, in ``SETTINGS`` order."""
    return {name: study_json(study, name) for name in SETTINGS if (study / name).is_file()}


def _groups(summary):
    """The runs of one setting by (model, window), seeds in order."""
    groups = {}
    for run in summary["runs"]:
        groups.setdefault((run["model"], run["window"]), []).append(run)
    return {key: sorted(runs, key=lambda r: r["seed"]) for key, runs in groups.items()}


def mean_iia(summary, model, window, variable, layer, position):
    """The mean over seeds of one cell of the grids (``position`` "own": V_i at its own
    position; DAS grids have one column, position 0)."""
    values = []
    for run in _groups(summary)[(model, window)]:
        grid = run["grid"]
        row = grid["layers"].index(layer)
        if position == "own":
            values.append(grid["own_position"][variable][row])
        else:
            values.append(grid["iia"][variable][row][grid["positions"].index(position)])
    return statistics.mean(values)


def places(summary, model, window, variable, threshold):
    """The (layer, position, mean IIA) cells where the seeds' mean IIA >= threshold, in layer
    order; positions named as the token models' (cls, P, V_i)."""
    runs = _groups(summary)[(model, window)]
    grid = runs[0]["grid"]
    found = []
    for layer in grid["layers"]:
        for position in grid["positions"]:
            value = mean_iia(summary, model, window, variable, layer, position)
            if value >= threshold:
                found.append((layer, position, value))
    return found


def position_name(position):
    if isinstance(position, str):
        return position
    return {0: "cls", 1: "P"}.get(position, f"V{position - 2}")


def _where(cells, limit=4):
    if not cells:
        return "none"
    shown = ", ".join(f"{layer} {position_name(p)} {as_cell(v, 2)}" for layer, p, v in
                      cells[:limit])  # fmt: skip
    return shown + (f" (+{len(cells) - limit})" if len(cells) > limit else "")


def table(study):
    """Per setting, model and window: seeds, test accuracy, and per variable the cells (layer,
    position) where the mean IIA over seeds on changing pairs is >= the setting's threshold,
    with the best cell; the MLP's rows are DAS per hidden layer."""
    found = settings(study)
    if not found:
        return None
    rows = []
    for name, summary in found.items():
        threshold = summary["aligned"]
        for (model, window), runs in _groups(summary).items():
            accuracy = statistics.mean(r["test_accuracy"] for r in runs)
            grid = runs[0]["grid"]
            for variable in grid["iia"]:
                cells = places(summary, model, window, variable, threshold)
                best = max(
                    ((layer, p, mean_iia(summary, model, window, variable, layer, p))
                     for layer in grid["layers"] for p in grid["positions"]),
                    key=lambda cell: cell[2],
                )  # fmt: skip
                method = "DAS" if grid["method"] == "das" else "position"
                rows.append([name[: -len(".json")], model, window, len(runs), as_cell(accuracy),
                             method, variable, _where(cells), _where([best], 1)])  # fmt: skip
            if "own_position" in grid:
                counts = []
                for layer in grid["layers"]:
                    aligned = sum(
                        mean_iia(summary, model, window, v, layer, "own") >= threshold
                        for v in grid["own_position"]
                    )
                    counts.append(f"{layer} {aligned}/{len(grid['own_position'])}")
                rows.append([name[: -len(".json")], model, window, len(runs),
                             as_cell(accuracy), "position", "V_i at its own position",
                             ", ".join(counts), ""])  # fmt: skip
    header = ["setting", "model", "window", "seeds", "test acc.", "method", "variable",
              "mean IIA >= threshold at", "best"]  # fmt: skip
    text = ("IIA on changing test pairs (the counterfactual label differs from the base's), "
            "mean over seeds; positions: cls (the class token), P (the pointer), V_i (value "
            "i).\n\n")  # fmt: skip
    return text + markdown_table(header, rows)


def interventions(studies):
    """The README row: where the Transformer and the Mixer hold P and S0 at window 1 (and
    window 3 where recorded), and the MLP's DAS."""
    try:
        study = studies["interventions"]
    except FileNotFoundError:
        return ("not run yet", "`bash tools/studies/interventions_study.sh`", "not run")
    found = {name: study.json(name) for name in SETTINGS if (study.path / name).is_file()}
    parts = []
    for summary in found.values():
        threshold = summary["aligned"]
        for (model, window), runs in _groups(summary).items():
            grid = runs[0]["grid"]
            said = []
            if grid["method"] == "das":
                for variable in grid["iia"]:
                    best = max(((layer, mean_iia(summary, model, window, variable, layer,
                                                 grid["positions"][0]))
                                for layer in grid["layers"]), key=lambda c: c[1])  # fmt: skip
                    said.append(f"DAS {variable} {as_cell(best[1], 2)} at {best[0]}")
            else:
                # the pointed values first (where the lookup ends), then the pointer
                for variable in sorted(grid["iia"], key=lambda v: (v == "P", v)):
                    cells = places(summary, model, window, variable, threshold)
                    if not cells:
                        said.append(f"{variable} at no single place")
                        continue
                    first = cells[0]
                    text = (f"{variable} at {first[0]} {position_name(first[1])} "
                            f"({as_cell(first[2], 2)})")  # fmt: skip
                    cls = [c for c in cells if c[1] == 0]
                    if cls and cls[0] is not first:
                        text += f", at cls from {cls[0][0]} ({as_cell(cls[0][2], 2)})"
                    said.append(text)
            parts.append(f"{model} window {window} ({len(runs)} seeds, test "
                         f"{as_cell(statistics.mean(r['test_accuracy'] for r in runs))}): "
                         + ", ".join(said))  # fmt: skip
    ours = f"first cell with mean IIA >= {threshold} on changing pairs: " + "; ".join(parts)
    time = ("[`interventions`](interventions.md) study; `bash tools/studies/"
            "interventions_study.sh` (resumable)")  # fmt: skip
    return ours, time
