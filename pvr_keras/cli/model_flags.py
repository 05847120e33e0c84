"""Flags for a builder's own arguments: ``--model.ARG``, typed from its signature, read from
the source without importing it (a registered model or a reference to yours), and stored in
the run's ``model_kwargs`` (so in its identity).

    python recipes/train.py --model my_nets.py:tiny_gru --model.hidden 64
"""

import ast
import dataclasses
import pathlib

from pvr_keras import files, kinds, registry
from pvr_keras.cli.flags import Field
from pvr_keras.references import MAX_SOURCE_BYTES

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


# What reading a builder's source may raise where Python could not run it either: a default
# no literal can be (``{[1]: 2}``: unhashable), an expression nested deeper than the parser
# or ``ast`` recurses (5,000 unary minus signs), a malformed or undecodable file.
_UNREADABLE = (ValueError, TypeError, SyntaxError, RecursionError, MemoryError)


def _arguments(path, function):
    """``[(name, annotation source or None, default value or MISSING)]`` of a function: a
    default that is not a literal (or cannot be one) is MISSING, an annotation too deep to
    read is None."""
    tree = ast.parse(files.read_plain(path, MAX_SOURCE_BYTES), str(path))
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
            except _UNREADABLE:
                default = dataclasses.MISSING  # not a literal: typed by its annotation only
        try:
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
        except _UNREADABLE:
            annotation = None  # too deep to read: typed by its default only
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
        except (OSError, *_UNREADABLE):
            continue  # not a model here (or no source to read): the run's check says why
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
