"""Interchange intervention accuracy as heatmaps: where each high-level variable lives."""

import numpy as np
from matplotlib.figure import Figure

from pvr_keras.figures.analyses import _save


def position_label(position):
    """Axis-1 positions of the token models: 0 the class token, 1 the pointer, 2 + i V_i."""
    if isinstance(position, str):
        return position
    return {0: "cls", 1: "P"}.get(position, f"V{position - 2}")


def iia_heatmaps(grid, path, title, *, token_positions=True):
    """One panel per variable: IIA per layer (rows) and position (columns), 0 white to 1 dark.

    ``grid`` is what ``counterfactuals.iia_grid`` returns; ``token_positions`` names the
    columns as the Transformer's and Mixer's tokens (cls, P, V0, ...).
    """
    names = list(grid["iia"])
    layers, positions = grid["layers"], grid["positions"]
    fig = Figure(figsize=(0.45 * len(positions) * len(names) + 1.6, 0.42 * len(layers) + 1.6))
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    labels = [position_label(p) if token_positions else str(p) for p in positions]
    for ax, name in zip(axes, names, strict=True):
        values = np.asarray(grid["iia"][name], float)
        ax.imshow(values, vmin=0, vmax=1, cmap="Blues", aspect="auto")
        for (row, col), value in np.ndenumerate(values):
            ax.text(col, row, f"{value:.2f}"[1:] if value < 1 else "1", ha="center",
                    va="center", fontsize=6, color="white" if value > 0.6 else "black")  # fmt: skip
        ax.set_xticks(range(len(positions)), labels, fontsize=7, rotation=90)
        ax.set_yticks(range(len(layers)), layers if ax is axes[0] else [""] * len(layers),
                      fontsize=7)  # fmt: skip
        changed = grid.get("changed", {}).get(name)
        extra = f"\n(changes {changed:.0%} of random pairs)" if changed is not None else ""
        ax.set_title(f"{name}{extra}", fontsize=8)
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)
