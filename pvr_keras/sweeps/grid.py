"""Runs of a sweep: one typed config per training run, grids of them, stable ids, shards.

A run is a ``TokenRun``: the task (window, aggregation, pointer, holdout), the model, the
training-set size, the seed and the training recipe. Its id is a readable prefix plus a hash
of the whole config, so the same configuration gets the same id on every machine, every run
and every Python version, and any change (one more epoch) gives a new id.
"""

import dataclasses
import hashlib
import itertools
import json
import math

from pvr_keras.tasks import TokenTask
from pvr_keras.training.recipe import TOKEN

ID_HASH_CHARS = 10
# The token architectures (``pvr_keras.models.TOKEN_MODELS``, spelled out here so that runs
# are checked without importing Keras; a test keeps the two equal).
TOKEN_MODELS = ("mlp", "mlp2x", "transformer", "mixer")


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; received {value!r}")


@dataclasses.dataclass(frozen=True)
class TokenRun:
    """One training run of a token-task sweep.

    The data seed and the weight-initialisation seed are both ``seed``: two seeds differ in
    their training set, its order and the initial weights. ``epochs``, ``warmup_epochs``,
    ``min_steps``, ``batch_size`` and ``learning_rate`` replace those of the paper's token
    recipe (``training.TOKEN``); ``model_kwargs`` go to the model builder (e.g. narrower
    widths for tests).

    Example:
        >>> run = TokenRun(model="mlp", window=2, num_examples=3000, seed=1)
        >>> run.run_id.startswith("mlp-w2-mod_sum-n3000-s1-")
        True
    """

    model: str = "mlp"
    window: int = 1
    aggregation: str = "mod_sum"
    pointer: bool = True
    holdout: int = 0
    num_examples: int = 10_000
    seed: int = 0
    window_mode: str = "cyclic"
    test_examples: int = 10_000
    epochs: int = TOKEN.epochs  # the paper's token recipe (training.TOKEN) by default
    warmup_epochs: int = TOKEN.warmup_epochs
    min_steps: int = TOKEN.min_steps
    batch_size: int = TOKEN.batch_size
    learning_rate: float = TOKEN.learning_rate
    model_kwargs: dict = dataclasses.field(default_factory=dict)
    holdout_values: tuple[int, ...] | None = None
    width: float = 1.0

    def __post_init__(self):
        if self.model not in TOKEN_MODELS:
            raise ValueError(
                f"model must be one of {', '.join(TOKEN_MODELS)}; received {self.model!r}"
            )
        if self.holdout_values is not None and not isinstance(self.holdout_values, str):
            object.__setattr__(self, "holdout_values", tuple(self.holdout_values))
        # The task normalises the default tuple, spelled out, to None: one config, one id.
        object.__setattr__(self, "holdout_values", self.task().holdout_values)
        self.task().check_holdout(self.holdout)
        _check_int("num_examples", self.num_examples, 1)
        _check_int("test_examples", self.test_examples, 1)
        _check_int("seed", self.seed, 0)
        _check_int("warmup_epochs", self.warmup_epochs, 0)
        _check_int("min_steps", self.min_steps, 0)
        if not isinstance(self.model_kwargs, dict):
            raise ValueError(f"model_kwargs must be a dict; received {self.model_kwargs!r}")
        if isinstance(self.width, bool) or not isinstance(self.width, int | float):
            raise ValueError(f"width must be a number > 0; received {self.width!r}")
        if not (math.isfinite(self.width) and self.width > 0):
            raise ValueError(f"width must be a number > 0; received {self.width!r}")
        object.__setattr__(self, "width", float(self.width))
        if self.width != 1 and self.model_kwargs:
            raise ValueError(
                f"give width (a scale of the paper's widths) or model_kwargs, not both; "
                f"received width={self.width}, model_kwargs={self.model_kwargs}"
            )
        if isinstance(self.learning_rate, int) and not isinstance(self.learning_rate, bool):
            # 1 and 1.0 are one configuration: one id.
            object.__setattr__(self, "learning_rate", float(self.learning_rate))
        self.recipe()  # checks epochs, batch_size, learning_rate

    def task(self):
        """The ``TokenTask`` of this run (default seq_len 11 and 10 values)."""
        return TokenTask(
            window=self.window,
            aggregation=self.aggregation,
            window_mode=self.window_mode,
            pointer=self.pointer,
            holdout_values=self.holdout_values,
        )

    def recipe(self):
        """The paper's token recipe with this run's overrides."""
        return dataclasses.replace(
            TOKEN,
            epochs=self.epochs,
            warmup_epochs=self.warmup_epochs,
            min_steps=self.min_steps,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
        )

    def to_dict(self):
        """The config as a JSON-ready dict (what run records and result lines store).

        Fields added later are left out while they hold their default (``holdout_values``
        None, ``width`` 1), so the ids of runs recorded before they existed do not change.
        """
        fields = dataclasses.asdict(self)
        for name, default in LATER_FIELDS.items():
            if fields[name] == default:
                del fields[name]
        return json.loads(json.dumps(fields))

    def model_arguments(self):
        """Keyword arguments of this run's model builder: ``model_kwargs``, or the paper's
        widths scaled by ``width``."""
        if self.width != 1:
            from pvr_keras.models.scaling import width_kwargs

            return width_kwargs(self.model, self.width)
        return dict(self.model_kwargs)

    @property
    def run_id(self):
        """Readable prefix + hash of the whole config: stable across machines and versions."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:ID_HASH_CHARS]
        parts = [self.model, f"w{self.window}", self.aggregation]
        if not self.pointer:
            parts.append("nopointer")
        if self.holdout:
            parts.append(f"h{self.holdout}")
            if self.holdout_values is not None:
                parts.append("of" + "".join(map(str, self.holdout_values)))
        if self.width != 1:
            parts.append(f"x{self.width:g}")
        parts += [f"n{self.num_examples}", f"s{self.seed}", digest]
        return "-".join(parts)

    def train_examples(self):
        """Examples the training passes over: epochs x steps per epoch x batch size."""
        recipe = self.recipe()
        steps = recipe.steps_per_epoch(self.num_examples)
        return recipe.num_epochs(self.num_examples) * steps * self.batch_size

    def cost(self):
        """Rough relative cost, for progress estimates: examples trained and evaluated, plus
        a fixed charge per epoch (checkpoint, records) and per run (build, compile)."""
        epochs = self.recipe().num_epochs(self.num_examples)
        evaluated = min(self.num_examples, 10_000) + self.test_examples + 5_000
        return self.train_examples() + epochs * evaluated + 50_000


FIELDS = tuple(f.name for f in dataclasses.fields(TokenRun))
# Fields added after results were recorded, with the default that leaves them out of the id.
LATER_FIELDS = {"holdout_values": None, "width": 1.0}


def expand(axes, base=None):
    """All runs of a grid: the product of ``axes`` over a ``base`` run, in ``axes`` order.

    Args:
        axes: ``{field: values}``, e.g. ``{"seed": [0, 1], "window": [1, 2]}``; the first
            axis varies slowest, so listing ``seed`` first finishes a whole seed early.
        base: ``TokenRun`` (or dict of its fields) with the fixed fields.

    Returns:
        A list of ``TokenRun``; every one is validated before any work starts.

    Example:
        >>> runs = expand({"window": [1, 2], "num_examples": [1000, 3000]})
        >>> [(r.window, r.num_examples) for r in runs][:2]
        [(1, 1000), (1, 3000)]
    """
    if base is None:
        base = TokenRun()
    elif isinstance(base, dict):
        base = TokenRun(**base)
    if not isinstance(axes, dict) or not axes:
        raise ValueError(f"axes must be a non-empty dict of field -> values; received {axes!r}")
    unknown = [name for name in axes if name not in FIELDS]
    if unknown:
        raise ValueError(
            f"grid axes must be fields of TokenRun ({', '.join(FIELDS)}); received {unknown}"
        )
    for name, values in axes.items():
        if isinstance(values, str | bytes) or not hasattr(values, "__iter__") or not values:
            raise ValueError(
                f"axis {name!r} must be a non-empty list of values; received {values!r}"
            )
    names = list(axes)
    return [
        dataclasses.replace(base, **dict(zip(names, combo, strict=True)))
        for combo in itertools.product(*(list(axes[n]) for n in names))
    ]


def unique(runs):
    """``runs`` without repeated configurations (first occurrence kept, order kept)."""
    seen, out = set(), []
    for run in runs:
        if not isinstance(run, TokenRun):
            raise ValueError(f"runs must be TokenRun instances; received {type(run).__name__}")
        if run.run_id not in seen:
            seen.add(run.run_id)
            out.append(run)
    return out


def parse_shard(text):
    """``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``.

    Example:
        >>> parse_shard("1/4")
        (1, 4)
    """
    try:
        index, count = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise ValueError(f'shard must look like "i/n" (e.g. "0/4"); received {text!r}') from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard i/n needs n >= 1 and 0 <= i < n; received {text!r}")
    return index, count


def shard(runs, index, count):
    """The runs of shard ``index`` of ``count``: every ``count``-th run of the grid order.

    Deterministic (the grid order is), disjoint across shards, and their union is the grid;
    round-robin spreads cheap and expensive runs over the shards alike.
    """
    parse_shard(f"{index}/{count}")
    return list(runs)[index::count]
