"""Where a network resolves the pointer: interchange interventions on token PVR.

    python recipes/interventions.py                        # quick, on a CPU (minutes)
    python recipes/interventions.py --preset medium        # 1/8 Transformer and Mixer, window 1
    python recipes/interventions.py --preset medium_w3     # the same at window 3 (hours)
    python recipes/interventions.py --preset medium_mlp    # the paper's MLP, with DAS

Trains a grid of token runs (``--model``, ``--window``, ``--seed``: any of them several
values; each run's model saved, resumable) and asks of each trained model where the high-level
variables of PVR live (``pvr_keras.counterfactuals``; Geiger et al. 2022): the pointer ``P``,
each window value ``S_j = V_((P + j) mod 10)`` and each value ``V_i`` at its own position.

- Models with a token axis (Transformer, Mixer): interchange intervention accuracy (IIA) of
  each variable at every block's output (and the embedded input before the first block) and
  every single position (0 the class token, 1 the pointer, 2 + i the value V_i), on
  ``--pairs`` changing pairs (the counterfactual label differs from the base's; on random
  pairs an interchange that does nothing scores the share of unchanged labels). ``V_i`` is
  tried at its own position only (one row of the grid).
- Models without one (the MLP): distributed alignment search (``counterfactuals.das``) at each
  hidden layer, for ``P`` and each ``S_j``: a learned rotation whose first ``--das-dims``
  coordinates are interchanged; its IIA on test pairs it never saw.

Writes into ``--out``, named by ``--name`` (default ``interventions``): NAME.json (every run's
grid, its test accuracy, and per variable the places with IIA >= ``--aligned``), NAME.csv (one
row per run, variable, layer and position), one heatmap per run ``NAME_<run id>.png``, and the
sweep's records (results.jsonl, runs/<id>/ with model.keras).

Presets. ``quick``: the 1/8 Transformer, window 1, 10,000 examples, 4 epochs at batch 256,
one seed, 256 pairs: minutes on a 2-core CPU (the 1/8 Mixer needs more: ``medium``).
``medium``: the 1/8 Transformer and Mixer (dim 64), window 1, 20,000 examples, 10 epochs at
batch 256, seeds 1-3, 1,024 pairs. ``medium_w3``: window 3 (mod_sum), 100,000
examples, 30 epochs: hours on a 2-core CPU. ``medium_mlp``: the paper's MLP (1,445,194
parameters), window 1, 50,000 examples, 20 epochs, seeds 1-3, with DAS.
"""

import csv
import dataclasses
import functools
import io
import json
import pathlib
import re

from pvr_keras import cli, files


@dataclasses.dataclass(frozen=True)
class Own:
    pairs: int = dataclasses.field(
        default=1024, metadata={"help": "counterfactual pairs per variable (test split)"}
    )
    pairs_seed: int = dataclasses.field(default=0, metadata={"help": "seed of the pairs"})
    aligned: float = dataclasses.field(
        default=0.9, metadata={"help": "IIA that counts as the variable living there"}
    )
    das_dims: int = dataclasses.field(
        default=10, metadata={"help": "DAS: interchanged dimensions of the rotated layer"}
    )
    das_pairs: int = dataclasses.field(default=8192, metadata={"help": "DAS: training pairs"})
    das_epochs: int = dataclasses.field(default=5, metadata={"help": "DAS: epochs"})
    out: str = dataclasses.field(default="runs/interventions", metadata={"help": "output folder"})
    name: str = dataclasses.field(
        default="interventions",
        metadata={"help": "the sweep's name in --out and the stem of the files it writes"},
    )

    def validate(self, run):
        cli.check_ints(self, ("pairs", "das_dims", "das_pairs", "das_epochs"), 1)
        cli.check_ints(self, ("pairs_seed",), 0)
        cli.check_range(self, "aligned", 0, 1, low_open=True)
        cli.check_stem(self.name)


def quick(given):
    return {"model": "transformer", "width": 0.125, "window": 1,
            "num_examples": 10_000, "test_examples": 1000, "epochs": 4, "warmup_epochs": 1,
            "min_steps": 0, "batch_size": 256, "seed": 1, "pairs": 256,
            "out": "runs/interventions_quick"}  # fmt: skip


def medium(given):
    return {"model": ("transformer", "mixer"), "width": 0.125, "window": 1,
            "num_examples": 20_000, "test_examples": 2000, "epochs": 10, "warmup_epochs": 1,
            "min_steps": 0, "batch_size": 256, "seed": (1, 2, 3),
            "out": "runs/interventions_medium"}  # fmt: skip


def medium_w3(given):
    return dict(medium(given), window=3, num_examples=100_000, epochs=30, warmup_epochs=2,
                name="interventions_w3")  # fmt: skip


def medium_mlp(given):
    return dict(medium(given), model="mlp", width=1.0, num_examples=50_000, epochs=20,
                name="interventions_mlp")  # fmt: skip


PRESETS = {"quick": quick, "medium": medium, "medium_w3": medium_w3, "medium_mlp": medium_mlp}

COMMAND = cli.Command(
    kind="token",
    presets=PRESETS,
    body=None,
    own=Own,
    description=__doc__,
    exclude=("devices", "data_dir", "download", "tensorboard"),
)

BLOCK = re.compile(r"block\d+")


def token_layers(model):
    """The layers of a model with a token axis whose outputs are compared: the embedded input
    (the last layer before ``block0``) and every ``block<i>``; None for a model without
    (batch, tokens, channels) blocks."""
    names = [layer.name for layer in model.layers]
    blocks = [n for n in names if BLOCK.fullmatch(n)]
    if not blocks or len(model.get_layer(blocks[0]).output.shape) != 3:
        return None
    first = names.index("block0_norm1") if "block0_norm1" in names else None
    start = [names[first - 1]] if first else []
    return start + sorted(blocks, key=lambda n: int(n[5:]))


def hidden_layers(model):
    """The MLP's hidden layers: ``block<i>`` and ``pre_logits`` (DAS's candidates)."""
    names = [layer.name for layer in model.layers]
    return [n for n in names if BLOCK.fullmatch(n) or n == "pre_logits"]


def analyse_run(own, run, model, say):
    """The grid of one trained run: positional IIA, or DAS where there is no token axis."""
    from pvr_keras import counterfactuals as cf

    task = run.task
    windows = [f"S{j}" for j in range(task.window)]
    layers = token_layers(model)
    if layers is not None:
        grid = cf.iia_grid(model, task, layers, ["P", *windows], n=own.pairs,
                           seed=own.pairs_seed, progress=say)  # fmt: skip
        grid["own_position"] = _values_at_own_positions(own, task, model, layers)
        grid["method"] = "positional"
        return grid
    layers = hidden_layers(model)
    rows = {}
    for name in ["P", *windows]:
        rows[name] = []
        for layer in layers:
            size = 1
            for s in model.get_layer(layer).output.shape[1:]:
                size *= int(s)
            if own.das_dims >= size:
                rows[name].append(None)
                continue
            found = cf.das(model, task, layer, name, dims=own.das_dims, n=own.das_pairs,
                           test_n=own.pairs, epochs=own.das_epochs, seed=own.pairs_seed,
                           changing=True)  # fmt: skip
            rows[name].append(found.iia)
        best = max((v, layer) for v, layer in zip(rows[name], layers, strict=True) if v is not None)
        say(f"{name}: best DAS IIA {best[0]:.3f} at {best[1]} ({own.das_dims} dims)")
    return {"method": "das", "layers": layers, "positions": [f"DAS {own.das_dims} dims"],
            "iia": {name: [[v] for v in values] for name, values in rows.items()}}  # fmt: skip


def _values_at_own_positions(own, task, model, layers):
    """IIA of each V_i at its own position (2 + i: after the class token and the pointer), per
    layer: {"V0": [per layer], ...}."""
    from pvr_keras import counterfactuals as cf

    out = {}
    for i in range(task.num_positions):
        name = f"V{i}"
        drawn = cf.pairs(task, own.pairs, name, own.pairs_seed, "test", True)
        out[name] = [cf.iia(model, task, layer, positions=[2 + i], pairs=drawn) for layer in layers]
    return out


def aligned_places(grid, threshold):
    """Per variable, the (layer, position, IIA) where IIA >= threshold, in layer order."""
    places = {}
    for name, rows in grid["iia"].items():
        places[name] = [
            (layer, position, value)
            for layer, row in zip(grid["layers"], rows, strict=True)
            for position, value in zip(grid["positions"], row, strict=True)
            if value is not None and value >= threshold
        ]
    for name, row in grid.get("own_position", {}).items():
        places[f"{name} (own position)"] = [
            (layer, "own", value) for layer, value in zip(grid["layers"], row, strict=True)
            if value >= threshold
        ]  # fmt: skip
    return places


def describe(aligned, threshold, layers):
    """Lines saying where each variable lives: its first places with IIA >= threshold; the
    values at their own positions in one line (how many of them align, per layer)."""
    lines = []
    for name, places in aligned.items():
        if name.endswith("(own position)"):
            continue
        where = ", ".join(f"{layer} position {p} ({v:.2f})" for layer, p, v in places[:3])
        lines.append(f"{name}: IIA >= {threshold} at {where or 'no single place'}"
                     + (f" and {len(places) - 3} more" if len(places) > 3 else ""))  # fmt: skip
    own = {k: v for k, v in aligned.items() if k.endswith("(own position)")}
    if own:
        counts = [sum(any(layer == place[0] for place in v) for v in own.values())
                  for layer in layers]  # fmt: skip
        shown = ", ".join(
            f"{layer} {c}/{len(own)}" for layer, c in zip(layers, counts, strict=True)
        )
        lines.append(f"V_i at its own position, IIA >= {threshold}: {shown}")
    return lines


def _heatmap(own, run, grid, line, out):
    """The run's heatmap ``NAME_<id>.png`` (and, with a token axis, ``NAME_<id>_values.png``:
    each V_i at its own token, per layer)."""
    from pvr_keras import figures

    title = f"{run.model} window {run.window} seed {run.seed}"
    path = out / f"{own.name}_{run.run_id}.png"
    accuracy = f"(test accuracy {line['test_accuracy']:.4f})"
    if grid["method"] == "das":
        figures.iia_heatmaps(grid, path, f"{title}: DAS IIA on changing test pairs {accuracy}",
                             token_positions=False)  # fmt: skip
        return
    figures.iia_heatmaps(grid, path, f"{title}: IIA on changing pairs {accuracy}")
    values = [f"V{i}" for i in range(run.task.num_positions)]
    rows = [[grid["own_position"][v][k] for v in values] for k in range(len(grid["layers"]))]
    figures.iia_heatmaps(
        {"layers": grid["layers"], "positions": list(range(2, 2 + len(values))),
         "iia": {"V_i at its own position": rows}},
        out / f"{own.name}_{run.run_id}_values.png", f"{title}: V_i at its own position",
    )  # fmt: skip


def _csv(results):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run_id", "model", "window", "seed", "method", "variable", "layer",
                     "position", "iia"])  # fmt: skip
    for r in results:
        grid = r["grid"]
        for name, rows in grid["iia"].items():
            for layer, row in zip(grid["layers"], rows, strict=True):
                for position, value in zip(grid["positions"], row, strict=True):
                    writer.writerow([r["id"], r["model"], r["window"], r["seed"], grid["method"],
                                     name, layer, position, value])  # fmt: skip
        for name, row in grid.get("own_position", {}).items():
            for layer, value in zip(grid["layers"], row, strict=True):
                writer.writerow([r["id"], r["model"], r["window"], r["seed"], grid["method"],
                                 name, layer, "own", value])  # fmt: skip
    return buffer.getvalue()


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    own = parsed.own
    runs = cli.check_task(parsed.runs)
    from pvr_keras import sweeps

    cli.run_sweep(parsed, runs, name=own.name, figure=None, grows=False,
                  trainer=functools.partial(sweeps.train_run, save_model=True))  # fmt: skip
    out = pathlib.Path(own.out)
    results = []
    for run, line, model in sweeps.saved_models(out, runs):
        print(f"[{own.name}] {run.run_id}: test accuracy {line['test_accuracy']:.4f}")
        grid = analyse_run(own, run, model, lambda text: print(f"  {text}"))
        _heatmap(own, run, grid, line, out)
        results.append({"id": run.run_id, "model": run.model, "window": run.window,
                        "seed": run.seed, "width": run.width,
                        "test_accuracy": line["test_accuracy"], "grid": grid,
                        "aligned": aligned_places(grid, own.aligned)})  # fmt: skip
    summary = {"pairs": own.pairs, "pairs_seed": own.pairs_seed, "aligned": own.aligned,
               "changing_pairs": True, "runs": results,
               "config": {"run": parsed.run.to_dict(), "grid": cli.to_dict(parsed.axes),
                          "recipe": cli.to_dict(own)}}  # fmt: skip
    files.write_text(out / f"{own.name}.json", json.dumps(summary, indent=1) + "\n")
    files.write_text(out / f"{own.name}.csv", _csv(results))
    for r in results:
        print(f"[{own.name}] {r['model']} window {r['window']} seed {r['seed']}:")
        for line in describe(r["aligned"], own.aligned, r["grid"]["layers"]):
            print(f"  {line}")
    print(f"wrote {out}/{own.name}.json, {own.name}.csv and a heatmap per run")
    return summary


if __name__ == "__main__":
    cli.main(main)
