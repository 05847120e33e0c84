"""Learning curves: one run's history, and several seeds' (fast and slow learners, Figure 12).

Drawn on a ``matplotlib.figure.Figure`` (no pyplot), so that plotting never switches the
program's matplotlib backend (a notebook keeps its own).
"""

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from pvr_keras.files import save_figure


def _measured(history, key):
    """``history[key]`` with None as NaN (a gap), or None when the history lacks it or
    holds no value in it (a run without a validation set, a record written before it)."""
    values = history.get(key)
    if not values or all(v is None for v in values):
        return None
    return [float("nan") if v is None else v for v in values]


def _epoch_axis(ax):
    """Epochs are whole: ticks at integers only (never 1.5)."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


LOSSES = {"accuracy": "cross-entropy", "mse": "mean squared error"}  # by the run's metric


def learning_curve(history, path, title="", metric="accuracy"):
    """Saves train/test accuracy and loss per epoch as a PNG at ``path``, with the
    validation set's where the history holds any (``validation_accuracy`` /
    ``validation_loss``: a run trained with one), on whole-epoch ticks; the loss axis names
    the loss of the run's ``metric`` (classification: cross-entropy; ``mse``: squared error)."""
    epochs = history["epoch"]
    fig = Figure(figsize=(10, 3.8))
    acc, loss = fig.subplots(1, 2)
    # (column, label, colour): a set has one colour in both panels
    curves = {
        acc: (("train_accuracy", "train (running, during epoch)", "C0"),
              ("train_eval_accuracy", "train (evaluated after epoch)", "C1"),
              ("test_accuracy", "test", "C2"), ("validation_accuracy", "validation", "C3")),
        loss: (("train_loss", "train", "C0"), ("test_loss", "test", "C2"),
               ("validation_loss", "validation", "C3")),
    }  # fmt: skip
    for ax, lines in curves.items():
        for key, label, colour in lines:
            values = _measured(history, key)
            if values is not None:
                alpha = 0.6 if key == "train_accuracy" else None
                marker = "o" if len(epochs) == 1 else None  # one epoch: a point
                ax.plot(epochs, values, label=label, color=colour, alpha=alpha, marker=marker)
        _epoch_axis(ax)
        ax.grid(alpha=0.3)
    acc.set(xlabel="epoch", ylabel="accuracy", ylim=(0, 1.02), title="accuracy")
    acc.legend(fontsize=8, loc="lower right")
    loss.set(xlabel="epoch", ylabel=LOSSES[metric], yscale="log", title="loss")
    loss.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def fast_slow_curves(curves, speeds, path, *, threshold, picks=(), title=""):
    """Figure 12: training and test accuracy per epoch of several seeds, fast learners in
    blue, slow in red, the others grey; the compared seeds (``picks``) drawn thick.

    Args:
        curves: ``{seed: {"epoch": [...], "train": [...], "test": [...]}}``.
        speeds: ``{seed: (speed, fit epoch or None)}``: ``"fast"``, ``"slow"``, ``"between"``.
        path: where the PNG goes.
        threshold: the training accuracy that counts as fitted (a dotted line).
    """
    import matplotlib

    fig = Figure(figsize=(11, 4))
    train_ax, test_ax = fig.subplots(1, 2, sharey=True)
    cmaps = {k: matplotlib.colormaps[c] for k, c in
             (("fast", "Blues"), ("between", "Greys"), ("slow", "Reds"))}  # fmt: skip
    for i, seed in enumerate(sorted(curves)):
        speed, fit = speeds[seed]
        color = cmaps[speed](0.45 + 0.5 * (i + 1) / len(curves))
        label = f"seed {seed}: {speed}, fits at {fit if fit is not None else 'never'}"
        width = 2.2 if seed in picks else 1.0
        curve = curves[seed]
        train_ax.plot(curve["epoch"], curve["train"], color=color, lw=width, label=label)
        test_ax.plot(curve["epoch"], curve["test"], color=color, lw=width, label=label)
    train_ax.axhline(threshold, color="grey", ls=":", lw=0.8)
    for ax, what in ((train_ax, "training accuracy (evaluated)"), (test_ax, "test accuracy")):
        ax.set(xlabel="epoch", ylabel=what, ylim=(0, 1.02), title=what)
        _epoch_axis(ax)
        ax.grid(alpha=0.3)
    test_ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)
