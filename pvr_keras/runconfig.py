"""One run config for every task kind: task + model + data + train section + system.

    from pvr_keras.runconfig import Run
    run = Run.make("token", model="mixer", width=0.125, window=2, num_examples=30_000)
    run.window, run.epochs, run.model            # every field by its one flat name
    run.replace(seed=1, epochs=80)               # a new run; fields go to their section
    run.run_id                                   # 'mixer-w2-mod_sum-x0.125-n30000-s0-...'

A run is made of sections, each a small dataclass, and every field has one name across
them (so flags, sweep axes and records use flat names; no field is declared twice):

- ``task``: the kind's task dataclass (``TokenTask``: window, aggregation, pointer, ...);
- ``architecture`` (``ModelSection``): the ``model`` by name or builder reference, its width;
- ``data`` (``DataSection``): training / test set sizes, seed, holdout;
- ``train`` (``TrainRecipe``): optimizer, learning rate, schedule, batch size, epochs;
- ``system`` (``System``): how it runs (backend, devices, input, data dir, tensorboard).

The run's identity (``identity(run)``: what its record stores as its config and its id is a
hash of) is every field but the ``system`` section (a run killed on one machine resumes on
another, with other devices or the other input), where the fields the kind lists in
``TaskKind.identity`` are always there (for the token kind, the fields runs have been recorded
with from the start), every other field only when it differs from the kind's default (so a
field added later, such as ``optimizer`` or ``width``, leaves earlier ids as they were), and
``kind`` unless it is ``token``, the paper's first kind. A run id (``run.run_id``) is a
readable prefix and a hash of the identity (``mlp-w2-mod_sum-n30000-s0-<hash>``): the same
configuration gets the same id on every machine, run and Python version, and any change (one
more epoch) gives another. ``pvr_keras.legacy`` reads runs back from records, of today's
layout and of the layouts written before one run config. Nothing here imports Keras or a
framework, so a whole grid of runs is checked before any work starts.
"""

import contextlib
import dataclasses
import hashlib
import json
from typing import Any

from pvr_keras import kinds, registry
from pvr_keras.checks import (
    MAX_EXAMPLES,
    MAX_SEED,
    check_int,
    check_memory_need,
    is_finite,
    is_integer,
    memory_bytes,
)
from pvr_keras.fields import field
from pvr_keras.hyperparams import OPTIMIZERS, RECIPES, SCHEDULES, TOKEN, VISUAL, TrainRecipe

__all__ = ["OPTIMIZERS", "RECIPES", "SCHEDULES", "TOKEN", "VISUAL", "DataSection", "ModelSection",
           "Run", "System", "TrainRecipe", "default_run", "section_fields"]  # fmt: skip

INPUTS = ("tfdata", "device")
BACKENDS = ("tensorflow", "jax")
MAX_WIDTH = 2**30  # a width scale, or a CNN's base channels (beyond it, counts overflow)
TRAIN_BYTES = 16  # per parameter to train: float32 weights, gradients, two optimizer slots


@dataclasses.dataclass(frozen=True)
class ModelSection:
    """The architecture: a registered name or a builder reference, and its width."""

    model: str = field(
        "architecture: a registered name or a builder 'module:function' / 'file.py:function'",
        default="mlp",
    )
    width: float = field(
        "scale of every model width (1 = the paper's model); a CNN's base channels",
        default=1.0,
    )
    model_kwargs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class DataSection:
    """What the model sees: set sizes, the seed of data and weights, the holdout shift."""

    num_examples: int = field("training set size", default=10_000)
    test_examples: int = field("test set size", default=10_000)
    train_eval_examples: int = field(
        "training examples evaluated after each epoch (the training accuracy)", default=10_000
    )
    seed: int = field("seed of the data, its order and the initial weights", default=0)
    holdout: int = field("holdout-k (Section 6.2); blocks: 1 = Figure 6's shift", default=0)


@dataclasses.dataclass(frozen=True)
class System:
    """How a run executes; never part of its identity (a run resumes under another)."""

    backend: str | None = field(
        "Keras backend (none: KERAS_BACKEND, else the machine's measured-fastest: engines.py)",
        BACKENDS,
        default=None,
    )
    devices: int | None = field(
        "train data-parallel on the first N devices (none: all GPUs, else CPU)", default=None
    )
    input: str | None = field(
        "where batches are made: device (JAX: on the accelerator) or tfdata (none: device on "
        "JAX, tfdata on TensorFlow; the same examples either way)",
        INPUTS,
        default=None,
    )
    data_dir: str | None = field(
        "TFDS data dir (none: TFDS_DATA_DIR, else ~/tensorflow_datasets)", default=None
    )
    download: bool = field("download MNIST / CIFAR-10 on first use if not prepared", default=True)
    tensorboard: bool = field(
        "also log to OUT/tensorboard (view with: tensorboard --logdir OUT)", default=False
    )
    steps_per_execution: int | None = field(
        "training steps per compiled call, the largest divisor of an epoch's steps up to this; "
        "callbacks and the progress bar see the device once per call (none: up to 32; the "
        "same steps and results either way)",
        default=None,
    )
    population: int = field(
        "train a grid's runs of one architecture K at a time as one JAX program (a "
        "population: each run the same as alone; needs the JAX backend); 1: one run after "
        "another",
        default=1,
    )

    def __post_init__(self):
        data_dir = self.data_dir
        if data_dir is not None and (not isinstance(data_dir, str) or not data_dir
                                     or "\0" in data_dir):  # fmt: skip
            raise ValueError(
                f"data_dir must be a folder path (a non-empty string without NUL) or None; "
                f"received {data_dir!r}"
            )
        for name in ("download", "tensorboard"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False; received {getattr(self, name)!r}")
        if self.backend not in (None, *BACKENDS):
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {self.backend!r}")
        if self.input not in (None, *INPUTS):
            raise ValueError(f"input must be one of {', '.join(INPUTS)}; received {self.input!r}")
        if self.devices is not None:
            check_int("devices", self.devices, 1)
        if self.steps_per_execution is not None:
            check_int("steps_per_execution", self.steps_per_execution, 1)
        check_int("population", self.population, 1)
        if self.population > 1 and self.backend not in (None, "jax"):
            raise ValueError(
                f"a population (population={self.population}) trains on JAX; received "
                f"backend {self.backend!r} (give backend jax, or population 1)"
            )


SECTIONS = {
    "architecture": ModelSection, "data": DataSection, "train": TrainRecipe, "system": System
}  # fmt: skip


def section_fields(kind_spec):
    """``{flat field name: section}`` of a kind's runs (``task`` for its task's fields)."""
    owner = {"kind": "kind"}
    for name in (f.name for f in dataclasses.fields(kind_spec.task)):
        owner[name] = "task"
    for section, cls in SECTIONS.items():
        for name in (f.name for f in dataclasses.fields(cls)):
            if name in owner:
                raise ValueError(
                    f"the {kind_spec.name} task's field {name!r} is also a {section} field"
                )
            owner[name] = section
    return owner


@dataclasses.dataclass(frozen=True)
class Run:
    """One training run of any task kind (see the module docstring).

    Build one with ``Run.make(kind, **fields)`` (the kind's defaults, then the fields) and
    change it with ``run.replace(**fields)``; both check the whole run (task, holdout, model
    and kind, sizes, recipe) and raise ``ValueError`` saying what is wrong.
    """

    kind: str
    task: Any
    architecture: ModelSection
    data: DataSection
    train: TrainRecipe
    system: System = System()

    def __post_init__(self):
        # A run made while a record is read (``registry.reading``) stays read: each run
        # replaced from it is rebuilt inside the same gate, so a reference its record named
        # is never imported, nor trusted, by changing a field (another window, say).
        object.__setattr__(self, "_read_from", registry.reading_what())
        spec = kinds.kind(self.kind)
        if not isinstance(self.task, spec.task):
            raise ValueError(
                f"the {spec.name} kind's task is a {spec.task.__name__}; received "
                f"{type(self.task).__name__}"
            )
        for name, cls in SECTIONS.items():
            if not isinstance(getattr(self, name), cls):
                raise ValueError(f"{name} must be a {cls.__name__}")
        data = self.data
        sizes = ("num_examples", "test_examples", "train_eval_examples")
        checked = {n: check_int(n, getattr(data, n), 1, MAX_EXAMPLES + 1) for n in sizes}
        checked["seed"] = check_int("seed", data.seed, 0, MAX_SEED)
        if any(type(getattr(data, n)) is not int for n in checked):  # NumPy ints: as int
            data = dataclasses.replace(data, **checked)
            object.__setattr__(self, "data", data)
        if self.train.curriculum_leap and spec.models != "bits":
            raise ValueError(
                f"the Degree-Curriculum (curriculum_leap={self.train.curriculum_leap}) orders "
                f"examples by their number of -1 bits: it trains kinds whose inputs are bits "
                f"(boolean, gotu); the {spec.name} kind's inputs are {spec.models} inputs"
            )
        holdout = spec.check(self.task, data.holdout)
        if holdout is not data.holdout:
            object.__setattr__(self, "data", dataclasses.replace(data, holdout=holdout))
        if spec.check_run is not None:
            spec.check_run(self)
        self._check_model(spec)

    def _check_model(self, spec):
        section = self.architecture
        name = section.model
        if registry.is_reference(name):
            name = registry.normalise_reference(name)
        model = registry.check_model(name, spec.models)
        if not isinstance(section.model_kwargs, dict):
            raise ValueError(f"model_kwargs must be a dict; received {section.model_kwargs!r}")
        width = section.width
        if isinstance(width, bool) or not is_finite(width) or not width > 0:
            raise ValueError(f"width must be a number > 0; received {width!r}")
        if width > MAX_WIDTH:
            raise ValueError(f"width must be at most {MAX_WIDTH}; received {width!r}")
        if model.width_arg is not None:
            if width != int(width):
                raise ValueError(
                    f"width of {name} is its {model.width_arg} (an integer); received {width}"
                )
            width = int(width)
        else:
            width = float(width)
            scaled = set(section.model_kwargs) & set(model.widths or ())
            if width != 1 and scaled:
                raise ValueError(
                    f"give width (a scale of the paper's widths) or the widths "
                    f"{', '.join(sorted(scaled))} in model_kwargs, not both; received "
                    f"width={width:g}, model_kwargs={section.model_kwargs}"
                )
            if width != 1 and not model.widths and width == spec.defaults.get("width"):
                width = 1.0  # the kind's default width is its default model's, not yours
            if width != 1 and not model.widths:
                raise ValueError(
                    f"{name} declares no widths to scale (register_model(..., widths=...)); "
                    f"received width={width:g}"
                )
        params = registry.estimated_params(model, width)
        memory = memory_bytes()
        if params is not None and memory is not None and params * TRAIN_BYTES > memory:
            raise ValueError(
                f"width {width:g} makes {name} about {params:.2g} parameters, about "
                f"{params * TRAIN_BYTES / 1e9:.0f} GB to train (weights, gradients and "
                f"optimizer state), more than this machine's {memory / 1e9:.0f} GB"
            )
        fixed = dataclasses.replace(section, model=name, width=width)
        if fixed != section or type(fixed.width) is not type(section.width):
            object.__setattr__(self, "architecture", fixed)
        self._check_shape(spec, model, name)

    def _check_shape(self, spec, model, name):
        """What the task's shape adds to training, counted before anything is built: a batch
        of examples drawn (the task's ``example_bytes``, at the larger of the training and
        evaluation batches) and, for a model of tokens, an embedding of every token value and
        a logit of every class (``embedding_width`` floats each, ``TRAIN_BYTES`` a
        parameter): at most half of this machine's memory (a one-line ValueError)."""
        arguments = self.model_arguments()
        batch = max(self.train.batch_size, spec.eval_batch_size or 0)
        drawn = getattr(self.task, "example_bytes", 0) * batch
        values = arguments.get("vocab", 0) + arguments.get("num_classes", 0)
        tables = values * embedding_width(model, arguments) * TRAIN_BYTES
        if drawn + tables:
            shape = ", ".join(f"{k} {arguments[k]:,}" for k in ("seq_len", "vocab", "num_classes")
                              if is_integer(arguments.get(k)))  # fmt: skip
            check_memory_need(
                f"a {self.kind} run of {name} ({shape}; batches of {batch:,} examples drawn, "
                f"a table of every token value and class)", drawn + tables,
                "choose a shorter sequence, fewer values or a smaller batch",
            )  # fmt: skip

    # -- building and changing ----------------------------------------------------------------

    @classmethod
    def make(cls, kind="token", **fields):
        """A run of ``kind`` with the kind's defaults and ``fields`` (flat names)."""
        base = default_run(kind)
        return base.replace(**fields) if fields else base

    def replace(self, **fields):
        """This run with ``fields`` (flat names, any section) replaced; checked."""
        spec = kinds.kind(self.kind)
        owner = section_fields(spec)
        unknown = sorted(set(fields) - set(owner))
        if unknown:
            raise ValueError(
                f"unknown run fields {', '.join(unknown)}; the {spec.name} kind's fields are "
                f"{', '.join(owner)}"
            )
        if "kind" in fields and fields["kind"] != self.kind:
            raise ValueError("a run's kind cannot be replaced: use Run.make(kind, ...)")
        by_section = {}
        for name, value in fields.items():
            if owner[name] != "kind":
                by_section.setdefault(owner[name], {})[name] = value
        read_from = self.__dict__.get("_read_from")
        gate = registry.reading(read_from) if read_from else contextlib.nullcontext()
        with gate:
            changed = {
                section: dataclasses.replace(getattr(self, section), **values)
                for section, values in by_section.items()
            }
            return dataclasses.replace(self, **changed)

    def __getattr__(self, name):
        # Flat access (run.window, run.epochs); only called for names that are not sections.
        if name.startswith("__"):
            raise AttributeError(name)
        for section in ("task", "architecture", "data", "train", "system"):
            try:
                value = object.__getattribute__(self, section)
            except AttributeError:
                break
            if dataclasses.is_dataclass(value) and name in {
                f.name for f in dataclasses.fields(value)
            }:
                return getattr(value, name)
        raise AttributeError(f"a Run has no field {name!r}")

    def flat(self, *, system=True):
        """Every field by its flat name (``system`` fields too unless ``system=False``)."""
        out = {"kind": self.kind}
        for section in ("task", "architecture", "data", "train", *(("system",) if system else ())):
            value = getattr(self, section)
            out.update({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
        return out

    @property
    def spec(self):
        """The run's ``TaskKind``."""
        return kinds.kind(self.kind)

    @property
    def model_spec(self):
        return registry.model_spec(self.model)

    # -- what it trains -------------------------------------------------------------------------

    def recipe(self):
        """The training settings (the ``train`` section)."""
        return self.train

    def model_arguments(self):
        """Keyword arguments of the model builder: the task's (``seq_len``, ``vocab``,
        ``num_classes``; or ``input_shape``, ...), then the width and ``model_kwargs``."""
        spec = self.model_spec
        args = dict(self.spec.model_arguments(self.task))
        if spec.width_arg is not None:
            args[spec.width_arg] = int(self.width)
        elif self.width != 1:
            args.update(registry.width_kwargs(spec, self.width))
        args.update(self.model_kwargs)
        return args

    @property
    def run_id(self):
        """Readable prefix + hash of the identity: stable across machines and versions."""
        return run_id(self)

    def to_dict(self):
        """The run's identity as a JSON-ready dict (``identity``)."""
        return identity(self)

    def train_examples(self):
        """Examples the training passes over: epochs x steps per epoch x batch size."""
        recipe, n = self.train, self.data.num_examples
        return recipe.num_epochs(n) * recipe.steps_per_epoch(n) * recipe.batch_size

    def cost(self):
        """Rough relative cost, for progress estimates: examples trained and evaluated, plus
        a fixed charge per epoch (checkpoint, records) and per run (build, compile)."""
        epochs = self.train.num_epochs(self.data.num_examples)
        evaluated = (
            min(self.data.num_examples, self.data.train_eval_examples)
            + self.data.test_examples
            + 5_000
        )
        return self.train_examples() + epochs * evaluated + 50_000


_DEFAULTS = {}  # kind name -> (TaskKind, its default Run)


def embedding_width(model, arguments):
    """The floats a token model keeps per token value and per class: its embedding width as
    built (``embed_dim`` or ``dim`` among ``arguments``, else the paper's, declared in its
    ``widths``), at least 1 (a model of your own declares none)."""
    paper = model.widths or {}
    for key in ("embed_dim", "dim"):
        found = arguments.get(key, paper.get(key))
        if is_integer(found) and found > 0:
            return int(found)
    return 1


def default_run(kind="token"):
    """The kind's default run: its task's defaults, its recipe, then its ``defaults``."""
    spec = kinds.kind(kind)
    cached = _DEFAULTS.get(kind)
    if cached is None or cached[0] is not spec:
        sections = {"kind": kind, "task": spec.task(), "architecture": ModelSection(),
                    "data": DataSection(), "train": spec.recipe, "system": System()}  # fmt: skip
        owner = section_fields(spec)
        for name, value in spec.defaults.items():
            section = owner[name]
            sections[section] = dataclasses.replace(sections[section], **{name: value})
        _DEFAULTS[kind] = (spec, Run(**sections))
    return _DEFAULTS[kind][1]


# -- identity ---------------------------------------------------------------------------------

ID_HASH_CHARS = 10
FIRST_KIND = "token"


def identity(run):
    """The run's identity as a JSON-ready dict (see the module docstring)."""
    spec = run.spec
    fields = run.flat(system=False)
    default = default_run(run.kind).flat(system=False)
    always = spec.identity if spec.identity is not None else tuple(fields)
    out = {} if run.kind == FIRST_KIND else {"kind": run.kind}
    for name in [*always, *(f for f in fields if f not in always)]:
        if name != "kind" and (name in always or fields[name] != default[name]):
            out[name] = fields[name]
    return json.loads(json.dumps(out))  # tuples become lists, as records read back


def _slug(model):
    """A model's name in a run id: the builder's name for a reference."""
    return model.rpartition(":")[2] if registry.is_reference(model) else model


def run_id(run):
    """Readable prefix + hash of the identity: stable across machines and versions."""
    canonical = json.dumps(identity(run), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:ID_HASH_CHARS]
    spec, model = run.spec, run.architecture
    parts = [] if run.kind == FIRST_KIND else [spec.name]
    parts.append(_slug(model.model))
    parts += spec.id_parts(run) if spec.id_parts else []
    width_arg = registry.model_spec(model.model).width_arg
    if width_arg is not None:
        parts.append(f"{width_arg}{model.width}")
    elif model.width != 1:
        parts.append(f"x{model.width:g}")
    if run.train.optimizer != spec.recipe.optimizer:
        parts.append(run.train.optimizer)
    parts += [f"n{run.data.num_examples}", f"s{run.data.seed}", digest]
    return "-".join(parts)
