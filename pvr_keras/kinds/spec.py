"""A task kind's spec, and the registry of kinds by name or reference.

A ``TaskKind`` joins a task dataclass (the rule, NumPy), its data generators (tf.data and the
JAX twin, same signature, named ``"module:function"``), the models it trains, its default
training settings, its data preparation and how its runs are named and recorded. The built-in
kinds (``kind_names()``; ``pvr_keras.kinds``'s docstring describes each) register themselves
when ``pvr_keras.kinds`` is imported; ``kind("my_pkg.kinds:PARITY")`` (or
``"path/kinds.py:PARITY"``) loads one of yours. A kind with ``BenchmarkHooks``
(``TaskKind.benchmark``) is a family of benchmark configs (``pvr_keras.benchmarks``,
``pvr_keras.tfds``): the benchmark layer calls those hooks, and never names a kind.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from pvr_keras.checks import is_integer
from pvr_keras.references import is_reference, normalise_reference, resolve
from pvr_keras.registry import MODEL_KINDS


def _check_reference(owner, name, value, optional=True):
    if value is None and optional:
        return
    if not is_reference(value):
        raise ValueError(f"{owner}.{name} must be a 'module:function' reference; received "
                         f"{value!r}")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class DifficultyAxis:
    """One axis of the difficulty of a kind's text form (``BenchmarkHooks.text_difficulty``):
    a field of its task, or the config's ``holdout``, and the values it takes, easiest first.
    ``pvr_keras.reasoning_gym`` makes each axis fields of a config's reasoning-gym dataset
    (defaults: the config's values) and an attribute of its curriculum (levels: ``levels``).

    Attributes:
        name: the task field (``window``), or ``holdout``; the curriculum attribute's name.
        levels: its values, easiest first (each config's own value among them).
        description: one line, the curriculum attribute's.
        span: the task field is a tuple of consecutive integers (the chain's ``hops``): the
            axis is the range ``min_<name>``..``max_<name>``, and a level its largest value.
    """

    name: str
    levels: tuple
    description: str = ""
    span: bool = False

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name.isidentifier()):
            raise ValueError(f"DifficultyAxis.name must be a field name; received {self.name!r}")
        if not (isinstance(self.levels, tuple) and self.levels
                and len(set(self.levels)) == len(self.levels)):  # fmt: skip
            raise ValueError(f"DifficultyAxis.levels must be a tuple of distinct values; "
                             f"received {self.levels!r}")  # fmt: skip
        if self.span and not all(is_integer(v) for v in self.levels):
            raise ValueError(f"the levels of a span axis are integers; received {self.levels!r}")


@dataclasses.dataclass(frozen=True)
class BenchmarkHooks:
    """What the benchmark layer needs of a kind to serve its configs (``benchmarks.source``,
    ``score``, ``text_source``, the manifest, the TFDS builder ``pvr``).

    Each function is named ``"module:function"`` and imported when first called, so listing
    configs imports none of them (nor the framework they may use). A config's task is
    ``TaskKind.task(**config.task)``.

    Attributes:
        sizes: the split sizes of each size preset, ``{preset: {split: examples}}`` (presets
            ``standard`` and ``small``; a smaller preset's split is a prefix of the larger's);
            a size of None is ``whole(task)``.
        supervised: the row keys ``(inputs, label)``: TFDS's supervised keys, the arrays the
            manifest hashes, the text form's sequence and answer.
        rows: ``f(source, index) -> {key: array}``: the examples at ``index`` (1-D int64, in
            range) of a ``benchmarks.Source`` (it gives ``task``, ``config``, ``split``,
            ``seed`` and ``stream``, ``data_dir``, and ``cache``, a dict for what ``rows``
            builds once per source), each array with a leading batch axis.
        features: ``f(task) -> tfds.features.FeaturesDict`` of the rows (the TFDS builder's);
            None: no TFDS form.
        hashed: the canonical dtypes ``(inputs, label)`` (``"int32"``, ...) of the bytes the
            manifest hashes; None: the splits have no manifest entry (image configs, whose
            pixels come from the local MNIST / CIFAR-10 copy).
        whole: ``f(task) -> int``: the number of examples of a split whose size is None (the
            Boolean test split: the cube's 2**d points).
        images: ``f(task) -> names`` of the TFDS image datasets the rows are drawn from (the
            TFDS builder reads them from its own data dir when they are prepared there).
        text_rule: ``f(task) -> str``: the rule in words, stated once at the top of every text
            prompt; None: no text form.
        text_sequence: ``f(row) -> str``: one example's inputs as text (its answer is
            ``str(int(row[label]))``).
        text_answers: ``f(task) -> tuple of ints``: every answer a reply may give, in order
            (the choices of the multiple-choice form, e.g. lm-evaluation-harness's
            log-likelihood task); None: the text form has no multiple-choice variant.
        text_difficulty: the axes of the text form's difficulty (``DifficultyAxis``: a task
            field or ``holdout``, and its levels), the fields and curriculum of each config's
            reasoning-gym dataset (``pvr_keras.reasoning_gym``); () : none.
        score: ``f(source, rows, predictions) -> {metric: value}``; None: classification
            (``accuracy``, ``per_<key>`` for each of ``slices``, ``held_out`` and ``rest`` for
            a holdout config whose rows hold ``held_out``).
        slices: row keys by whose values classification also reports its accuracy
            (``("pointer",)``: ``per_pointer``).
        configs: the kind's own configs, each a dict of ``benchmarks.Config`` fields but
            ``kind`` (``name``, ``task``, ``description``, ...), which the catalog lists once
            the kind is registered: a kind at the kinds layer cannot import the catalog to
            ``register_config`` them (a module of yours can, and may do either).
        hashed_inputs: the row keys whose bytes, example by example in this order, are the
            inputs the manifest hashes, where they are more than ``supervised``'s inputs (a
            counterfactual pair's ``base`` and ``source``, each of ``hashed``'s inputs
            dtype); () : ``supervised[0]``.
        pairs: the hooks of the kind's counterfactual-pair configs (a ``benchmarks.Config``
            with ``interchange``: rows of a base, a source and the counterfactual label);
            None: the kind has none.
    """

    sizes: dict
    supervised: tuple[str, str]
    rows: str
    features: str | None = None
    hashed: tuple[str, str] | None = None
    whole: str | None = None
    images: str | None = None
    text_rule: str | None = None
    text_sequence: str | None = None
    text_answers: str | None = None
    text_difficulty: tuple[DifficultyAxis, ...] = ()
    score: str | None = None
    slices: tuple[str, ...] = ()
    configs: tuple[dict, ...] = ()
    hashed_inputs: tuple[str, ...] = ()
    pairs: "BenchmarkHooks | None" = None

    def __post_init__(self):
        owner = "BenchmarkHooks"
        if not (isinstance(self.sizes, dict) and self.sizes
                and all(isinstance(v, dict) for v in self.sizes.values())):  # fmt: skip
            raise ValueError(f"{owner}.sizes must be {{preset: {{split: examples}}}}; "
                             f"received {self.sizes!r}")  # fmt: skip
        if any(n is None for v in self.sizes.values() for n in v.values()):
            _check_reference(owner, "whole", self.whole, optional=False)
        for name, pair in (("supervised", self.supervised), ("hashed", self.hashed)):
            if pair is None and name == "hashed":
                continue
            if not (isinstance(pair, tuple) and len(pair) == 2
                    and all(isinstance(k, str) for k in pair)):  # fmt: skip
                raise ValueError(f"{owner}.{name} must be a pair of strings; received {pair!r}")
        _check_reference(owner, "rows", self.rows, optional=False)
        for name in (
            "features",
            "whole",
            "images",
            "text_rule",
            "text_sequence",
            "text_answers",
            "score",
        ):
            _check_reference(owner, name, getattr(self, name))
        if (self.text_rule is None) != (self.text_sequence is None):
            raise ValueError(f"{owner}: a text form needs both text_rule and text_sequence")
        if self.text_answers is not None and self.text_rule is None:
            raise ValueError(f"{owner}: text_answers is for a text form (text_rule and "
                             "text_sequence)")  # fmt: skip
        if not (isinstance(self.text_difficulty, tuple)
                and all(isinstance(a, DifficultyAxis) for a in self.text_difficulty)):  # fmt: skip
            raise ValueError(f"{owner}.text_difficulty must be a tuple of DifficultyAxis; "
                             f"received {self.text_difficulty!r:.200}")  # fmt: skip
        if self.text_difficulty and self.text_rule is None:
            raise ValueError(f"{owner}: text_difficulty is for a text form (text_rule and "
                             "text_sequence)")  # fmt: skip
        if len({a.name for a in self.text_difficulty}) != len(self.text_difficulty):
            raise ValueError(f"{owner}.text_difficulty names an axis twice")
        if not isinstance(self.slices, tuple):
            raise ValueError(f"{owner}.slices must be a tuple of row keys; received "
                             f"{self.slices!r}")  # fmt: skip
        if not (isinstance(self.configs, tuple) and all(
                isinstance(c, dict) and isinstance(c.get("name"), str)
                and isinstance(c.get("task"), dict) and "kind" not in c
                for c in self.configs)):  # fmt: skip
            raise ValueError(f"{owner}.configs must be a tuple of dicts of Config fields (name, "
                             f"task, ...; not kind); received {self.configs!r:.200}")  # fmt: skip
        if not (isinstance(self.hashed_inputs, tuple)
                and all(isinstance(k, str) for k in self.hashed_inputs)):  # fmt: skip
            raise ValueError(f"{owner}.hashed_inputs must be a tuple of row keys; received "
                             f"{self.hashed_inputs!r:.200}")  # fmt: skip
        if self.pairs is not None and not isinstance(self.pairs, BenchmarkHooks):
            raise ValueError(f"{owner}.pairs must be the BenchmarkHooks of the kind's "
                             f"counterfactual-pair configs; received "
                             f"{self.pairs!r:.200}")  # fmt: skip

    def function(self, name):
        """The hook ``name`` (``"rows"``, ``"score"``, ...), imported; None when not given."""
        ref = getattr(self, name)
        return None if ref is None else resolve(ref)


@dataclasses.dataclass(frozen=True)
class TaskKind:
    """What the library needs to train and evaluate one kind of task.

    Attributes:
        name: the kind's name (``token``, another built-in kind's, or yours).
        task: the task dataclass: its fields are the run's task section (flags, sweep axes);
            ``task.label`` is the NumPy rule.
        models: the model kind it trains (``MODEL_KINDS``).
        recipe: its default ``TrainRecipe`` (training section defaults).
        dataset: ``"module:function"`` of its tf.data generator: ``f(request, /)`` of a
            ``data.request.StreamRequest`` (the library's take one: checked when it was made,
            its holdout included, it is passed on as it is), or ``f(task, n, *, split, seed,
            holdout, batch_size, shuffle, epochs, first_epoch)`` (+ ``data_dir`` with
            ``images``) -> batches of (x, y), which the library calls with the request's
            fields: a generator of yours may take just these.
        device: the JAX twin of ``dataset`` (same signature, same examples), or None.
        arrays: ``"module:function"`` ``f(task, n, *, split, seed, holdout)`` -> (x, y, ...).
        model_arguments: ``task -> dict``: the builder's task arguments.
        check: ``(task, holdout) -> holdout``: checks the task for this kind and the holdout
            setting, and returns the holdout normalised (an int k, or a bool for blocks).
        check_run: ``run -> None``: checks a whole run of this kind (its sizes against its
            task: the gotu kind's ``draw="all"``), raising a ValueError; or None.
        defaults: the kind's defaults of other run fields (``model``, ``num_examples``, ...).
        identity: run fields always in a run's identity (the others only when they differ
            from the kind's default); None: every field.
        iid_eval: a holdout run also reports its accuracy on an IID test set.
        eval_batch_size: batch of the test and training-accuracy evaluations.
        images: its examples are drawn from TFDS images (``data_dir``, ``download``).
        prepare: ``"module:function"`` of ``f(task, data_dir, *, download)``, which prepares
            its data before training (TFDS images), or None.
        metric: ``"accuracy"`` (classification, the default) or ``"mse"`` (regression).
        id_parts: ``run -> list of str``: the readable part of a run id after the model name
            (the token kind: ``["w2", "mod_sum", "h1"]``).
        benchmark: its ``BenchmarkHooks``, which make it a family of benchmark configs
            (``benchmarks.register_config``); None: no benchmark configs.
    """

    name: str
    task: type
    models: str
    recipe: Any
    dataset: str
    arrays: str
    model_arguments: Callable[[Any], dict]
    check: Callable[[Any, Any], Any]
    device: str | None = None
    defaults: dict = dataclasses.field(default_factory=dict)
    identity: tuple[str, ...] | None = None
    iid_eval: bool = False
    eval_batch_size: int = 4096
    images: bool = False
    prepare: str | None = None
    metric: str = "accuracy"
    id_parts: Callable[[Any], list] | None = None
    check_run: Callable[[Any], None] | None = None
    benchmark: BenchmarkHooks | None = None

    def __post_init__(self):
        if self.models not in MODEL_KINDS:
            raise ValueError(
                f"models must be one of {', '.join(MODEL_KINDS)}; received {self.models!r}"
            )
        if not dataclasses.is_dataclass(self.task):
            raise ValueError(f"task must be a dataclass; received {self.task!r}")
        if self.metric not in ("accuracy", "mse"):
            raise ValueError(f"metric must be accuracy or mse; received {self.metric!r}")
        if self.benchmark is not None and not isinstance(self.benchmark, BenchmarkHooks):
            raise ValueError(f"benchmark must be a BenchmarkHooks or None; received "
                             f"{type(self.benchmark).__name__}")  # fmt: skip

    def stream(self, input):
        """The generator function for ``input`` (``"tfdata"`` or ``"device"``), imported."""
        if input == "device":
            if self.device is None:
                raise ValueError(f"the {self.name} kind has no device generator (input=tfdata)")
            return resolve(self.device)
        return resolve(self.dataset)

    def prepare_data(self, task, data_dir=None, *, download=True):
        """Prepares the data the task draws from (a no-op for kinds without ``prepare``)."""
        if self.prepare is not None:
            resolve(self.prepare)(task, data_dir, download=download)


_kinds = {}


def register_kind(spec):
    """Registers a ``TaskKind`` by its name; returns it (a module may end with this line)."""
    if not isinstance(spec, TaskKind):
        raise ValueError(f"register_kind takes a TaskKind; received {type(spec).__name__}")
    known = _kinds.get(spec.name)
    if known is not None and known is not spec and known != spec:
        raise ValueError(f"task kind {spec.name!r} is registered already")
    _kinds[spec.name] = spec
    return spec


def kind_names():
    """The registered task kinds (the built-in ones, and yours once registered)."""
    return tuple(k for k in _kinds if not is_reference(k))


def kind(name):
    """The ``TaskKind`` called ``name``, or named by a ``"module:attribute"`` reference.

    Raises:
        ValueError: unknown name, or a reference that does not hold a ``TaskKind``.
    """
    if isinstance(name, TaskKind):
        return name
    if name in _kinds:
        return _kinds[name]
    if not is_reference(name):
        raise ValueError(
            f"kind must be one of {', '.join(kind_names())} or a 'module:attribute' reference "
            f"to a TaskKind; received {name!r}"
        )
    found = resolve(normalise_reference(name))
    if not isinstance(found, TaskKind):
        raise ValueError(f"{name} is not a TaskKind (found {type(found).__name__})")
    _kinds[name] = found
    return found
