"""Boolean PVR with a frozen bit: generalisation error against Boolean influence.

    python recipes/boolean_holdout.py                       # quick: f3, d = 11, every bit
    python recipes/boolean_holdout.py --aggregation parity --window-mode cyclic
    python recipes/boolean_holdout.py --preset paper        # 40 seeds, their code's settings
    python recipes/boolean_holdout.py --model bits_transformer --width 0.25 --bits 0 3 7

Abbe, Bengio, Cornacchia, Kleinberg, Lotfi, Raghu, Zhang (NeurIPS 2022) recast PVR over bits in
{+1, -1} and explain holdout failures: trained with bit i frozen to +1 (every other bit
uniform) and tested on the whole cube, a network's generalisation error, half its mean
squared error, is close to the Boolean influence Inf_i(f) of that bit on the target, as if it
learned f with x_i = +1 (the minimum-degree extension). For each frozen bit (``--bits``,
default every bit) and seed, this trains a run of the ``boolean`` kind (a resumable sweep:
its run folders keep their models), tracks the learned function's Fourier coefficients on the
monomials that matter epoch by epoch, exactly on the cube (``runs/<id>/fourier.json``), and
reports per bit: Inf_i, half the MSE on the cube, half the MSE on the training half (x_i = +1,
the in-distribution loss) and the coefficients learned.

Writes into ``--out``, named by ``--name`` (default ``boolean_holdout``): NAME.json (per bit
and seed: influence, errors, the learned and expected coefficients; the correlation of
generalisation error and influence over the bits), NAME.csv (one row per bit), NAME.png (their
Figure-style plot: half MSE against Inf_i, one point per bit, and the coefficients per epoch
of the run of the most influential bit) and config_NAME.json, plus the sweep NAME
(``sweeps/NAME.json``), results.jsonl and the run folders.

Presets. ``quick``: f3 (3 pointer bits, window 3, majority, truncated windows: d = 11), the
MLP of their code, 1,900 training examples, Adam 5e-5 at batch 64, 100 epochs, seed 0, every
bit: 11 runs of 1-6 minutes on a 2-core CPU (45 minutes in all when it shared the machine
with four other jobs; a 20-epoch run took 16 s). ``medium``: the same with 3 seeds
(docs/results/boolean).
``paper``: their code's settings, 40 seeds: d = 11 (3 pointer bits) as quick; with
``--pointer-bits 4`` (d = 20), 100,000 examples at batch 1024 for 80 epochs (parity) or 30
(majority, min). Every flag of a Boolean run (``--model``, ``--width``, ``--epochs``, ...)
sets the runs' common settings; ``--seed`` takes the seeds of every bit (``--seed 0 1 2``).
"""

import dataclasses
import functools
import json
import pathlib

from pvr_keras import cli, files


@dataclasses.dataclass(frozen=True)
class Own:
    bits: tuple[int, ...] | None = dataclasses.field(
        default=None, metadata={"help": "bits to freeze, one run each (default: every bit)"}
    )
    track_every: int = dataclasses.field(
        default=1, metadata={"help": "epochs between two exact evaluations on the cube"}
    )
    out: str = dataclasses.field(default="runs/boolean_holdout", metadata={"help": "output folder"})
    name: str = dataclasses.field(
        default="boolean_holdout",
        metadata={"help": "the sweep's name in --out and the stem of the files it writes"},
    )

    def validate(self, run):
        cli.check_ints(self, ("track_every",), 1)
        cli.check_stem(self.name)


def quick(given):
    """f3 (d = 11), the MLP, their code's recipe (the kind's defaults), seed 0."""
    return dict(pointer_bits=3, window=3, aggregation="majority", window_mode="truncated")


def medium(given):
    """quick with 3 seeds per bit (docs/results/boolean)."""
    return dict(quick(given), seed=(0, 1, 2), out="runs/boolean_medium")


def paper(given):
    """Their code: 40 seeds; d = 20 (4 pointer bits): 100,000 examples, batch 1024, 80
    epochs for parity, 30 for majority and min."""
    values = dict(quick(given), seed=tuple(range(40)), out="runs/boolean_paper")
    values.update({k: v for k, v in given.items() if k in values})
    if values.get("pointer_bits", 3) >= 4:
        parity = values.get("aggregation") == "parity"
        values.update(num_examples=100_000, batch_size=1024, epochs=80 if parity else 30,
                      test_examples=10_000, train_eval_examples=10_000)  # fmt: skip
    return values


PRESETS = {"quick": quick, "medium": medium, "paper": paper}

COMMAND = cli.Command(
    kind="boolean",
    presets=PRESETS,
    body=None,
    own=Own,
    description=__doc__,
    exclude=("holdout", "devices", "data_dir", "download", "tensorboard"),
    aliases={"--seeds": "seed"},  # the recipe's older flag
)


def runs_of(parsed):
    """One run per (frozen bit, seed): ``--bits`` and ``--seed`` (several values)."""
    run, own = parsed.run, parsed.own
    seeds = cli.study_seeds(parsed, "bits")
    from pvr_keras.analysis.boolean import MAX_CUBE_BITS
    from pvr_keras.tasks import frozen_mask

    d = run.task.num_bits
    if d > MAX_CUBE_BITS:
        raise ValueError(
            f"the measures enumerate the cube, so d must be at most {MAX_CUBE_BITS}; this task "
            f"has d = {d}"
        )
    bits = tuple(range(d)) if own.bits is None else own.bits
    if not bits:
        raise ValueError("bits must name at least one bit")
    return [
        run.replace(holdout=frozen_mask([b], d), seed=s) for b in _distinct(bits) for s in seeds
    ]


def _distinct(bits):
    if len(set(bits)) != len(bits):
        raise ValueError(f"bits must be distinct; received {list(bits)}")
    return bits


def train_tracked(run, run_dir, *, every=1):
    """Trains one run with its Fourier tracker; the model is saved for the analysis."""
    from pvr_keras.analysis.fourier_tracking import FourierTracker
    from pvr_keras.tasks import frozen_bits
    from pvr_keras.training import runs

    tracker = FourierTracker(run.task, run_dir, frozen_bits(run.holdout, run.task.num_bits),
                             every=every)  # fmt: skip
    return runs.run(run, run_dir, save_model=True, callbacks=[tracker])


def analyse(runs, out):
    """Per run: the exact errors on the cube of its saved model; per bit: their summary."""
    import numpy as np

    from pvr_keras.analysis import boolean, fourier_tracking
    from pvr_keras.tasks import frozen_bits
    from pvr_keras.training import load_run

    target = boolean.target_values(runs[0].task)
    influence = boolean.boolean_influence(target)
    per_run = []
    for run in runs:
        (bit,) = frozen_bits(run.holdout, run.task.num_bits)
        folder = pathlib.Path(out) / "runs" / run.run_id
        values = boolean.model_values(load_run(folder).model, run.task.num_bits)
        expected = boolean.frozen_prediction(target, bit)
        subsets = fourier_tracking.tracked_subsets(target, (bit,))
        found = fourier_tracking.measures(values, target, (bit,), subsets)
        learned = found["coefficients"]
        expected_coefficients = boolean.fourier_coefficients(expected)[subsets]
        per_run.append({
            "bit": bit,
            "seed": run.seed,
            "run_dir": f"runs/{run.run_id}",
            "influence": float(influence[bit]),
            "half_mse": found["half_mse"],
            "in_distribution_half_mse": found["in_distribution_half_mse"],
            "half_mse_to_frozen_target": boolean.half_mse(values, expected),
            "subsets": [list(boolean.bits_of(s)) for s in subsets],
            "learned_coefficients": learned,
            "frozen_target_coefficients": [float(c) for c in expected_coefficients],
        })  # fmt: skip
    bits = sorted({r["bit"] for r in per_run})
    rows = []
    for bit in bits:
        mine = [r for r in per_run if r["bit"] == bit]
        errors = [r["half_mse"] for r in mine]
        rows.append({
            "bit": bit,
            "influence": float(influence[bit]),
            "half_mse_mean": float(np.mean(errors)),
            "half_mse_min": float(np.min(errors)),
            "half_mse_max": float(np.max(errors)),
            "in_distribution_half_mse_mean": float(
                np.mean([r["in_distribution_half_mse"] for r in mine])
            ),
            "half_mse_to_frozen_target_mean": float(
                np.mean([r["half_mse_to_frozen_target"] for r in mine])
            ),
            "seeds": len(mine),
        })  # fmt: skip
    x = np.array([r["influence"] for r in rows])
    y = np.array([r["half_mse_mean"] for r in rows])
    correlation = float(np.corrcoef(x, y)[0, 1]) if len(rows) > 2 and x.std() and y.std() else None
    return {
        "influence": [float(v) for v in influence],
        "bits": rows,
        "runs": per_run,
        "correlation": correlation,
        "mean_abs_difference": float(np.mean(np.abs(y - x))),
        "max_abs_difference": float(np.max(np.abs(y - x))),
    }


def _tracks(summary, out):
    """The coefficients per epoch of the first run of the most influential bit."""
    import numpy as np

    from pvr_keras.analysis import fourier_tracking

    top = max(summary["bits"], key=lambda r: r["influence"])
    run = next(r for r in summary["runs"] if r["bit"] == top["bit"])
    found = fourier_tracking.read(pathlib.Path(out) / run["run_dir"])
    if not found or not found["epochs"]:
        return None
    epochs = sorted(int(e) for e in found["epochs"])
    series = np.array([found["epochs"][str(e)]["coefficients"] for e in epochs])
    frozen = dict(zip(map(tuple, run["subsets"]), run["frozen_target_coefficients"], strict=True))
    target = np.array(found["target_coefficients"])
    # The largest monomials of the target that hold the frozen bit, and where they go.
    holding = [k for k, bits in enumerate(found["subset_bits"]) if top["bit"] in bits]
    holding = sorted(holding, key=lambda k: -abs(target[k]))[:3]
    lines = []
    for k in holding:
        bits = found["subset_bits"][k]
        without = [b for b in bits if b != top["bit"]]
        for subset in (bits, without):
            j = found["subset_bits"].index(subset)
            name = "x" + "x".join(map(str, subset)) if subset else "constant"
            lines.append((name, series[:, j].tolist(), frozen[tuple(subset)]))
    return {
        "bit": top["bit"],
        "epochs": epochs,
        "half_mse": [found["epochs"][str(e)]["half_mse"] for e in epochs],
        "lines": lines,
    }


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    own = parsed.own
    runs = cli.check_task(lambda: runs_of(parsed))
    summary = cli.run_sweep(
        parsed, runs, name=own.name, figure=None,
        trainer=functools.partial(train_tracked, every=own.track_every), grows=False,
    )  # fmt: skip
    from pvr_keras import figures, sweeps

    out = pathlib.Path(own.out)
    records, _ = sweeps.ResultsDir(out).read()
    recorded = {r["id"] for r in records}
    missing = [run.run_id for run in runs if run.run_id not in recorded]
    if missing:
        raise RuntimeError(f"runs not recorded (trained by another worker?): {missing}")
    result = analyse(runs, out)
    result["config"] = {"run": parsed.run.to_dict(), "grid": cli.to_dict(parsed.axes),
                        "recipe": cli.to_dict(own)}  # fmt: skip
    files.write_text(out / f"{own.name}.json", json.dumps(result, indent=1) + "\n")
    columns = ["bit", "influence", "half_mse_mean", "half_mse_min", "half_mse_max",
               "in_distribution_half_mse_mean", "half_mse_to_frozen_target_mean",
               "seeds"]  # fmt: skip
    table = [columns] + [[r[c] for c in columns] for r in result["bits"]]
    files.write_csv(out / f"{own.name}.csv", table)
    task = parsed.run.task
    points = [
        (r["bit"], r["influence"], [x["half_mse"] for x in result["runs"] if x["bit"] == r["bit"]])
        for r in result["bits"]
    ]
    title = (
        f"{parsed.run.model} on PVR over bits: {task.pointer_bits} pointer bits, window "
        f"{task.window}, {task.aggregation}, {task.window_mode} (d = {task.num_bits}); "
        f"{parsed.run.num_examples:,} examples, {parsed.run.epochs} epochs"
    )
    figures.boolean_holdout(points, _tracks(result, out), out / f"{own.name}.png", title)
    _report(result, out, own.name)
    return {"failed": False, **summary}


def _report(result, out, name):
    print("\nbit  Inf_i(f)  ½MSE on the cube (mean, min-max over seeds)  in-distribution ½MSE")
    for r in result["bits"]:
        print(
            f"{r['bit']:3d}  {r['influence']:8.4f}  {r['half_mse_mean']:.4f} "
            f"({r['half_mse_min']:.4f}-{r['half_mse_max']:.4f}){'':22s}"
            f"{r['in_distribution_half_mse_mean']:.4f}"
        )
    if result["correlation"] is not None:
        print(f"correlation of ½MSE and Inf_i over the bits: {result['correlation']:.3f}")
    print(
        f"mean |½MSE - Inf_i| {result['mean_abs_difference']:.4f}, largest "
        f"{result['max_abs_difference']:.4f}"
    )
    print(f"wrote {out}/{name}.json, {name}.csv, {name}.png, config_{name}.json")


if __name__ == "__main__":
    cli.main(main)
