"""Multi-hop PVR (pointer chasing): test accuracy per hop count, trained on few hops.

    python recipes/chain.py                                # quick: L = 12, three small models
    python recipes/chain.py --preset medium                # 1/8-width models, 3 seeds
    python recipes/chain.py --preset medium --backend jax   # its seeds as one population
    python recipes/chain.py --model transformer --width 0.25 --length 16 --seed 0 1
    python recipes/chain.py --form cycle --length 12

The conditional PVR of Abnar et al. 2023 ("Adaptivity and Modularity for Efficient
Generalization Over Task Complexity"; the ``chain`` kind, ``pvr_keras.kinds.chain``): start at
position 0 and follow ``x[c]`` while it grows; the label is the value read last. Each run
trains on hops 1-4 (``--hops``) and is tested on hops 1-8 (``--test-hops``), each example's hop
count drawn uniformly; after training, its saved model is scored on its own test set (the
split, size and seed its recorded test accuracy used) by hop count (``task.count_hops``),
beside the majority class of each hop count (the label is uniform in 0..p_k, so its
distribution moves with k).

The grid is ``--model`` x ``--width`` x ``--seed`` (several values each; any other field
takes one value), trained as a resumable sweep: each run in ``OUT/runs/<id>/`` and one line in
``OUT/results.jsonl``; killed at any point, the same command resumes, and a finished run is
never trained again. ``--population K`` trains K runs of one architecture as one JAX program
(``--backend jax``, or measured faster on this machine; else one after another).

Writes into ``--out``: per run ``runs/<id>/hops.json`` (its test set's counts by hop count:
examples, right, majority class), then chain.json (every run's counts, and per model the mean,
min and max accuracy over seeds per hop count), chain.csv (one row per model), chain.png
(accuracy against the hop count, one line per model, the trained hop counts shaded) and
config_chain.json; and prints the table.

Presets. ``quick`` (default): L = 12, the Transformer, MLP-Mixer and MLP at 1/8 width, 20,000
examples, 10 epochs at batch 128 (a 1-epoch warm-up; the token recipe otherwise), seed 0:
5.3 minutes on TensorFlow on a shared 2-core CPU (15 under heavier load, 3 of them measuring
the engine when no ``--backend`` is named); the Transformer learns hops 1-4 and carries them
to 5-8, the Mixer and MLP do not learn the rule (docs/results/chain_quick). ``medium``:
L = 20, the same three at 1/8 width, seeds 0-2 (a population of 3 per model on JAX, unless
another backend is named), 100,000 examples, 10 epochs (docs/results/chain_medium; about 2
hours on that CPU on TensorFlow, sized from single runs there). At L = 40 one 1/8-width
Transformer run of 100,000 x 8 epochs took 28.5 minutes, the nine runs 4-5 hours: give
``--length 40`` on a faster machine.
"""

import dataclasses
import json
import os
import pathlib

from pvr_keras import cli, files

NAME = "chain"
GRID = ("model", "width", "seed")
TRAIN_HOPS = (1, 2, 3, 4)
TEST_HOPS = (1, 2, 3, 4, 5, 6, 7, 8)
# The token recipe shortened: batch 128 (eight times the paper's updates per epoch) and a
# 1-epoch warm-up.
SHORT = dict(batch_size=128, warmup_epochs=1, min_steps=0, learning_rate=0.05)


def quick(given):
    """Minutes on a 2-core CPU: L = 12, three small models, 20,000 examples, 10 epochs."""
    return dict(SHORT, length=12, hops=TRAIN_HOPS, test_hops=TEST_HOPS,
                model=("transformer", "mixer", "mlp"), width=0.125, num_examples=20_000,
                epochs=10, test_examples=4_000, train_eval_examples=4_000,
                seed=0)  # fmt: skip


def medium(given):
    """docs/results/chain_medium: L = 20, the Transformer, MLP-Mixer and MLP at 1/8 width,
    seeds 0-2 (a population of 3 on JAX, unless another backend is named), 100,000
    examples, 10 epochs."""
    named = given.get("backend") or os.environ.get("KERAS_BACKEND")
    population = 3 if named in (None, "", "jax") else 1
    return dict(SHORT, length=20, hops=TRAIN_HOPS, test_hops=TEST_HOPS,
                model=("transformer", "mixer", "mlp"), width=0.125, num_examples=100_000,
                epochs=10, test_examples=8_000, train_eval_examples=8_000,
                seed=(0, 1, 2), population=population,
                out="runs/chain_medium")  # fmt: skip


PRESETS = {"quick": quick, "medium": medium}


@dataclasses.dataclass(frozen=True)
class Own:
    out: str = dataclasses.field(default="runs/chain", metadata={"help": "results directory"})
    claims: bool = dataclasses.field(
        default=True, metadata={"help": "claim runs (workers sharing --out)"}
    )
    dry_run: bool = dataclasses.field(
        default=False, metadata={"help": "print the grid's size, train nothing"}
    )


COMMAND = cli.Command(
    kind="chain",
    presets=PRESETS,
    own=Own,
    body=None,
    description=__doc__,
    exclude=("holdout", "devices", "data_dir", "download", "tensorboard"),
)


def runs_of(parsed):
    """The grid's runs: ``--model`` x ``--width`` x ``--seed``; several values of any other
    field are refused (one line)."""
    others = [name for name in parsed.axes if name not in GRID]
    if others:
        raise ValueError(
            f"--model, --width and --seed are this study's grid; received several values of "
            f"{', '.join(cli.flag(n) for n in others)}"
        )
    seeds = parsed.axes.get("seed", (parsed.run.seed,))
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct; received {list(seeds)}")
    return parsed.runs()


def label(run):
    """A model's name in the table and the figure: ``transformer x0.125`` (its width, unless
    1)."""
    name = run.model.rpartition(":")[2]
    return name if run.width == 1 else f"{name} x{run.width:g}"


def describe(runs):
    """Runs and training examples (epochs x set size) per model, as text."""
    per = {}
    for run in runs:
        count, cost = per.get(label(run), (0, 0))
        per[label(run)] = (count + 1, cost + run.train_examples())
    return "; ".join(f"{name}: {n} runs, {cost:.2e} training examples"
                     for name, (n, cost) in per.items())  # fmt: skip


def score_run(run, folder, record):
    """The counts by hop count of a finished run's saved model on its own test set (the
    examples its recorded test accuracy was measured on), kept in ``folder/hops.json``
    (read back when it is there for the same finished run)."""
    import numpy as np

    from pvr_keras import data
    from pvr_keras.analysis import hops
    from pvr_keras.training import load_run

    path = pathlib.Path(folder) / "hops.json"
    if path.is_file():
        found = files.read_json(path)
        if found.get("id") == run.run_id and found.get("finished") == record.get("finished"):
            return found
    task = run.task
    x, y = data.chain_arrays(task, run.test_examples, split="test", seed=run.seed)
    model = load_run(folder).model
    logits = model.predict(x, batch_size=run.spec.eval_batch_size, verbose=0)
    predicted = np.asarray(logits).argmax(-1)
    counts = hops.hop_counts(task.count_hops(x), y, predicted, task.split_hops("test"))
    found = {"id": run.run_id, "finished": record.get("finished"), "split": "test",
             "seed": run.seed, "test_examples": run.test_examples,
             "test_accuracy": float((predicted == y).mean()), **counts}  # fmt: skip
    files.write_text(path, json.dumps(found, indent=1) + "\n")
    return found


def analyse(runs, out, recorded):
    """Every recorded run's counts by hop count (``score_run``) and, per model, the accuracy
    per hop count over its seeds."""
    from pvr_keras.analysis import hops

    rows = []
    for run in runs:
        record = recorded.get(run.run_id)
        if record is None:
            continue
        counts = score_run(run, pathlib.Path(out) / "runs" / run.run_id, record)
        rows.append({
            "label": label(run),
            "model": run.model,
            "width": run.width,
            "seed": run.seed,
            "run_dir": f"runs/{run.run_id}",
            "num_examples": run.num_examples,
            "epochs": run.epochs,
            "failed": record.get("failed"),
            "train_accuracy": record.get("train_accuracy"),
            "test_accuracy": record.get("test_accuracy"),
            "wall_time_s": record.get("wall_time_s"),
            **{k: counts[k] for k in ("hops", "examples", "correct", "majority")},
        })  # fmt: skip
    return {"runs": rows, "models": hops.summarise(rows), "majority": hops.majority(rows)}


def _span(values):
    values = tuple(values)
    if len(values) > 1 and values == tuple(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def title(runs, result):
    task = runs[0].task
    sizes = sorted({(r.num_examples, r.epochs) for r in runs})
    budget = f"; {sizes[0][0]:,} examples, {sizes[0][1]} epochs" if len(sizes) == 1 else ""
    seeds = max((m["seeds"] for m in result["models"]), default=0)
    return (f"multi-hop PVR ({task.form}), L = {task.length}: trained on hops "
            f"{_span(task.hops)}, tested on {_span(task.split_hops('test'))}{budget}; "
            f"{seeds} seed{'s' * (seeds != 1)}")  # fmt: skip


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    own = parsed.own
    runs = cli.check_task(lambda: runs_of(parsed))
    summary = cli.run_sweep(parsed, runs, name=NAME, figure=None, describe=describe)
    if own.dry_run:
        return summary
    from pvr_keras import figures, sweeps

    out = pathlib.Path(own.out)
    recorded = {r["id"]: r for r in sweeps.ResultsDir(out).read()[0]}
    missing = [run.run_id for run in runs if run.run_id not in recorded]
    if missing:
        print(f"[{NAME}] {len(missing)} of {len(runs)} runs not recorded yet (trained by "
              f"another worker?); the summary covers the others")  # fmt: skip
    result = analyse(runs, out, recorded)
    task = runs[0].task
    result["task"] = dataclasses.asdict(task)
    result["train_hops"] = list(task.hops)
    result["test_hops"] = list(task.split_hops("test"))
    result["config"] = {"run": parsed.run.to_dict(), "grid": cli.to_dict(parsed.axes),
                        "recipe": cli.to_dict(own)}  # fmt: skip
    files.write_text(out / f"{NAME}.json", json.dumps(result, indent=1) + "\n")
    hops = result["test_hops"]
    header = ["model", "seeds", *(f"hop_{k}" for k in hops)]
    rows = [[m["label"], m["seeds"], *(m["mean"][m["hops"].index(k)] if k in m["hops"] else None
                                       for k in hops)] for m in result["models"]]  # fmt: skip
    if result["majority"]:
        rows.append(["majority class", "", *result["majority"]["values"]])
    files.write_csv(out / f"{NAME}.csv", [header, *rows])
    if result["models"]:
        lines = {m["label"]: m for m in result["models"]}
        figures.hop_accuracy(lines, out / f"{NAME}.png", title(runs, result),
                             train_hops=result["train_hops"],
                             baseline=result["majority"])  # fmt: skip
    report(result, out)
    return {"failed": False, **summary}


def report(result, out):
    """The table: one row per model, its mean accuracy per hop count (* trained on)."""
    hops, trained = result["test_hops"], set(result["train_hops"])
    cells = [f"{k}{'*' if k in trained else ''}" for k in hops]
    print(f"\naccuracy per hop count (mean over seeds; * trained on)\n{'model':22s} seeds  "
          + "  ".join(f"{c:>5s}" for c in cells))  # fmt: skip

    def fmt(values, of):
        found = dict(zip(of, values, strict=True))
        return "  ".join("    -" if found.get(k) is None else f"{found[k]:5.3f}" for k in hops)

    for m in result["models"]:
        print(f"{m['label']:22s} {m['seeds']:5d}  {fmt(m['mean'], m['hops'])}")
    if result["majority"]:
        baseline = result["majority"]
        print(f"{'majority class':22s} {'':5s}  {fmt(baseline['values'], baseline['hops'])}")
    failed = [r["run_dir"] for r in result["runs"] if r["failed"]]
    if failed:
        print(f"{len(failed)} run(s) failed the paper's rule (final training accuracy below "
              f"--failed-below): {', '.join(failed)}")  # fmt: skip
    drawn = f"{NAME}.png, " if result["models"] else ""
    print(f"wrote {out}/{NAME}.json, {NAME}.csv, {drawn}config_{NAME}.json")


if __name__ == "__main__":
    cli.main(main)
