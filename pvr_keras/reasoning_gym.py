"""The benchmark's text configs as reasoning-gym datasets, each with a curriculum.

    import pvr_keras.reasoning_gym  # registers them; needs reasoning-gym (pip install -e ".[llm]")
    import reasoning_gym

    data = reasoning_gym.create_dataset("pvr_token_w3", seed=0, size=100)
    score = reasoning_gym.get_score_answer_fn("pvr_token_w3")
    score(reply, data[0])                                       # 1.0 or 0.0
    wider = reasoning_gym.create_dataset("pvr_token_w3", window=4, aggregation="median")
    curriculum = reasoning_gym.factory.create_curriculum("pvr_chain_l40_h1_4")

Every config with a text form (``benchmarks.text_source``) is registered as ``pvr_`` and its
TFDS name (``token/w3-median``: ``pvr_token_w3_median``). Its config class holds reasoning-gym's
``seed`` and ``size``, the ``split`` (``train``, ``validation`` or ``test``) and a field for
each axis of its kind's difficulty (``BenchmarkHooks.text_difficulty``; a span is two fields,
``min_hops`` and ``max_hops``), whose defaults are the catalog config's: token ``window``,
``aggregation`` and ``holdout``; chain ``min_hops``..``max_hops`` and ``length``; Boolean
``window`` (a frozen bit fixes an input of the training split, not the rule: each frozen bit
stays a dataset of its own, ``pvr_boolean_f3_frozen0`` .. ``10``). Its curriculum has an
attribute for each axis, its levels those of the axis that fit the config, easiest first; it
starts at the first level of each, as reasoning-gym's curricula do.

Seeds. Item i of ``create_dataset(name, seed=s, split=X)`` is example i of split X of the
catalog config with seed s and the dataset's difficulty: at the config's own difficulty and
seed (``benchmarks.get(config).seed``, 0 for every config), ``text_source(config, X)[i]``,
question and answer, for any i (a split's size ends ``text_source``, not the stream; the
Boolean test split is the cube in row order, 2**d items whatever the seed). Another seed is
another stream of the same rule, drawn by the library's generators (a pure function of (seed,
split, holdout, i), not Python's ``random``); as in the catalog, the validation split of seed
s is the training split of seed s + 1. Without a seed reasoning-gym draws one (the entries'
``seed`` says which). A changed difficulty builds the task with it (``TokenTask(window=4)``)
and the prompt states that task's rule (its kind's ``text_rule``).

An entry is ``text_source``'s with reasoning-gym's metadata added: ``source_dataset``,
``source_index`` and ``difficulty`` (each axis's value, a span as ``(min, max)``), beside ours
(``config``, ``version``, ``split``, ``index``, ``seed`` and the row's keys). Replies score
with ``benchmarks.score_answer``: 1.0 when the reply gives the answer (the number after its
last "answer", else its last number), else 0.0.
"""

import dataclasses
from typing import ClassVar

from pvr_keras import kinds
from pvr_keras.benchmarks import catalog, text
from pvr_keras.benchmarks.sources import Source
from pvr_keras.checks import MAX_INDEX, check_choice, check_int, check_seed, is_integer

try:
    import reasoning_gym  # noqa: F401
except ModuleNotFoundError as error:
    if error.name != "reasoning_gym":
        raise  # reasoning-gym is there; a package it needs is not
    raise ImportError(
        'pvr_keras.reasoning_gym needs reasoning-gym: pip install -e ".[llm]" (or pip install '
        "reasoning-gym)"
    ) from error
from reasoning_gym.coaching import (
    BaseCurriculum,
    RangeAttributeDefinition,
    ScalarAttributeDefinition,
)
from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import DATASETS, register_dataset

PREFIX = "pvr_"


def dataset_name(config):
    """The reasoning-gym name of a config (a name or a ``Config``): ``pvr_token_w3``."""
    config = config if isinstance(config, catalog.Config) else catalog.get(config)
    return PREFIX + config.tfds_name


def _fields(axis):
    """The config fields of an axis: its name, or ``min_<name>`` and ``max_<name>``."""
    return (f"min_{axis.name}", f"max_{axis.name}") if axis.span else (axis.name,)


def _defaults(config):
    """``{field: value}`` of a catalog config's difficulty (its task's, and its holdout)."""
    task = config.build_task()
    values = {}
    for axis in config.hooks.text_difficulty:
        value = config.holdout if axis.name == "holdout" else getattr(task, axis.name)
        top = value
        if axis.span:
            top, low = max(value), min(value)
            if tuple(value) != tuple(range(low, top + 1)):
                raise ValueError(f"{config.name}: {axis.name} must be consecutive integers, a "
                                 f"span of the curriculum; received {value!r}")  # fmt: skip
            value = (low, top)
        if top not in axis.levels:
            raise ValueError(f"{config.name}: {axis.name} {top!r} is not a level of its "
                             f"kind's axis ({', '.join(map(str, axis.levels))})")  # fmt: skip
        values.update(zip(_fields(axis), value if axis.span else (value,), strict=True))
    return values


class PvrConfig:
    """What every config's reasoning-gym config class adds to its fields (a dataclass made
    for each config by ``register``: its difficulty fields, ``split``, ``seed``, ``size``)."""

    benchmark: ClassVar[str]  # the catalog config
    dataset_name: ClassVar[str]  # its reasoning-gym name

    @property
    def axes(self):
        return catalog.get(self.benchmark).hooks.text_difficulty

    def difficulty(self):
        """``{axis: value}``, a span as ``(min, max)``: the entries' ``difficulty``."""
        return {a.name: tuple(getattr(self, f) for f in _fields(a)) if a.span
                else getattr(self, a.name) for a in self.axes}  # fmt: skip

    def task_config(self, seed):
        """The catalog config at this difficulty, with ``seed``: a ``benchmarks.Config``."""
        config = catalog.get(self.benchmark)
        task, holdout = dict(config.task), config.holdout
        for axis, value in self.difficulty().items():
            if isinstance(value, tuple):
                value = tuple(range(value[0], value[1] + 1))
            if axis == "holdout":
                holdout = value
            else:
                task[axis] = value
        return dataclasses.replace(config, task=task, holdout=holdout, seed=seed)

    def validate(self):
        """Checks every field, and builds the task (one line naming the dataset and the field).

        Raises:
            ValueError: a field reasoning-gym or the task does not allow.
        """
        try:
            check_choice("split", self.split, catalog.SPLITS)
            if self.seed is not None:
                check_seed(self.seed)
            check_int("size", self.size, 0)
            for axis in self.axes:
                if axis.span:
                    low, high = (check_int(f, getattr(self, f), 0) for f in _fields(axis))
                    if low > high:
                        raise ValueError(f"min_{axis.name} must be at most max_{axis.name}; "
                                         f"received {low} and {high}")  # fmt: skip
            config = self.task_config(0)
            kinds.kind(config.kind).check(config.build_task(), config.holdout)
            source = Source(config, self.split)
            if source.whole and self.size > len(source):
                raise ValueError(f"size must be at most {len(source):,}: the {self.split} split "
                                 f"is a fixed set; received {self.size}")  # fmt: skip
        except ValueError as error:
            raise ValueError(f"{self.dataset_name}: {error}") from None


class PvrDataset(ProceduralDataset):
    """One config's examples as a reasoning-gym dataset (see the module docstring): item i is
    example i of the config's split at the dataset's seed and difficulty."""

    def __init__(self, config):
        super().__init__(config=config, seed=config.seed, size=config.size)
        self.text = text.TextSource(config.task_config(self.seed), config.split)
        self.difficulty = config.difficulty()

    def __getitem__(self, idx):
        if not is_integer(idx) or not 0 <= idx < MAX_INDEX:  # example indices are int64
            raise IndexError(f"{self.config.dataset_name}: an index is a non-negative integer "
                             f"that fits int64; received {idx!r}")  # fmt: skip
        [entry] = self.text.entries([idx])
        metadata = entry["metadata"]
        del metadata["size"]  # the catalog's size preset: no size of this dataset
        entry["metadata"] = {"source_dataset": self.config.dataset_name,
                             "source_index": int(idx), **metadata, "seed": self.seed,
                             "difficulty": dict(self.difficulty)}  # fmt: skip
        return entry

    def score_answer(self, answer, entry):
        """1.0 when the reply gives the entry's answer (the number after its last "answer",
        else its last number), else 0.0 (``benchmarks.score_answer``)."""
        return text.score_answer(answer, entry)


def _fits(config_class, **fields):
    try:
        config_class(**fields).validate()
    except ValueError:
        return False
    return True


def _levels(config_class, axis):
    """The levels of ``axis`` that fit the config, its other fields at their defaults (a
    span: from its first level, and alone): ``token/w3-holdout6-of123`` holds out the orders
    of three values, so its window stays 3; ``token/w1`` holds out at most 1! = 1 order."""
    if not axis.span:
        return [v for v in axis.levels if _fits(config_class, **{axis.name: v})]
    low, high = _fields(axis)
    return [v for v in axis.levels if _fits(config_class, **{low: axis.levels[0], high: v})
            and _fits(config_class, **{low: v, high: v})]  # fmt: skip


class PvrCurriculum(BaseCurriculum):
    """A config's curriculum: an attribute for each axis of its kind's difficulty (a span: a
    range attribute), its levels those of the axis that fit the config (``_levels``), easiest
    first, starting at the first, as reasoning-gym's curricula do. A global level takes every
    axis to its level (or its last); levels of two axes set apart may not fit each other (a
    window of 1 with 2 held-out orders), and the dataset says so when it is made."""

    config_class: ClassVar[type]  # set for each config by ``register``

    def __init__(self):
        super().__init__(type(self).__name__, self.config_class)
        attributes = []
        for axis in self.config_class().axes:
            low, high = _fields(axis)[0], _fields(axis)[-1]
            common = dict(name=axis.name, levels=_levels(self.config_class, axis),
                          description=axis.description)  # fmt: skip
            if axis.span:
                attributes.append(RangeAttributeDefinition(
                    **common, lower_field_name=low, upper_field_name=high))  # fmt: skip
            else:
                attributes.append(ScalarAttributeDefinition(**common, field_name=low))
        self._define_attributes(*attributes)


def _class_name(config, suffix):
    return "Pvr" + "".join(p.capitalize() for p in config.tfds_name.split("_")) + suffix


def _register(config):
    """The config class and curriculum of one config, registered with reasoning-gym. The
    classes are this module's names too, so that a dataset pickles (loader workers)."""
    name = dataset_name(config)
    fields = [(f, type(v), dataclasses.field(default=v)) for f, v in _defaults(config).items()]
    fields += [("split", str, dataclasses.field(default="train")),
               ("seed", int | None, dataclasses.field(default=None)),
               ("size", int, dataclasses.field(default=500))]  # fmt: skip
    config_class = dataclasses.make_dataclass(
        _class_name(config, "Config"), fields, bases=(PvrConfig,),
        namespace={"benchmark": config.name, "dataset_name": name,
                   "__doc__": f"The reasoning-gym config of {config.name}: {config.description}"},
    )  # fmt: skip
    curriculum = type(_class_name(config, "Curriculum"), (PvrCurriculum,),
                      {"config_class": config_class, "__doc__": PvrCurriculum.__doc__})  # fmt: skip
    for cls in (config_class, curriculum):
        if cls.__name__ in globals():
            raise ValueError(f"{config.name}: another config's class is named {cls.__name__}")
        cls.__module__ = __name__
        globals()[cls.__name__] = cls
    register_dataset(name, PvrDataset, config_class, curriculum)


def register():
    """Registers with reasoning-gym every config with a text form not registered yet (this
    module does when imported; again after ``benchmarks.register_config`` adds one of yours).

    Returns:
        The names of all of them (``pvr_token_w1``, ...), in catalog order.

    Raises:
        ValueError: reasoning-gym holds another dataset of one of the names.
    """
    names = []
    for benchmark in text.names():
        config = catalog.get(benchmark)
        name = dataset_name(config)
        known = DATASETS.get(name)
        if known is None:
            _register(config)
        elif getattr(known[1], "benchmark", None) != config.name:
            raise ValueError(f"reasoning-gym holds another dataset named {name!r}")
        names.append(name)
    return names


register()
