"""Learning-rate schedules of the paper's recipes (Appendix A)."""

import math

import keras


@keras.saving.register_keras_serializable(package="pvr_keras")
class WarmupCosine(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to ``base_lr`` over ``warmup_steps``, then cosine decay to 0 at
    ``total_steps`` (the paper: base 0.05, 10 warm-up epochs, cosine over the rest).

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
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.name = name

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        warmup = keras.ops.maximum(float(self.warmup_steps), 1.0)
        warm = self.base_lr * step / warmup
        decay_steps = max(self.total_steps - self.warmup_steps, 1)
        progress = keras.ops.clip((step - self.warmup_steps) / decay_steps, 0.0, 1.0)
        cosine = 0.5 * self.base_lr * (1.0 + keras.ops.cos(math.pi * progress))
        return keras.ops.where(step < self.warmup_steps, warm, cosine)

    def get_config(self):
        return {
            "base_lr": self.base_lr,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
            "name": self.name,
        }
