"""Named benchmark suites: a fixed list of PVR tasks, each trained with a fixed budget, so
that any model (a registered name or a builder of your own) is measured on the same footing
as the paper's models (``tools/benchmark.py``).

A suite has entries for the model kinds it knows: token models get the token entries
(windows 1-4 of mod_sum at one training-set size, another aggregation, holdout-1 and the
pointer-less control); image models the 2x2 MNIST blocks, IID and under Figure 6's holdout.
Every entry of a suite trains with the same recipe (the library's, shortened to the suite's
budget), so a model's row says what it learns from those examples in that budget.

    >>> [name for name, _ in entries("quick", "token")][:3]
    ['w1', 'w2', 'w3']
"""

import dataclasses

from pvr_keras import kinds, registry
from pvr_keras.runconfig import Run


@dataclasses.dataclass(frozen=True)
class Suite:
    """A suite: per model kind, its task kind, its entries and their common budget."""

    name: str
    description: str
    token: dict  # the budget and sizes of every token entry
    image: dict  # the same for the block entries
    image_width: int  # base channels of the library's CNNs (a builder of yours: its own)


TOKEN_ENTRIES = (
    ("w1", dict(window=1)),
    ("w2", dict(window=2)),
    ("w3", dict(window=3)),
    ("w4", dict(window=4)),
    ("w2-median", dict(window=2, aggregation="median")),
    ("w2-holdout1", dict(window=2, holdout=1)),
    ("w2-nopointer", dict(window=2, pointer=False)),
)
IMAGE_ENTRIES = (("blocks-iid", dict(holdout=0)), ("blocks-holdout", dict(holdout=1)))
# Each entry of the quick suite trains on a benchmark config's small splits (the same task,
# holdout, seed and sizes: pvr_keras.benchmarks), so any framework can be scored on them.
CONFIGS = {"w1": "token/w1", "w2": "token/w2", "w3": "token/w3", "w4": "token/w4",
           "w2-median": "token/w2-median", "w2-holdout1": "token/w2-holdout1",
           "w2-nopointer": "token/w2-nopointer", "blocks-iid": "block/mnist-2x2",
           "blocks-holdout": "block/mnist-2x2-holdout"}  # fmt: skip

SUITES = {
    "quick": Suite(
        name="quick",
        description="20,000 token examples, 12 epochs at batch 128 (the token recipe's SGD, "
        "cosine from 0.05, 1 warm-up epoch); blocks: 10,000 examples, 3 epochs of Adam 2e-3",
        token=dict(num_examples=20_000, test_examples=2_000, train_eval_examples=2_000,
                   epochs=12, warmup_epochs=1, min_steps=0, batch_size=128),
        image=dict(num_examples=10_000, test_examples=2_000, train_eval_examples=2_000,
                   epochs=3, learning_rate=2e-3, schedule="cosine"),
        image_width=8,
    ),
    "standard": Suite(
        name="standard",
        description="300,000 token examples, 30 epochs at batch 1024 (the token recipe, 2 "
        "warm-up epochs); blocks: 60,000 examples, 5 epochs of Adam 2e-3",
        token=dict(num_examples=300_000, test_examples=10_000, epochs=30, warmup_epochs=2),
        image=dict(num_examples=60_000, test_examples=10_000, train_eval_examples=5_000,
                   epochs=5, learning_rate=2e-3, schedule="cosine"),
        image_width=16,
    ),
}  # fmt: skip
TASK_KIND = {"token": "token", "image": "block"}


def check_suite(name):
    if name not in SUITES:
        raise ValueError(f"suite must be one of {', '.join(SUITES)}; received {name!r}")
    return SUITES[name]


def model_kind(model):
    """The model kind a suite measures ``model`` on: its registered kind, or token for a
    builder that declares none."""
    spec = registry.model_spec(model)
    kind = spec.kind or "token"
    if kind not in TASK_KIND:
        raise ValueError(
            f"the benchmark suites have entries for token and image models; {model} is a "
            f"{kind} model"
        )
    return kind


def entries(suite, kind):
    """``[(entry name, fields)]`` of a suite for a model kind (``token`` or ``image``)."""
    suite = check_suite(suite)
    if kind == "token":
        return [(name, {**suite.token, **fields}) for name, fields in TOKEN_ENTRIES]
    return [(name, {**suite.image, **fields}) for name, fields in IMAGE_ENTRIES]


def runs(suite, model, *, width=None, seed=0):
    """``[(entry name, Run)]``: the suite's runs of ``model`` (every one checked).

    Args:
        suite: ``"quick"`` or ``"standard"``.
        model: a registered name or a builder reference.
        width: the model's width (a scale, or a CNN's base channels); default 1, and the
            suite's base channels for the library's CNNs.
        seed: the seed of every entry.
    """
    kind = model_kind(model)
    spec = registry.model_spec(model)
    if width is None:
        width = check_suite(suite).image_width if spec.width_arg else 1.0
    task_kind = kinds.kind(TASK_KIND[kind])
    return [
        (name, Run.make(task_kind.name, model=model, width=width, seed=seed, **fields))
        for name, fields in entries(suite, kind)
    ]
