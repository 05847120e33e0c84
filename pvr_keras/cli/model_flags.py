"""Flags for a builder's own arguments: ``--model.ARG``, typed from its signature, read from
the source without importing it (a registered model or a reference to yours), and stored in
the run's ``model_kwargs`` (so in its identity).

    python recipes/train.py --model my_nets.py:tiny_gru --model.hidden 64
"""

import ast
import dataclasses
import pathlib

from pvr_keras import kinds, registry
from pvr_keras.cli.flags import Field

PREFIX = "model."
_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


def builder_source(name):
    """``(path, function name)`` of a model's builder (a registered name or a reference)."""
    spec = registry.model_spec(name)
    module, _, function = spec.builder.rpartition(":")
    if module.endswith(".py"):
        return pathlib.Path(module), function
    if module.startswith("pvr_keras.models."):  # without importing the models package
        return registry.MODELS_DIR / (module.rpartition(".")[2] + ".py"), function
    return registry.source_file(module), function  # found without importing any package


def _arguments(path, function):
    """``[(name, annotation source or None, default value or MISSING)]`` of a function."""
    tree = ast.parse(path.read_text(), str(path))
    node = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None
    )  # fmt: skip
    if node is None:
        return []  # not a plain function (a class, an assignment): no flags of its own
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [dataclasses.MISSING] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults, strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    out = []
    for arg, default in pairs:
        if default is None:  # a keyword-only argument without a default
            default = dataclasses.MISSING
        elif default is not dataclasses.MISSING:
            try:
                default = ast.literal_eval(default)
            except ValueError:
                default = dataclasses.MISSING  # not a literal: typed by its annotation only
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
        out.append((arg.arg, annotation, default))
    return out


def _flag_type(annotation, default):
    """A ``Field`` type for a builder argument: ``int``, ``float``, ``str``, ``bool`` or
    ``tuple[X, ...]``, from its annotation, else from its default; ``str`` when neither says."""
    text = (annotation or "").replace(" ", "").replace("|None", "").replace("Optional[", "[")
    for wrapper in ("tuple[", "list[", "Sequence[", "collections.abc.Sequence["):
        if text.startswith(wrapper):
            inner = _TYPES.get(text[len(wrapper) :].split(",")[0].rstrip("]"), str)
            return tuple[inner, ...]
    if text in _TYPES:
        return _TYPES[text]
    if isinstance(default, bool | int | float | str):
        return type(default)
    if isinstance(default, tuple | list):
        return tuple[type(default[0]) if default else int, ...]
    return str


def builder_fields(models, kind):
    """The ``--model.ARG`` flags of every builder of ``models`` (names or references): its
    arguments but those the task supplies (``seq_len``, ``input_shape``, ...), the one
    ``--width`` sets as it is (a CNN's channels) and the Keras ``name``. An argument of
    several builders gets one flag."""
    spec = kinds.kind(kind)
    supplied = set(spec.model_arguments(spec.task()))
    fields = {}
    for name in models:
        try:
            model = registry.model_spec(name)
            path, function = builder_source(name)
            arguments = _arguments(path, function)
        except (ValueError, OSError, SyntaxError):
            continue  # not a model here: the run's check says why, in its words
        skip = supplied | {model.width_arg, "name"}
        for arg, annotation, default in arguments:
            if arg in skip or arg in fields:
                continue
            shown = "" if default is dataclasses.MISSING else f"; the builder's default: {default}"
            fields[arg] = Field(
                PREFIX + arg,
                _flag_type(annotation, default),
                f"{function}'s argument {arg}{shown}",
                flag="--" + PREFIX + arg,
            )
    return list(fields.values())


def split_model_values(values):
    """``(values without model.ARG keys, {ARG: value})``: the builder's arguments given."""
    own = {k[len(PREFIX) :]: v for k, v in values.items() if k.startswith(PREFIX)}
    rest = {k: v for k, v in values.items() if not k.startswith(PREFIX)}
    return rest, own
