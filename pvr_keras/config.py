"""Typed recipe configs: a dataclass, named presets, and command-line flags generated from it.

A recipe declares ``@dataclasses.dataclass class Config`` with its defaults, a dict of presets
(``{"quick": Config(...), "paper": Config(...)}``), and calls ``parse(Config, PRESETS)``. Every
field becomes a flag (``num_examples`` -> ``--num-examples``; booleans get ``--x/--no-x``);
flags given on the command line override the chosen preset (``--preset``, default ``quick``).
``--help`` shows each preset's value of every flag.

The parsed config is validated before TensorFlow is imported or any file is written: every
float must be finite, and a Config's ``validate()`` method (if it has one) checks the rest,
raising ``ConfigError``. ``run(main)`` is a recipe's entry point: a ``ConfigError`` is a usage
error (exit status 2), a run that finished but failed by the paper's rule exits with status
``FAILED_RUN`` (3), so that scripts can tell it from a crash (1).
"""

import argparse
import dataclasses
import json
import math
import os
import pathlib
import sys
import types
import typing

from pvr_keras.errors import ConfigError, DataNotPrepared  # noqa: E402
from pvr_keras.files import atomic_write_text
from pvr_keras.training.recipe import VISUAL


def check_ints(cfg, names, minimum):
    """Each of ``names`` must be an integer >= ``minimum`` (``None`` allowed if the field is
    optional and holds None)."""
    for name in names:
        value = getattr(cfg, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"{_flag(name)} must be an integer >= {minimum}; received {value!r}")


def check_positive(cfg, names):
    """Each of ``names`` must be a number > 0 (finite; None allowed where optional)."""
    for name in names:
        value = getattr(cfg, name)
        if value is not None and not value > 0:
            raise ConfigError(f"{_flag(name)} must be > 0; received {value!r}")


def check_range(cfg, name, low, high, *, low_open=False):
    """``low <= value <= high`` (``low < value`` with ``low_open``)."""
    value = getattr(cfg, name)
    if not (low < value if low_open else low <= value) or not value <= high:
        bracket = "(" if low_open else "["
        raise ConfigError(f"{_flag(name)} must be in {bracket}{low}, {high}]; received {value!r}")


def check_task(build):
    """Runs ``build()`` (e.g. constructing a ``TokenTask``) and turns its ValueError into a
    ConfigError."""
    try:
        return build()
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _flag(name):
    return "--" + name.replace("_", "-")


def validate(cfg):
    """Checks ``cfg``: every float field finite, then ``cfg.validate()`` if defined."""
    for field in dataclasses.fields(cfg):
        value = getattr(cfg, field.name)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{_flag(field.name)} must be a finite number; received {v}")
        if isinstance(value, tuple) and not value:
            raise ConfigError(f"{_flag(field.name)} needs at least one value")
    if hasattr(cfg, "validate"):
        cfg.validate()
    check_tensorboard(cfg)
    return cfg


def _flag_type(tp):
    """argparse ``type``/``nargs`` for a dataclass field annotation."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):  # Optional[X] / X | None
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _flag_type(args[0])
    if origin is tuple:
        return {"type": typing.get_args(tp)[0], "nargs": "+"}
    return {"type": tp}


def _none_or(kind):
    def convert(text):
        return None if text.lower() == "none" else kind(text)

    convert.__name__ = kind.__name__
    return convert


def _show(value):
    if isinstance(value, tuple):
        return " ".join(map(str, value)) if value else "(none)"
    if value is None:
        return "none"
    return str(value)


def _default_note(field, presets):
    shown = {name: _show(getattr(preset, field.name)) for name, preset in presets.items()}
    if len(set(shown.values())) == 1:
        return f"(default: {next(iter(shown.values()))})"
    return "(" + "; ".join(f"{name}: {value}" for name, value in shown.items()) + ")"


def build_parser(config_cls, presets, description=None):
    """An ``argparse.ArgumentParser`` with ``--preset`` and one flag per field of ``config_cls``.

    Each flag's help ends with its value in every preset (``(quick: 20; paper: 200)``), or
    ``(default: X)`` when the presets agree.
    """
    # Raw description: the recipes' docstrings lay out commands line by line. No
    # ArgumentDefaultsHelpFormatter: field flags default to None (meaning "the preset's").
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--preset",
        choices=list(presets),
        default="quick",
        help="named set of defaults (default: quick)",
    )
    hints = typing.get_type_hints(config_cls)
    for field in dataclasses.fields(config_cls):
        flag = _flag(field.name)
        help_text = field.metadata.get("help", "")
        note = _default_note(field, presets)
        help_text = f"{help_text} {note}" if help_text else note
        tp = hints[field.name]
        if tp is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
            continue
        spec = _flag_type(tp)
        optional = type(None) in typing.get_args(tp)
        if optional:
            spec["type"] = _none_or(spec["type"])
        if "choices" in field.metadata:
            spec["choices"] = field.metadata["choices"]
        parser.add_argument(flag, default=None, help=help_text, **spec)
    return parser


def parse(config_cls, presets, argv=None, description=None):
    """Parses ``argv`` into a validated ``config_cls``: the chosen preset with the given flags
    replaced.

    Raises:
        ConfigError: a value the recipe cannot run with (see ``validate``).

    Example:
        >>> @dataclasses.dataclass
        ... class C:
        ...     epochs: int = 1
        >>> parse(C, {"quick": C(), "paper": C(epochs=200)}, ["--preset", "paper"]).epochs
        200
    """
    parser = build_parser(config_cls, presets, description)
    args = parser.parse_args(argv)
    overrides = {}
    for field in dataclasses.fields(config_cls):
        value = getattr(args, field.name)
        if isinstance(value, list):  # a tuple field; "--widths none" is None, not (None,)
            if None in value and len(value) > 1:
                parser.error(f"--{field.name.replace('_', '-')}: none must stand alone")
            overrides[field.name] = None if value == [None] else tuple(value)
        elif value is not None:
            overrides[field.name] = value
    try:
        cfg = dataclasses.replace(presets[args.preset], **overrides)
    except ValueError as err:  # a Config's own __post_init__ check
        raise ConfigError(str(err)) from None
    return validate(cfg)


def format_out(cfg):
    """``cfg.out`` with its ``{field}`` placeholders filled in from ``cfg``."""
    try:
        return cfg.out.format(**dataclasses.asdict(cfg))
    except (KeyError, IndexError, ValueError) as err:
        fields = ", ".join(f.name for f in dataclasses.fields(cfg))
        raise ConfigError(
            f"--out {cfg.out!r} names a placeholder that is not a field ({err}); fields: {fields}"
        ) from None


def start(cfg):
    """Prepares the process for a recipe's work, after its config is validated: the Keras
    backend from ``cfg.backend`` (if set), and TensorFlow imported without its C++ start-up
    INFO / WARNING lines (``TF_CPP_MIN_LOG_LEVEL`` below 2 keeps them)."""
    backend = getattr(cfg, "backend", None)
    if backend:
        os.environ["KERAS_BACKEND"] = backend
    from pvr_keras import compat

    compat.import_tensorflow_quietly()


FAILED_RUN = 3  # exit status of a run that finished but failed by the paper's rule


def exit_status(result):
    """0, or ``FAILED_RUN`` when ``result`` (a run record or a recipe's summary dict) says
    the run failed."""
    return FAILED_RUN if isinstance(result, dict) and result.get("failed") else 0


def run(main):
    """A recipe's ``__main__``: runs ``main()`` and exits 0 (done), 2 (a bad config, or image
    data that is not prepared and cannot be downloaded) or
    ``FAILED_RUN`` = 3 (the run finished but failed by the paper's rule: NaN loss, or final
    training accuracy below the threshold); a crash exits 1 as any Python program does."""
    try:
        result = main()
    except (ConfigError, DataNotPrepared) as err:
        print(f"{pathlib.Path(sys.argv[0]).name}: error: {err}", file=sys.stderr)
        sys.exit(2)
    sys.exit(exit_status(result))


def peek(argv, field, default):
    """The value of one flag in ``argv`` (or ``default``), before the full parse.

    Lets a recipe choose presets that depend on one field (e.g. per-model quick presets).
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--" + field.replace("_", "-"), default=default)
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    return getattr(known, field)


def backend_field():
    """The ``backend`` field of a recipe's Config (``--backend tensorflow|jax``)."""
    return dataclasses.field(
        default=None,
        metadata={
            "choices": ("tensorflow", "jax"),
            "help": "Keras backend (none: KERAS_BACKEND, else Keras's default)",
        },
    )


def tensorboard_field():
    """The ``tensorboard`` field of a training recipe's Config (``--tensorboard``)."""
    return dataclasses.field(
        default=False,
        metadata={"help": "also log to OUT/tensorboard (view with: tensorboard --logdir OUT)"},
    )


def check_tensorboard(cfg):
    """``--tensorboard`` needs the tensorboard package: a ConfigError naming the extra if not."""
    import importlib.util

    if getattr(cfg, "tensorboard", False) and importlib.util.find_spec("tensorboard") is None:
        raise ConfigError(
            '--tensorboard needs the tensorboard package: pip install -e ".[tensorboard]"'
        )


def callbacks(cfg, out):
    """The Keras callbacks a recipe's flags ask for (``--tensorboard``)."""
    if not getattr(cfg, "tensorboard", False):
        return []
    import keras

    return [keras.callbacks.TensorBoard(log_dir=str(pathlib.Path(out) / "tensorboard"))]


def devices_field():
    """The ``devices`` field of a training recipe's Config (``--devices N``).

    A run's results do not depend on it (the global batch is the recipe's), so recipes leave
    it out of the run record's config: a run killed on N devices may resume on M.
    """
    return dataclasses.field(
        default=None,
        metadata={"help": "train data-parallel on the first N devices (none: all GPUs, else CPU)"},
    )


@dataclasses.dataclass(frozen=True)
class VisualConfig:
    """The fields every visual recipe's Config shares (``block_iid``, ``block_holdout``,
    ``image_sequence``), at the paper's visual recipe (Appendix A: Adam 1e-4, batch 50, 10
    epochs, constant rate; 60,000 training and 10,000 test examples). A recipe subclasses it
    and adds its task and model fields and its ``out``.
    """

    num_examples: int = dataclasses.field(default=60_000, metadata={"help": "training set size"})
    test_examples: int = dataclasses.field(default=10_000, metadata={"help": "test set size"})
    train_eval_examples: int = dataclasses.field(
        default=10_000, metadata={"help": "training examples evaluated after each epoch"}
    )
    epochs: int = VISUAL.epochs  # the paper's visual recipe, training.VISUAL
    batch_size: int = VISUAL.batch_size
    learning_rate: float = dataclasses.field(
        default=VISUAL.learning_rate, metadata={"help": "Adam step size"}
    )
    schedule: str = dataclasses.field(
        default=VISUAL.schedule,
        metadata={"choices": ("constant", "cosine"), "help": "learning rate: constant or cosine"},
    )
    seed: int = 0
    data_dir: str | None = dataclasses.field(
        default=None,
        metadata={"help": "TFDS data dir (none: TFDS_DATA_DIR, else ~/tensorflow_datasets)"},
    )
    backend: str | None = backend_field()
    devices: int | None = devices_field()
    tensorboard: bool = tensorboard_field()
    input: str | None = dataclasses.field(
        default=None,
        metadata={
            "choices": ("device", "tfdata"),
            "help": "batches made on the JAX device or by tf.data (none: device on JAX)",
        },
    )
    download: bool = dataclasses.field(
        default=True,
        metadata={"help": "download MNIST / CIFAR-10 on first use if not prepared"},
    )

    def validate(self):
        check_ints(self, ("num_examples", "test_examples", "train_eval_examples"), 1)
        check_ints(self, ("epochs", "batch_size", "devices"), 1)
        check_ints(self, ("seed",), 0)
        check_positive(self, ("learning_rate",))


@dataclasses.dataclass(frozen=True)
class BlockConfig(VisualConfig):
    """The fields of a 2x2 block-style run (``block_iid.py``, ``block_holdout.py``): the
    visual training fields, the CNN and its width, and the images of the value cells. A
    recipe subclasses it and adds its ``out`` (and whatever else it needs)."""

    model: str = dataclasses.field(
        default="resnet18", metadata={"choices": ("resnet18", "vgg11_bn"), "help": "architecture"}
    )
    values: str = dataclasses.field(
        default="mnist",
        metadata={"choices": ("mnist", "cifar10"), "help": "images of the value cells"},
    )
    width: int = dataclasses.field(
        default=64, metadata={"help": "base channels of the CNN (torchvision: 64)"}
    )

    def task(self):
        from pvr_keras.tasks import BlockTask

        return BlockTask(values=self.values)

    def validate(self):
        super().validate()
        check_ints(self, ("width",), 1)
        check_task(self.task)
        if hasattr(self, "out"):
            check_task(lambda: format_out(self))


def block_presets(config_cls):
    """The block recipes' presets as ``config_cls`` instances (its own ``out`` default).

    ``paper``: ResNet18 at torchvision width 64, the paper's visual recipe (Adam 1e-4, batch
    50, 10 epochs, constant rate), 60,000 / 10,000 examples. ``medium`` (Figure 7 in
    docs/results): width 16, 60,000 / 10,000, 5 epochs of Adam 2e-3 with cosine decay.
    ``quick`` (minutes on a 2-core CPU): width 8, 25,000 / 2,000, 5 epochs of Adam 2e-3 with
    cosine decay. ``block_iid.py`` and ``block_holdout.py`` share them, so that a block_iid
    run can stand in for block_holdout's IID model.
    """
    paper = config_cls()
    quick = dataclasses.replace(
        paper, width=8, num_examples=25_000, test_examples=2_000, train_eval_examples=2_000,
        epochs=5, learning_rate=2e-3, schedule="cosine",
    )  # fmt: skip
    medium = dataclasses.replace(
        paper, width=16, train_eval_examples=5_000, epochs=5, learning_rate=2e-3,
        schedule="cosine",
    )  # fmt: skip
    return {"quick": quick, "medium": medium, "paper": paper}


# Fields that say how a run executes, not what it computes: a run killed on N devices may
# resume on M, a run that downloaded its data may resume with --no-download, one fed from
# tf.data may resume from device input (the same examples).
HOW_FIELDS = ("devices", "download", "tensorboard", "input")


def block_run_fields():
    """The fields of a ``BlockConfig`` that describe the run (``block_holdout.py --iid-run``
    reuses a finished block_iid run when they agree)."""
    return tuple(
        f.name
        for f in dataclasses.fields(BlockConfig)
        if f.name not in ("data_dir", "backend", *HOW_FIELDS)
    )


def identity(config, *more):
    """The run-defining part of a config, as recorded in its run record: ``to_dict`` without
    ``HOW_FIELDS`` and the fields ``more`` (e.g. ``"out"``)."""
    return {k: v for k, v in to_dict(config).items() if k not in HOW_FIELDS + more}


def to_dict(config):
    """A JSON-ready dict of a config (tuples become lists, paths strings)."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def write(config, out_dir, name="config.json", *, may_differ=HOW_FIELDS):
    """Writes the resolved config as JSON into ``out_dir`` (atomically); returns the path.

    A folder that already holds a config of another run is refused, and left untouched.

    Raises:
        ConfigError: ``out_dir/name`` holds another config (fields other than
            ``may_differ``, by default ``HOW_FIELDS``).
    """
    path = pathlib.Path(out_dir) / name
    new = to_dict(config)
    if path.exists():
        old = json.loads(path.read_text())
        differ = {
            k: (old.get(k), new.get(k))
            for k in sorted(set(old) | set(new))
            if k not in may_differ and old.get(k) != new.get(k)
        }
        if differ:
            shown = ", ".join(f"{k}: {a!r} there, {b!r} asked" for k, (a, b) in differ.items())
            raise ConfigError(
                f"{out_dir} holds a run of another configuration ({shown}); use another "
                f"--out or delete that folder"
            )
        if old == new:
            return path
    atomic_write_text(path, json.dumps(new, indent=2) + "\n")
    return path
