"""Learning curves: one run's history, and several seeds' (fast and slow learners, Figure 12).

Drawn on a ``matplotlib.figure.Figure`` (no pyplot), so that plotting never switches the
program's matplotlib backend (a notebook keeps its own).
"""

from matplotlib.figure import Figure

from pvr_keras.files import save_figure


def learning_curve(history, path, title=""):
    """Saves train/test accuracy and loss per epoch as a PNG at ``path``."""
    epochs = history["epoch"]
    fig = Figure(figsize=(10, 3.8))
    acc, loss = fig.subplots(1, 2)
    acc.plot(epochs, history["train_accuracy"], label="train (running, during epoch)", alpha=0.6)
    acc.plot(epochs, history["train_eval_accuracy"], label="train (evaluated after epoch)")
    acc.plot(epochs, history["test_accuracy"], label="test")
    acc.set(xlabel="epoch", ylabel="accuracy", ylim=(0, 1.02), title="accuracy")
    acc.grid(alpha=0.3)
    acc.legend(fontsize=8, loc="lower right")
    loss.plot(epochs, history["train_loss"], label="train")
    loss.plot(epochs, history["test_loss"], label="test")
    loss.set(xlabel="epoch", ylabel="cross-entropy", yscale="log", title="loss")
    loss.grid(alpha=0.3)
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
        ax.grid(alpha=0.3)
    test_ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)
