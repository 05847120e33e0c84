"""Where a CNN reads the cells of 2x2 block PVR: interchange interventions at its quadrants.

    python recipes/block_interventions.py --data-dir DIR             # quick, on a CPU (minutes)
    python recipes/block_interventions.py --preset medium --data-dir DIR   # width 16, seeds 1-3

Trains ResNet18 on 2x2 MNIST blocks (``--model``, ``--seed``: any of them several values; each
run's model saved, resumable; ``--data-dir``, default ``TFDS_DATA_DIR``) and asks of each
trained model where the high-level variables of the block task live (``pvr_keras.
counterfactuals``; Geiger et al. 2022, whose MNIST-PVR alignment puts each cell at its
quadrant of ResNet18's third stage): ``TL`` (the pointer digit's class), ``TR``, ``BL``,
``BR`` (the classes of the other cells).

- Interchange intervention accuracy (IIA) of each variable at each quadrant (``TL, TR, BL,
  BR``: rows and columns split at half the size rounded down, as iit's split; an odd size's
  last row and column belong to no quadrant) of the outputs of ``--layers`` (default
  block1, block3, block5 and block7: the end of each of ResNet18's four stages; block5 the
  third, 5x5 at 80x80 inputs), on ``--pairs`` changing test pairs (the counterfactual label
  differs from the base's).
- The interchange of all four variables at all four quadrants at once, at each of
  ``--all-at`` (default block5): IIA near 1 says those quadrants carry everything the rest of
  the network reads (for a 5x5 output the middle row and column are not interchanged).

Writes into ``--out``, named by ``--name`` (default ``block_interventions``): NAME.json (every
run's grid, its test accuracy, the all-quadrant IIA, and per variable the places with IIA >=
``--aligned``), NAME.csv (one row per run, variable, layer and position; the all-quadrant
interchange as position ``all``), one heatmap per run ``NAME_<run id>.png``, and the sweep's
records (results.jsonl, runs/<id>/ with model.keras).

Presets. ``quick``: block_iid.py's quick (ResNet18 at width 8, 25,000 / 2,000 examples, 5
epochs of Adam 2e-3 with a cosine decay, batch 50), seed 1, 512 pairs: about 12 minutes on a
2-core CPU. ``medium``: block_iid.py's medium (width 16, 60,000 / 10,000 examples, 5 epochs),
seeds 1-3, 512 pairs: hours on a 2-core CPU.

Measured for ``quick`` on real MNIST (TensorFlow, AMD EPYC, 2 cores shared with other jobs,
load average 3-5): 9.9 min of training, 2 min of interventions; test accuracy 94.3% (training
97.4%). Each cell lives at its own quadrant through the second stage (IIA 0.91-0.94 at block1
and block3, below 0.09 elsewhere) and nowhere at block5 (its own quadrant: TL 0.32, TR 0.06,
BL 0.02, BR 0.02) or block7; the interchange of all four quadrants at block5 scores 0.14
(for 80x80 images block5 is 5x5: its middle row and column, left out by iit's split, carry
what the head reads).
"""

import csv
import dataclasses
import functools
import io
import json
import pathlib

import numpy as np

from pvr_keras import cli, files
from pvr_keras.kinds.block.kind import PRESETS as BLOCK_PRESETS

QUADRANTS = ("TL", "TR", "BL", "BR")
MAX_PAIRS = 4096  # --pairs at most: 5x as many random pairs of 80x80 images are drawn
MAX_DRAWN = 8 * 5 * MAX_PAIRS  # random pairs drawn at most to find --pairs changing ones


@dataclasses.dataclass(frozen=True)
class Own:
    pairs: int = dataclasses.field(
        default=512, metadata={"help": "changing counterfactual pairs per variable (test split)"}
    )
    pairs_seed: int = dataclasses.field(default=0, metadata={"help": "seed of the pairs"})
    aligned: float = dataclasses.field(
        default=0.9, metadata={"help": "IIA that counts as the variable living there"}
    )
    layers: tuple[str, ...] = dataclasses.field(
        default=("block1", "block3", "block5", "block7"),
        metadata={"help": "the layers whose outputs are patched, quadrant by quadrant"},
    )
    all_at: tuple[str, ...] = dataclasses.field(
        default=("block5",),
        metadata={"help": "layers of the interchange of all four variables at all quadrants"},
    )
    out: str = dataclasses.field(
        default="runs/block_interventions", metadata={"help": "output folder"}
    )
    name: str = dataclasses.field(
        default="block_interventions",
        metadata={"help": "the sweep's name in --out and the stem of the files it writes"},
    )

    def validate(self, run):
        cli.check_ints(self, ("pairs",), 1)
        if self.pairs > MAX_PAIRS:
            raise cli.ConfigError(f"--pairs must be at most {MAX_PAIRS:,}; received {self.pairs:,}")
        cli.check_ints(self, ("pairs_seed",), 0)
        cli.check_range(self, "aligned", 0, 1, low_open=True)
        cli.check_stem(self.name)
        for flag, names in (("--layers", self.layers), ("--all-at", self.all_at)):
            if not names or len(set(names)) != len(names) or not all(names):
                raise cli.ConfigError(
                    f"{flag} must be distinct layer names; received {' '.join(names) or '(none)'}"
                )
        if run.task.grid != 2:
            raise cli.ConfigError(
                f"the variables TL, TR, BL, BR are those of 2x2 blocks; received --grid "
                f"{run.task.grid}"
            )


def quick(given):
    return dict(BLOCK_PRESETS["quick"](given), seed=1, out="runs/block_interventions_quick")


def medium(given):
    return dict(BLOCK_PRESETS["medium"](given), seed=(1, 2, 3),
                out="runs/block_interventions_medium")  # fmt: skip


PRESETS = {"quick": quick, "medium": medium}

COMMAND = cli.Command(
    kind="block",
    presets=PRESETS,
    body=None,
    own=Own,
    description=__doc__,
    exclude=("holdout", "devices", "tensorboard"),
)


def draw_pairs(own, task, data_dir, say):
    """``{variables: (changing pairs, share of random pairs whose label they change)}`` for
    each variable alone and for all four at once, from one draw of random test pairs.

    The pairs of one seed have the same bases and sources whatever variables are asked, and
    the changing ones are those random pairs whose counterfactual label differs, in index
    order (``cf.pairs``): one draw of the images serves all five interchanges (each draw of
    block images pays for its pipeline again).
    """
    from pvr_keras import counterfactuals as cf
    from pvr_keras.counterfactuals.causal import check_variables

    wanted = [*QUADRANTS, QUADRANTS]
    count = 5 * own.pairs  # BL changes about 27% of random pairs' labels, BR 30%
    while True:
        say(f"drawing {count:,} random test pairs (seed {own.pairs_seed})")
        # holdout=False: the IID test split (a block task's holdout is a bool).
        every = cf.pairs(task, count, list(QUADRANTS), own.pairs_seed, "test", holdout=False,
                         data_dir=data_dir)  # fmt: skip
        found = {}
        for names in wanted:
            variables = check_variables(task, names)
            y_cf = cf.label(task, every.base_values, every.source_values, variables)
            kept = np.flatnonzero(y_cf != every.label)[: own.pairs]
            changing = cf.Pairs(every.base[kept], every.source[kept], every.label[kept],
                                y_cf[kept].astype(np.int32), every.base_values[kept],
                                every.source_values[kept], variables, True)  # fmt: skip
            found[names] = (changing, float(np.mean(y_cf != every.label)))
        short = [n for n, (p, _) in found.items() if p.n < own.pairs]
        if not short:
            return found
        if count >= MAX_DRAWN:
            raise cli.ConfigError(
                f"{count:,} random test pairs hold fewer than --pairs {own.pairs:,} changing "
                f"pairs of {', '.join('+'.join(n) if isinstance(n, tuple) else n for n in short)}"
                f"; ask for fewer"
            )
        count = min(2 * count, MAX_DRAWN)


def check_layers(model, own):
    """The model has every layer asked for, each with a (batch, height, width, channels)
    output of at least 2x2; else one line naming its layers."""
    from pvr_keras.counterfactuals import patching

    for layer in dict.fromkeys((*own.layers, *own.all_at)):
        found = cli.check_task(lambda layer=layer: patching.check_layer(model, layer))
        cli.check_task(
            lambda found=found: patching.position_mask(
                tuple(found.output.shape), list(QUADRANTS), repr(found.name)
            )
        )


def analyse_run(own, run, model, say):
    """IIA of each variable at each layer x quadrant, and of all four variables at all
    quadrants at ``own.all_at``: the grid of one trained run."""
    from pvr_keras import counterfactuals as cf

    task, data_dir = run.task, run.system.data_dir
    check_layers(model, own)
    grid = {"method": "quadrants", "layers": list(own.layers), "positions": list(QUADRANTS),
            "shapes": {layer: list(model.get_layer(layer).output.shape[1:])
                       for layer in dict.fromkeys((*own.layers, *own.all_at))},
            "iia": {}, "changed": {}}  # fmt: skip
    drawn_pairs = draw_pairs(own, task, data_dir, say)
    for name in QUADRANTS:
        drawn, grid["changed"][name] = drawn_pairs[name]
        rows = [[cf.iia(model, task, layer, positions=[q], pairs=drawn) for q in QUADRANTS]
                for layer in own.layers]  # fmt: skip
        grid["iia"][name] = rows
        best = max((v, layer, q) for layer, row in zip(own.layers, rows, strict=True)
                   for v, q in zip(row, QUADRANTS, strict=True))  # fmt: skip
        own_quadrant = ", ".join(f"{layer} {row[QUADRANTS.index(name)]:.3f}"
                                 for layer, row in zip(own.layers, rows, strict=True))  # fmt: skip
        say(f"{name}: best IIA {best[0]:.3f} at {best[1]} quadrant {best[2]}; at its own "
            f"quadrant: {own_quadrant}")  # fmt: skip
    drawn, changed = drawn_pairs[QUADRANTS]
    grid["all_quadrants"] = {
        "variables": list(QUADRANTS), "changed": changed,
        "iia": {layer: cf.iia(model, task, layer, positions=list(QUADRANTS), pairs=drawn)
                for layer in own.all_at},
    }  # fmt: skip
    say("all four variables at all quadrants: " + ", ".join(
        f"{layer} {v:.3f}" for layer, v in grid["all_quadrants"]["iia"].items()))  # fmt: skip
    return grid


def aligned_places(grid, threshold):
    """Per variable, the (layer, quadrant, IIA) where IIA >= threshold, in layer order."""
    return {
        name: [
            (layer, quadrant, value)
            for layer, row in zip(grid["layers"], rows, strict=True)
            for quadrant, value in zip(grid["positions"], row, strict=True)
            if value >= threshold
        ]
        for name, rows in grid["iia"].items()
    }


def describe(aligned, threshold):
    return [
        f"{name}: IIA >= {threshold} at "
        + (", ".join(f"{layer} {q} ({v:.2f})" for layer, q, v in places) or "no single quadrant")
        for name, places in aligned.items()
    ]


def _csv(results):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run_id", "model", "width", "seed", "variable", "layer", "position", "iia"])
    for r in results:
        grid, first = r["grid"], [r["id"], r["model"], r["width"], r["seed"]]
        for name, rows in grid["iia"].items():
            for layer, row in zip(grid["layers"], rows, strict=True):
                for position, value in zip(grid["positions"], row, strict=True):
                    writer.writerow([*first, name, layer, position, value])
        both = grid["all_quadrants"]
        for layer, value in both["iia"].items():
            writer.writerow([*first, "+".join(both["variables"]), layer, "all", value])
    return buffer.getvalue()


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    own = parsed.own
    runs = cli.check_task(parsed.runs)
    run = parsed.run
    # The images first: a machine without them fails here, before anything is written.
    run.spec.prepare_data(run.task, run.system.data_dir, download=run.system.download)
    from pvr_keras import figures, sweeps

    cli.run_sweep(parsed, runs, name=own.name, figure=None, grows=False,
                  trainer=functools.partial(sweeps.train_run, save_model=True))  # fmt: skip
    out = pathlib.Path(own.out)
    results = []
    for one, line, model in sweeps.saved_models(out, runs):
        print(f"[{own.name}] {one.run_id}: test accuracy {line['test_accuracy']:.4f}; "
              f"{own.pairs} changing pairs per variable", flush=True)  # fmt: skip
        grid = analyse_run(own, one, model, lambda text: print(f"  {text}", flush=True))
        figures.iia_heatmaps(
            grid, out / f"{own.name}_{one.run_id}.png",
            f"{one.model} width {one.width} seed {one.seed}: IIA per quadrant on changing test "
            f"pairs (test accuracy {line['test_accuracy']:.4f})", token_positions=False,
        )  # fmt: skip
        results.append({"id": one.run_id, "model": one.model, "width": one.width,
                        "seed": one.seed, "test_accuracy": line["test_accuracy"],
                        "failed": line.get("failed"), "grid": grid,
                        "aligned": aligned_places(grid, own.aligned)})  # fmt: skip
    summary = {"pairs": own.pairs, "pairs_seed": own.pairs_seed, "aligned": own.aligned,
               "changing_pairs": True, "runs": results,
               "config": {"run": parsed.run.to_dict(), "grid": cli.to_dict(parsed.axes),
                          "recipe": cli.to_dict(own)}}  # fmt: skip
    files.write_text(out / f"{own.name}.json", json.dumps(summary, indent=1) + "\n")
    files.write_text(out / f"{own.name}.csv", _csv(results))
    for r in results:
        print(f"[{own.name}] {r['model']} width {r['width']} seed {r['seed']}:")
        for text in describe(r["aligned"], own.aligned):
            print(f"  {text}")
    print(f"wrote {out}/{own.name}.json, {own.name}.csv and a heatmap per run")
    return summary


if __name__ == "__main__":
    cli.main(main)
