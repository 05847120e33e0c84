"""Typed recipe configs: a dataclass, named presets, and command-line flags generated from it.

A recipe declares ``@dataclasses.dataclass class Config`` with its defaults, a dict of presets
(``{"quick": Config(...), "paper": Config(...)}``), and calls ``parse(Config, PRESETS)``. Every
field becomes a flag (``num_examples`` -> ``--num-examples``; booleans get ``--x/--no-x``);
flags given on the command line override the chosen preset (``--preset``, default ``quick``).
"""

import argparse
import dataclasses
import json
import pathlib
import sys
import types
import typing


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


def build_parser(config_cls, presets, description=None):
    """An ``argparse.ArgumentParser`` with ``--preset`` and one flag per field of ``config_cls``."""
    # Raw description: the recipes' docstrings lay out commands line by line. No
    # ArgumentDefaultsHelpFormatter: field flags default to None (meaning "the preset's").
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--preset",
        choices=sorted(presets),
        default="quick",
        help="named set of defaults (default: quick)",
    )
    hints = typing.get_type_hints(config_cls)
    for field in dataclasses.fields(config_cls):
        flag = "--" + field.name.replace("_", "-")
        help_text = field.metadata.get("help", "")
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
        parser.add_argument(
            flag, default=None, help=help_text + " (default: from --preset)", **spec
        )
    return parser


def parse(config_cls, presets, argv=None, description=None):
    """Parses ``argv`` into a ``config_cls``: the chosen preset with the given flags replaced.

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
            value = None if value == [None] else tuple(value)
            overrides[field.name] = value
        elif value is not None:
            overrides[field.name] = value
    return dataclasses.replace(presets[args.preset], **overrides)


def peek(argv, field, default):
    """The value of one flag in ``argv`` (or ``default``), before the full parse.

    Lets a recipe choose presets that depend on one field (e.g. per-model quick presets).
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--" + field.replace("_", "-"), default=default)
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    return getattr(known, field)


def devices_field():
    """The ``devices`` field of a training recipe's Config (``--devices N``).

    A run's results do not depend on it (the global batch is the recipe's), so recipes leave
    it out of the run record's config: a run killed on N devices may resume on M.
    """
    return dataclasses.field(
        default=None,
        metadata={
            "help": "train data-parallel on the first N devices (default: all GPUs, else CPU)"
        },
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
    epochs: int = 10
    batch_size: int = 50
    learning_rate: float = dataclasses.field(default=1e-4, metadata={"help": "Adam step size"})
    schedule: str = dataclasses.field(
        default="constant",
        metadata={"choices": ("constant", "cosine"), "help": "learning rate: constant or cosine"},
    )
    seed: int = 0
    data_dir: str | None = dataclasses.field(
        default=None, metadata={"help": "prepared TFDS data dir (default: TFDS_DATA_DIR)"}
    )
    backend: str | None = dataclasses.field(
        default=None, metadata={"help": "tensorflow or jax (default: KERAS_BACKEND)"}
    )
    devices: int | None = devices_field()


def to_dict(config):
    """A JSON-ready dict of a config (tuples become lists, paths strings)."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def write(config, out_dir, name="config.json"):
    """Writes the resolved config as JSON into ``out_dir``; returns the path."""
    path = pathlib.Path(out_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_dict(config), indent=2) + "\n")
    return path
