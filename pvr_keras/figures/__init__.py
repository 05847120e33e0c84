"""The paper's figures, drawn from records: one place for every plot the library makes.

- ``learning_curve`` (every run), ``fast_slow_curves`` (Figure 12) — ``figures.curves``;
- ``plot`` / ``summarise`` of sweep results (Figures 9-11, 14, 16, 17) — ``figures.accuracy``
  (``sweeps.make_figures(RESULTS)`` draws a whole results directory);
- ``logits`` (Figure 8), ``cka_bars`` (Figure 13), ``noise_curves`` / ``noise_averages``
  (Figure 5), ``held_out_predictions`` (Figure 14's misses), ``benchmark`` (a benchmark
  suite's table), ``boolean_holdout`` (generalisation error against influence, Abbe et al.
  2022), ``gotu`` (the learned function on the unseen against the min-degree interpolator,
  Abbe et al. 2023), ``hop_accuracy`` (multi-hop PVR: accuracy per hop count) —
  ``figures.analyses``; ``iia_heatmaps`` (interchange intervention accuracy per layer and
  position) — ``figures.interventions``.

Everything draws on a ``matplotlib.figure.Figure`` (no pyplot), so plotting never switches a
program's or a notebook's matplotlib backend, and nothing here imports Keras.
"""

from pvr_keras.figures.accuracy import FIGURES, check_spec, plot, summarise, write_csv
from pvr_keras.figures.analyses import (
    benchmark,
    boolean_holdout,
    cka_bars,
    gotu,
    held_out_predictions,
    hop_accuracy,
    logits,
    noise_averages,
    noise_curves,
)
from pvr_keras.figures.curves import fast_slow_curves, learning_curve
from pvr_keras.figures.interventions import iia_heatmaps

__all__ = [
    "FIGURES",
    "benchmark",
    "boolean_holdout",
    "check_spec",
    "cka_bars",
    "fast_slow_curves",
    "gotu",
    "held_out_predictions",
    "hop_accuracy",
    "iia_heatmaps",
    "learning_curve",
    "logits",
    "noise_averages",
    "noise_curves",
    "plot",
    "summarise",
    "write_csv",
]
