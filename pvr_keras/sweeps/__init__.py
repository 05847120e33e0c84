"""Sweeps: grids of runs (any task kind) trained once each, recorded as JSON lines, plotted.

    from pvr_keras import sweeps
    runs = sweeps.expand({"seed": [0, 1], "window": [1, 2], "num_examples": [1000, 10000]},
                         dict(model="mlp", epochs=10, min_steps=0))
    sweeps.run_sweep(runs, "results/my_sweep", name="size_window",
                     figure=sweeps.FIGURES["size_window"])
    records, problems = sweeps.ResultsDir("results/my_sweep").read()

Started again, a sweep trains only the runs not yet recorded; killed at any point, it loses
and duplicates nothing (``results.py``); workers can share a results directory (``claims.py``)
or split the grid (``--shard i/n``, ``grid.shard``).
"""

from pvr_keras.sweeps.claims import Claim, Claims
from pvr_keras.sweeps.engine import result_line, run_sweep, saved_models, train_run
from pvr_keras.sweeps.figures import FIGURES, make_figures, plot, summarise
from pvr_keras.sweeps.grid import Run, expand, fields_of, parse_shard, shard, unique
from pvr_keras.sweeps.results import (
    FORMAT,
    FORMAT_VERSION,
    IncompatibleResultsError,
    ResultsDir,
    parse_lines,
)

__all__ = [
    "FIGURES",
    "FORMAT",
    "FORMAT_VERSION",
    "Claim",
    "Claims",
    "IncompatibleResultsError",
    "ResultsDir",
    "Run",
    "expand",
    "fields_of",
    "make_figures",
    "parse_lines",
    "parse_shard",
    "saved_models",
    "plot",
    "result_line",
    "run_sweep",
    "shard",
    "summarise",
    "train_run",
    "unique",
]
