"""How a run trains (its ``train`` section) and the paper's settings of it (Appendix A).

``TOKEN`` (SGD momentum 0.9, weight decay 1e-5, batch 1024, 200 epochs, cosine from 0.05
after a 10-epoch linear warm-up, at least 800 iterations), ``VISUAL`` (Adam 1e-4, batch 50,
10 epochs), for Boolean PVR ``BOOLEAN`` (Adam 5e-5, batch 64, 100 epochs: the code of Abbe
et al. 2022) and for Boolean functions on a seen domain ``GOTU`` (SGD 0.003, batch 64, 50
epochs: Abbe et al. 2023). Nothing here imports Keras: ``training.optimizers.optimizer_for``
makes the optimizer.
"""

import dataclasses
import math

from pvr_keras.checks import MAX_COUNT, check_choice, check_count, check_number, is_integer
from pvr_keras.fields import field

# Appendix A's sweep: SGD (with momentum), Adam, Adagrad, LAMB.
OPTIMIZERS = ("sgd", "adam", "adagrad", "lamb")
SCHEDULES = ("cosine", "constant")
# float32 everywhere, or Keras's mixed precision: bfloat16 compute, float32 variables.
DTYPE_POLICIES = ("float32", "mixed_bfloat16")


@dataclasses.dataclass(frozen=True)
class TrainRecipe:
    """How to train: optimizer, learning rate and its schedule, batch size and length.

    The paper's token recipe is ``TOKEN``, its visual recipe ``VISUAL`` (Appendix A).
    ``curriculum_leap`` l > 0 trains by the Degree-Curriculum of Abbe, Bengio, Lotfi, Rizk
    2023 (``training.curriculum``; kinds whose inputs are bits, one device): each epoch on the
    training examples with at most r bits -1, r from l (raised by l while no example has so
    few) up by l each time an epoch's mean training loss is below ``curriculum_eps``; once
    r >= d (the number of bits) such an epoch ends training. ``epochs`` is then the most it
    trains (``min_steps`` does not apply), and the schedule must be constant without warm-up
    (its epochs have as many steps as their stage's examples). l = d is their "normal
    training": every example, stopped when the loss is below ``curriculum_eps``. 0 (the
    default): off, every example for ``epochs`` epochs; ``curriculum_eps`` is then unused.
    The run record's ``curriculum`` holds the stages (radius, first and last epoch and step)
    and the steps trained in all.
    ``failed_below``: a run whose final training accuracy is below it counts as failed (the
    paper ignores runs below 20%; we record them as failed instead).
    """

    optimizer: str = field(
        help="Appendix A's optimizers (paper: sgd, momentum 0.9)", choices=OPTIMIZERS, default="sgd"
    )
    learning_rate: float = field("base learning rate", default=0.05)
    momentum: float = field("SGD momentum", default=0.9)
    weight_decay: float = field("decoupled weight decay", default=1e-5)
    coupled_weight_decay: float = field(
        "coupled weight decay: decay * w added to each gradient before the update, as "
        "PyTorch's optimizers' weight_decay does (0: none)",
        default=0.0,
    )
    adam_epsilon: float = field(
        "Adam's epsilon (Keras's 1e-7; PyTorch's Adam: 1e-8); the other optimizers ignore it",
        default=1e-7,
    )
    batch_size: int = field("global batch size", default=1024)
    epochs: int = field("epochs (at least min_steps steps)", default=200)
    warmup_epochs: int = field("linear warm-up epochs", default=10)
    schedule: str = field(
        help="learning rate: warm-up + cosine, or constant", choices=SCHEDULES, default="cosine"
    )
    min_steps: int = field("train at least this many steps (tiny training sets)", default=800)
    failed_below: float = field("final training accuracy below which a run failed", default=0.2)
    curriculum_leap: int = field(
        "the Degree-Curriculum's leap l (Abbe et al. 2023): train on the examples with at most "
        "r bits -1, r from l up by l each time an epoch's mean loss is below curriculum_eps; "
        "0: off (every example, every epoch)",
        default=0,
    )
    curriculum_eps: float = field(
        "the Degree-Curriculum's loss threshold: a stage ends (the last one: training "
        "ends) when an epoch's mean training loss is below it",
        default=1e-3,
    )
    dtype_policy: str = field(
        help="Keras dtype policy of the model: float32, or mixed_bfloat16 (bfloat16 compute, "
        "float32 weights; for accelerators with bfloat16 units)",
        choices=DTYPE_POLICIES,
        default="float32",
    )

    def __post_init__(self):
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_choice("dtype_policy", self.dtype_policy, DTYPE_POLICIES)
        check_choice("schedule", self.schedule, SCHEDULES)
        for name, least in (("batch_size", 1), ("epochs", 1), ("warmup_epochs", 0),
                            ("min_steps", 0)):  # fmt: skip
            object.__setattr__(self, name, check_count(name, getattr(self, name), least))
        leap = self.curriculum_leap
        if not is_integer(leap) or leap < 0 or leap > MAX_COUNT:
            raise ValueError(
                f"curriculum_leap must be 0 (off: normal training) or the Degree-Curriculum's "
                f"leap, an integer >= 1; received {leap!r}"
            )
        object.__setattr__(self, "curriculum_leap", int(leap))
        check_number("learning_rate", self.learning_rate, 0, above=True)
        check_number("momentum", self.momentum, 0)
        check_number("weight_decay", self.weight_decay, 0)
        check_number("coupled_weight_decay", self.coupled_weight_decay, 0)
        check_number("adam_epsilon", self.adam_epsilon, 0, above=True)
        check_number("failed_below", self.failed_below, 0, maximum=1)
        check_number("curriculum_eps", self.curriculum_eps, 0, above=True)
        # 1 and 1.0 are one configuration: one id
        for name in ("learning_rate", "curriculum_eps", "coupled_weight_decay", "adam_epsilon"):
            if isinstance(getattr(self, name), int):
                object.__setattr__(self, name, float(getattr(self, name)))
        if self.curriculum_leap and (self.schedule != "constant" or self.warmup_epochs):
            raise ValueError(
                f"the Degree-Curriculum (curriculum_leap={self.curriculum_leap}) trains epochs "
                f"of as many steps as their stage's examples: give it schedule='constant' and "
                f"warmup_epochs=0; received schedule={self.schedule!r}, "
                f"warmup_epochs={self.warmup_epochs}"
            )

    def steps_per_epoch(self, num_examples):
        return math.ceil(num_examples / self.batch_size)

    def num_epochs(self, num_examples):
        """Epochs to run: ``epochs``, or more so that at least ``min_steps`` iterations run
        (with the Degree-Curriculum: ``epochs``, the most it runs)."""
        if self.curriculum_leap:
            return self.epochs
        return max(self.epochs, math.ceil(self.min_steps / self.steps_per_epoch(num_examples)))


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
# Boolean PVR (Abbe et al. 2022, their code): Adam 5e-5, batch 64, 100 epochs, constant rate,
# mean squared error; no run "fails" on accuracy (it is a regression).
BOOLEAN = TrainRecipe(
    optimizer="adam",
    learning_rate=5e-5,
    momentum=0.0,
    weight_decay=0.0,
    batch_size=64,
    epochs=100,
    warmup_epochs=0,
    schedule="constant",
    min_steps=0,
    failed_below=0.0,
)
# Boolean functions on a seen domain (Abbe, Bengio, Lotfi, Rizk 2023, their script's MLP
# setting): SGD 0.003 without momentum, batch 64, 50 epochs, constant rate, mean squared error.
GOTU = dataclasses.replace(BOOLEAN, optimizer="sgd", learning_rate=0.003, epochs=50)
RECIPES = {"token": TOKEN, "visual": VISUAL, "boolean": BOOLEAN, "gotu": GOTU}
