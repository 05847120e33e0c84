"""The optimizers of a run's ``train`` section (``pvr_keras.hyperparams``): Appendix A's
sweep, with the warm-up cosine schedule."""

from pvr_keras.hyperparams import OPTIMIZERS

__all__ = ["make_optimizer", "optimizer_for"]


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


def optimizer_for(recipe, num_examples):
    """A fresh optimizer with ``recipe``'s schedule for a training set of ``num_examples``."""
    from pvr_keras.training.schedules import WarmupCosine

    steps = recipe.steps_per_epoch(num_examples)
    if recipe.schedule == "cosine":
        total = steps * recipe.num_epochs(num_examples)
        lr = WarmupCosine(recipe.learning_rate, min(steps * recipe.warmup_epochs, total), total)
    else:
        lr = recipe.learning_rate
    return make_optimizer(
        recipe.optimizer, lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay
    )
