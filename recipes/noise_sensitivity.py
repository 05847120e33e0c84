"""Figure 5: noise sensitivity of token PVR rules over window sizes and aggregations.

    python recipes/noise_sensitivity.py                  # quick: 5,000 samples x 2 runs, ~3 s
    python recipes/noise_sensitivity.py --preset paper   # 10,000 samples x 10 runs, ~20 s of CPU

Writes into ``--out``: config.json; noise_sensitivity.csv (aggregation, window, delta, ns, and
ns_std, the spread over runs); noise_sensitivity.json (the mean over the delta grid per
aggregation and window, ``mean_ns[aggregation][window]``, and ``wall_time_s``);
noise_sensitivity_mod_sum.png (Figure 5a: NS_delta of mod_sum for every window, delta on a log
axis over [e^-7, e^-1]); noise_sensitivity_aggregations.png (Figure 5b: NS_delta averaged over
that delta grid, for every aggregation against the window). Deltas are spaced evenly in log
delta, so the average of 5b weighs each e-fold of delta alike.

Expected (paper preset): mod_sum rises with the window (0.27 at window 1 to 0.49 at 9-10),
min and max fall (min 0.27 -> 0.12, max 0.28 at window 2 -> 0.19), median and maj_vote
stay near 0.26-0.29.
"""

import dataclasses
import json
import math
import pathlib
import time

import numpy as np

from pvr_keras import cli, figures, files
from pvr_keras.analysis import noise_sensitivity_runs
from pvr_keras.runconfig import DataSection
from pvr_keras.tasks import AGGREGATIONS, TokenTask


@dataclasses.dataclass(frozen=True)
class Config:
    aggregations: tuple[str, ...] = dataclasses.field(
        default=AGGREGATIONS, metadata={"choices": AGGREGATIONS, "help": "aggregations (5b)"}
    )
    windows: tuple[int, ...] = dataclasses.field(
        default=tuple(range(1, 11)), metadata={"help": "window sizes (complexity + 1)"}
    )
    curves: str = dataclasses.field(
        default="mod_sum",
        metadata={"choices": AGGREGATIONS, "help": "aggregation whose curves 5a shows"},
    )
    log_delta_min: float = dataclasses.field(default=-7.0, metadata={"help": "ln of least delta"})
    log_delta_max: float = dataclasses.field(
        default=-1.0, metadata={"help": "ln of largest delta (<= ln 0.5)"}
    )
    num_deltas: int = dataclasses.field(default=20, metadata={"help": "deltas in the grid"})
    num_samples: int = dataclasses.field(default=10_000, metadata={"help": "pairs per run"})
    runs: int = dataclasses.field(default=10, metadata={"help": "runs averaged"})
    seq_len: int = cli.field_of(TokenTask, "seq_len")
    num_values: int = cli.field_of(TokenTask, "num_values")
    pointer: bool = cli.field_of(TokenTask, "pointer")
    seed: int = cli.field_of(DataSection, "seed", help="seed of the sampled inputs")
    out: str = dataclasses.field(default="runs/noise_sensitivity", metadata={"help": "folder"})

    def validate(self):
        cli.check_task(lambda: check(self))


PRESETS = {
    "quick": lambda given: dict(num_samples=5_000, runs=2, num_deltas=13),
    "paper": lambda given: {},
}


def check(cfg):
    """Builds every task and the delta grid up front: a bad config fails before any work."""
    if not cfg.aggregations or not cfg.windows:
        raise ValueError("aggregations and windows must each name at least one value")
    if cfg.curves not in cfg.aggregations:
        raise ValueError(
            f"curves must be one of the aggregations computed ({', '.join(cfg.aggregations)}); "
            f"received {cfg.curves!r}"
        )
    for name in ("num_samples", "runs"):
        if getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be a positive integer; received {getattr(cfg, name)}")
    if cfg.seed < 0:
        raise ValueError(f"seed must be a non-negative integer; received {cfg.seed}")
    if cfg.num_deltas < 2:
        raise ValueError(f"num_deltas must be at least 2; received {cfg.num_deltas}")
    if not cfg.log_delta_min < cfg.log_delta_max <= math.log(0.5):
        raise ValueError(
            f"need log_delta_min < log_delta_max <= ln 0.5 = {math.log(0.5):.4f}; received "
            f"{cfg.log_delta_min} and {cfg.log_delta_max}"
        )
    tasks = {
        (aggregation, window): TokenTask(
            seq_len=cfg.seq_len,
            num_values=cfg.num_values,
            window=window,
            aggregation=aggregation,
            pointer=cfg.pointer,
        )
        for aggregation in cfg.aggregations
        for window in cfg.windows
    }
    deltas = np.exp(np.linspace(cfg.log_delta_min, cfg.log_delta_max, cfg.num_deltas))
    return tasks, deltas


def run(cfg):
    """Computes the grid, writes CSV, plots and config into ``cfg.out``; returns the rows."""
    tasks, deltas = check(cfg)
    out = pathlib.Path(cfg.out)
    cli.write(cfg, out, may_differ=tuple(f.name for f in dataclasses.fields(cfg)))
    start = time.perf_counter()
    rows, averages = [], {}
    for (aggregation, window), task in tasks.items():
        per_run = noise_sensitivity_runs(
            task, deltas, num_samples=cfg.num_samples, runs=cfg.runs, seed=cfg.seed
        )
        ns, spread = per_run.mean(axis=0), per_run.std(axis=0)
        averages[aggregation, window] = float(ns.mean())
        rows += [
            {
                "aggregation": aggregation,
                "window": window,
                "delta": float(d),
                "ns": float(v),
                "ns_std": float(s),
            }  # fmt: skip
            for d, v, s in zip(deltas, ns, spread, strict=True)
        ]
        print(
            f"[{time.perf_counter() - start:6.1f}s] {aggregation:>8} window {window:2d}: "
            f"mean NS {averages[aggregation, window]:.4f}",
            flush=True,
        )
    columns = ["aggregation", "window", "delta", "ns", "ns_std"]
    files.write_csv(
        out / "noise_sensitivity.csv", [columns, *([r[c] for c in columns] for r in rows)]
    )
    span = (cfg.log_delta_min, cfg.log_delta_max)
    curves = {
        w: [r["ns"] for r in rows if r["aggregation"] == cfg.curves and r["window"] == w]
        for w in cfg.windows
    }
    figures.noise_curves(
        deltas, curves, out / f"noise_sensitivity_{cfg.curves}.png",
        title=f"Noise sensitivity, {cfg.curves}", log_delta_range=span,
    )  # fmt: skip
    figures.noise_averages(
        cfg.windows, {a: [averages[a, w] for w in cfg.windows] for a in cfg.aggregations},
        out / "noise_sensitivity_aggregations.png", log_delta_range=span,
    )  # fmt: skip

    print(f"\nmean NS_delta over delta in [e^{cfg.log_delta_min:g}, e^{cfg.log_delta_max:g}]")
    print("window   " + " ".join(f"{a:>8}" for a in cfg.aggregations))
    for window in cfg.windows:
        cells = " ".join(f"{averages[a, window]:8.4f}" for a in cfg.aggregations)
        print(f"{window:6d}   {cells}")
    wall = time.perf_counter() - start
    summary = {a: {str(w): averages[a, w] for w in cfg.windows} for a in cfg.aggregations}
    text = json.dumps({"mean_ns": summary, "wall_time_s": wall}, indent=1)
    files.write_text(out / "noise_sensitivity.json", text + "\n")
    print(f"\nwrote {out} in {wall:.1f}s")
    return rows


def main(argv=None):
    cfg = cli.parse(Config, PRESETS, argv, description=__doc__)
    cli.check_out_folder(cfg.out)
    return run(cfg)


if __name__ == "__main__":
    cli.main(main)
