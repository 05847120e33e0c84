"""Learning-curve plots from a run's history.

Drawn on a ``matplotlib.figure.Figure`` (no pyplot), so that plotting never switches the
program's matplotlib backend (a notebook keeps its own).
"""

from matplotlib.figure import Figure


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
    fig.savefig(path, dpi=110)
    return path
