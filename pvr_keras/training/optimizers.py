"""The optimizers of a run's ``train`` section (``pvr_keras.hyperparams``): Appendix A's
sweep, with the warm-up cosine schedule."""

from pvr_keras.hyperparams import OPTIMIZERS

__all__ = ["make_optimizer", "optimizer_for"]


def make_optimizer(
    name,
    learning_rate,
    *,
    momentum=0.9,
    weight_decay=1e-5,
    adam_epsilon=1e-7,
    coupled_weight_decay=0.0,
):
    """A Keras optimizer of the paper's sweep, with decoupled weight decay (0: none), Adam's
    epsilon, and coupled weight decay (PyTorch's ``weight_decay``: decay * w added to each
    gradient; 0: none, the plain Keras class).

    Example:
        >>> type(make_optimizer("lamb", 0.01)).__name__
        'Lamb'
        >>> type(make_optimizer("adam", 0.01, coupled_weight_decay=0.001)).__name__
        'CoupledAdam'
    """
    import keras

    from pvr_keras import compat

    classes = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam,
               "adagrad": keras.optimizers.Adagrad, "lamb": keras.optimizers.Lamb}  # fmt: skip
    if name not in classes:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; received {name!r}")
    kwargs = {"weight_decay": weight_decay or None}
    if name == "sgd":
        kwargs["momentum"] = momentum
    if name == "adam":
        kwargs["epsilon"] = adam_epsilon
    cls = classes[name]
    if coupled_weight_decay:
        cls = compat.coupled_decay_optimizer(cls)
        kwargs["coupled_weight_decay"] = coupled_weight_decay
    return cls(learning_rate, **kwargs)


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
        recipe.optimizer, lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay,
        adam_epsilon=recipe.adam_epsilon, coupled_weight_decay=recipe.coupled_weight_decay,
    )  # fmt: skip
