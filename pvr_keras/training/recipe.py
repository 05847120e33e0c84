"""The paper's training recipes (Appendix A) as named, typed presets."""

import dataclasses
import math

# Appendix A's sweep: SGD (with momentum), Adam, Adagrad, LAMB.
OPTIMIZERS = ("sgd", "adam", "adagrad", "lamb")


def make_optimizer(name, learning_rate, *, momentum=0.9, weight_decay=1e-5):
    """A Keras optimizer of the paper's sweep, with decoupled weight decay (0: none).

    Example:
        >>> type(make_optimizer("lamb", 0.01)).__name__
        'Lamb'
    """
    import keras

    decay = weight_decay or None
    if name == "sgd":
        return keras.optimizers.SGD(learning_rate, momentum=momentum, weight_decay=decay)
    if name == "adam":
        return keras.optimizers.Adam(learning_rate, weight_decay=decay)
    if name == "adagrad":
        return keras.optimizers.Adagrad(learning_rate, weight_decay=decay)
    if name == "lamb":
        return keras.optimizers.Lamb(learning_rate, weight_decay=decay)
    raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; received {name!r}")


def _finite(value):
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclasses.dataclass(frozen=True)
class TrainRecipe:
    """How to train: optimizer, learning rate and its schedule, batch size and length.

    Attributes:
        optimizer: ``"sgd"`` (with ``momentum``), ``"adam"``, ``"adagrad"`` or ``"lamb"``
            (the optimizers of the paper's sweep, Appendix A).
        learning_rate: base learning rate.
        momentum: SGD momentum.
        weight_decay: decoupled weight decay (Keras optimizers' ``weight_decay``).
        batch_size: global batch size.
        epochs: passes over the training set.
        warmup_epochs: linear warm-up length; with ``cosine`` the rate then decays to 0.
        schedule: ``"cosine"`` (warm-up + cosine) or ``"constant"``.
        min_steps: train at least this many iterations, adding epochs for tiny training sets.
        failed_below: a run whose final training accuracy is below this counts as failed
            (the paper ignores runs below 20%; we record them as failed instead).
    """

    optimizer: str = "sgd"
    learning_rate: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 1e-5
    batch_size: int = 1024
    epochs: int = 200
    warmup_epochs: int = 10
    schedule: str = "cosine"
    min_steps: int = 800
    failed_below: float = 0.2

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(
                f"optimizer must be one of {', '.join(OPTIMIZERS)}; received {self.optimizer!r}"
            )
        if self.schedule not in ("cosine", "constant"):
            raise ValueError(
                f"schedule must be one of cosine, constant; received {self.schedule!r}"
            )
        for name in ("batch_size", "epochs"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; received {value!r}")
        for name in ("warmup_epochs", "min_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0; received {value!r}")
        if not _finite(self.learning_rate) or self.learning_rate <= 0:
            raise ValueError(
                f"learning_rate must be a finite number > 0; received {self.learning_rate}"
            )
        for name in ("momentum", "weight_decay"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0; received {value!r}")
        if not _finite(self.failed_below) or not 0 <= self.failed_below <= 1:
            raise ValueError(f"failed_below must be in [0, 1]; received {self.failed_below!r}")

    def steps_per_epoch(self, num_examples):
        return math.ceil(num_examples / self.batch_size)

    def num_epochs(self, num_examples):
        """Epochs to run: ``epochs``, or more so that at least ``min_steps`` iterations run."""
        return max(self.epochs, math.ceil(self.min_steps / self.steps_per_epoch(num_examples)))

    def make_optimizer(self, num_examples):
        """A fresh Keras optimizer with this recipe's schedule for a training set size."""
        from pvr_keras.training.schedules import WarmupCosine

        steps = self.steps_per_epoch(num_examples)
        if self.schedule == "cosine":
            total = steps * self.num_epochs(num_examples)
            lr = WarmupCosine(self.learning_rate, min(steps * self.warmup_epochs, total), total)
        else:
            lr = self.learning_rate
        return make_optimizer(
            self.optimizer, lr, momentum=self.momentum, weight_decay=self.weight_decay
        )


# Token tasks: SGD momentum 0.9, weight decay 1e-5, batch 1024, 200 epochs, cosine from 0.05
# after a 10-epoch linear warm-up, at least 800 iterations for tiny training sets.
TOKEN = TrainRecipe()
# Visual tasks: Adam 1e-4, batch 50, 10 epochs.
VISUAL = TrainRecipe(
    optimizer="adam",
    learning_rate=1e-4,
    momentum=0.0,
    weight_decay=0.0,
    batch_size=50,
    epochs=10,
    warmup_epochs=0,
    schedule="constant",
    min_steps=0,
)
RECIPES = {"token": TOKEN, "visual": VISUAL}
