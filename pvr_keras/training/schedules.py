"""Learning-rate schedules of the paper's recipes (Appendix A)."""

import keras


@keras.saving.register_keras_serializable(package="pvr_keras")
class WarmupCosine(keras.optimizers.schedules.CosineDecay):
    """Linear warm-up from 0 to ``base_lr`` over ``warmup_steps``, then cosine decay to 0 at
    ``total_steps`` (the paper: base 0.05, 10 warm-up epochs, cosine over the rest).

    Keras's own ``CosineDecay(0, decay_steps, warmup_target=base_lr, warmup_steps=...)``,
    named by the paper's three numbers (tests pin its values to the paper's formula); the name
    also keeps ``.keras`` files saved with it loadable.

    Example:
        >>> schedule = WarmupCosine(0.05, warmup_steps=10, total_steps=110)
        >>> round(float(schedule(60)), 4)
        0.025
    """

    def __init__(self, base_lr, warmup_steps, total_steps, name="warmup_cosine"):
        if total_steps < 1 or warmup_steps < 0 or warmup_steps > total_steps:
            raise ValueError(
                "need 0 <= warmup_steps <= total_steps and total_steps >= 1; received "
                f"warmup_steps={warmup_steps}, total_steps={total_steps}"
            )
        self.base_lr = float(base_lr)
        self.total_steps = int(total_steps)
        super().__init__(
            initial_learning_rate=0.0,
            decay_steps=max(self.total_steps - int(warmup_steps), 1),
            alpha=0.0,
            name=name,
            warmup_target=self.base_lr,
            warmup_steps=int(warmup_steps),
        )

    def get_config(self):
        return {
            "base_lr": self.base_lr,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "name": self.name,
        }
