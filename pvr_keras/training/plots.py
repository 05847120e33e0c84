"""Learning-curve plots from a run's history."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def learning_curve(history, path, title=""):
    """Saves train/test accuracy and loss per epoch as a PNG at ``path``."""
    epochs = history["epoch"]
    fig, (acc, loss) = plt.subplots(1, 2, figsize=(10, 3.8))
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
    plt.close(fig)
    return path
