"""Flags from dataclasses: one per field of a run's sections (and of a recipe's own fields),
typed from the annotations, with each preset's value in ``--help``."""

import argparse
import dataclasses
import sys
import types
import typing

from pvr_keras import kinds
from pvr_keras.cli.checks import check_task, flag
from pvr_keras.runconfig import SECTIONS

NOT_FLAGS = ("kind", "model_kwargs")  # run fields without a flag (fixed, or a dict)


def _flag_type(tp):
    """argparse ``type``/``nargs`` for a dataclass field annotation."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):  # Optional[X] / X | None
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _flag_type(args[0])
    if origin is tuple:
        return {"type": _ascii_number(typing.get_args(tp)[0]), "nargs": "+"}
    return {"type": _ascii_number(tp)}


def _ascii_number(kind):
    """``int`` / ``float`` that take ASCII digits only (Python's own read a full-width ``５``
    as 5); other types as they are."""
    if kind not in (int, float):
        return kind

    def convert(text):
        if not text.isascii():
            raise ValueError(f"not an ASCII number: {text!r}")
        return kind(text)

    convert.__name__ = kind.__name__  # argparse: "invalid int value: '５'"
    return convert


def _none_or(kind):
    def convert(text):
        return None if text.lower() == "none" else kind(text)

    convert.__name__ = kind.__name__
    return convert


def _show(value):
    if isinstance(value, tuple | list):
        return " ".join(map(str, value)) if value else "(none)"
    if value is None:
        return "none"
    return str(value)


@dataclasses.dataclass(frozen=True)
class Field:
    """One flag: its field's name, annotation, help and choices, and its flag (``--name``,
    unless the field's metadata names another). ``axis``: a run field that takes several
    values, one run each (a grid axis); ``aliases``: older names of the flag, still read."""

    name: str
    type: object
    help: str = ""
    choices: tuple | None = None
    flag: str | None = None
    axis: bool = False
    aliases: tuple = ()


def dataclass_fields(cls, exclude=()):
    """The ``Field`` of every field of a dataclass (flags), but ``exclude``."""
    hints = typing.get_type_hints(cls)
    return [
        Field(
            f.name,
            hints[f.name],
            f.metadata.get("help", ""),
            f.metadata.get("choices"),
            f.metadata.get("flag"),
        )  # fmt: skip
        for f in dataclasses.fields(cls)
        if f.name not in exclude
    ]


def field_of(cls, name, *, default=dataclasses.MISSING, **changes):
    """A recipe field that is field ``name`` of ``cls`` (a run section, a task): its default,
    help and choices, declared once there (``default`` and ``changes`` of its metadata, such
    as ``help`` or ``flag``, replace them). For recipes whose config is not one run
    (analyses, sweeps, searches, the benchmark)."""
    found = next(f for f in dataclasses.fields(cls) if f.name == name)
    if default is not dataclasses.MISSING:
        given = {"default": default}
    elif found.default is not dataclasses.MISSING:
        given = {"default": found.default}
    else:
        given = {"default_factory": found.default_factory}
    metadata = {**found.metadata, **changes, "declared_in": cls.__name__}
    return dataclasses.field(**given, metadata=metadata)


def system_field(name):
    """A recipe field that is the ``system`` section's field ``name`` (its default and help):
    for recipes whose config is not one run (sweeps, searches) yet say how to run."""
    return field_of(SECTIONS["system"], name)


def run_fields(kind, exclude=(), aliases=None):
    """The ``Field`` of every flag of a kind's runs (task, model, data, train, system); a
    field that holds one value (not a tuple) is a grid axis, so ``--seed 0 1`` asks for two
    runs. ``aliases``: ``{older flag: field}``, read as the field's flag."""
    spec = kinds.kind(kind)
    out = dataclass_fields(spec.task, exclude)
    for cls in SECTIONS.values():
        out += dataclass_fields(cls, (*NOT_FLAGS, *exclude))
    named = {}
    for old, name in (aliases or {}).items():
        named.setdefault(name, []).append(old)
    return [
        dataclasses.replace(f, axis=_holds_one(f.type), aliases=tuple(named.get(f.name, ())))
        for f in out
    ]


def _holds_one(tp):
    """A field holding one value (not a tuple of values)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    return typing.get_origin(tp) is not tuple and tp is not tuple


def build_parser(fields, preset_values, description=None, *, add_help=True, extra=None):
    """An ``ArgumentParser`` with ``--preset`` and one flag per ``Field``; each flag's help
    ends with its value in every preset (``(quick: 20; paper: 200)``), or
    ``(default: X)`` when they agree. ``extra``: ``parser -> None``, adds more flags (the
    launcher's group)."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=add_help,
    )  # fmt: skip
    presets = list(preset_values)
    parser.add_argument(
        "--preset", choices=presets, default=presets[0],
        help=f"named set of defaults (default: {presets[0]})",
    )  # fmt: skip
    for field in fields:
        shown = {name: _show(values.get(field.name)) for name, values in preset_values.items()}
        if len(set(shown.values())) == 1:
            note = f"(default: {next(iter(shown.values()))})"
        else:
            note = "(" + "; ".join(f"{name}: {value}" for name, value in shown.items()) + ")"
        text = f"{field.help} {note}" if field.help else note
        names = (field.flag or flag(field.name), *field.aliases)
        if field.type is bool:
            parser.add_argument(
                *names, action=argparse.BooleanOptionalAction, default=None, help=text,
                dest=field.name,
            )  # fmt: skip
            continue
        spec = _flag_type(field.type)
        if type(None) in typing.get_args(field.type):
            spec["type"] = _none_or(spec["type"])
        if field.choices:
            spec["choices"] = field.choices
        if field.axis:
            spec["nargs"] = "+"
            spec["metavar"] = field.name.upper().replace(".", "_")
            text += " (several values: one run each)"
        parser.add_argument(*names, default=None, help=text, dest=field.name, **spec)
    if extra is not None:
        extra(parser)
    return parser


def given_flags(parser, args, fields):
    """``{field: value}`` of the flags given (tuples for lists; ``--x none`` is None)."""
    given = {}
    for field in fields:
        value = getattr(args, field.name)
        if isinstance(value, list):
            if None in value and len(value) > 1:
                parser.error(f"{flag(field.name)}: none must stand alone")
            if field.axis and len(value) == 1:
                given[field.name] = value[0]
            else:
                given[field.name] = None if value == [None] else tuple(value)
        elif value is not None:
            given[field.name] = value
    return given


def defaults_of(cls):
    """``{field: default}`` of a dataclass's fields that have one."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def parse_flags(fields, presets, argv, description=None, defaults=None, more=None, extra=None):
    """``(preset name, values, given)``: ``values`` are ``defaults``, then the chosen
    preset's values, then the given flags (``given``). ``presets``: ``{name: function(given
    flags) -> {field: value}}``. ``more``: ``values -> [Field]``, flags that depend on the
    values so far (a model's own arguments depend on ``--model``). ``extra``: adds flags
    to the parser that are read elsewhere (``build_parser``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # First pass (no --help): which flags were given, for presets that depend on them.
    quiet = build_parser(fields, {name: {} for name in presets}, add_help=False)
    known, _ = quiet.parse_known_args(argv)
    early = given_flags(quiet, known, fields)
    values = {name: {**(defaults or {}), **preset(early)} for name, preset in presets.items()}
    if more is not None:
        fields = [*fields, *more({**values[known.preset], **early})]
    parser = build_parser(fields, values, description, extra=extra)
    args = parser.parse_args(argv)
    given = given_flags(parser, args, fields)
    trust_given(given)
    return args.preset, {**values[args.preset], **given}, given


# The run fields that may name code of yours by reference ('module:name', 'file.py:name').
REFERENCE_FIELDS = ("model", "kind", "aggregation")


def trust_given(given):
    """Every builder or kind reference given on the command line is the user's own code:
    a run folder naming it may import it (``registry.trust``; reading records imports no
    other code)."""
    from pvr_keras import registry

    for name, value in given.items():
        if name not in REFERENCE_FIELDS:  # other text may hold ':' (--domain any_of:0,1)
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and registry.is_reference(item):
                registry.trust(item)


def trust_flags(parser):
    """``--trust-code`` and ``--trust-module`` of a tool that loads finished runs: what it
    may import of the code a run names (``trust_modules`` applies the second)."""
    parser.add_argument(
        "--trust-code",
        action="store_true",
        help="import the builder or task kind file a run names by path, only if its bytes "
        "have the SHA-256 the run recorded (checked on the bytes that run); without it a run "
        "naming code of its own is refused",
    )
    parser.add_argument(
        "--trust-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import this module (pkg.nets) when a run names code in it; --trust-code covers "
        "files only (repeat for several modules)",
    )


def trust_modules(modules):
    """Marks each module named by ``--trust-module`` as the user's (``registry.trust_module``);
    one that cannot be found is a ``ConfigError``."""
    from pvr_keras import registry
    from pvr_keras.errors import ConfigError

    for module in modules:
        try:
            registry.trust_module(module)
        except ValueError as error:
            raise ConfigError(f"--trust-module: {error}") from None


def out_field(template):
    """A recipe's ``--out`` field: a folder whose ``{field}`` placeholders are filled in from
    the run (``Command.out_folder``)."""
    return dataclasses.field(
        default=template, metadata={"help": "output folder ({field} placeholders are filled in)"}
    )


def kind_first(argv=None, default="token"):
    """The ``--kind`` of a command line whose other flags depend on it (``train.py``,
    ``tune.py``), read first and checked: a registered kind or a reference to yours."""
    argv = sys.argv[1:] if argv is None else list(argv)
    peek = argparse.ArgumentParser(add_help=False)
    peek.add_argument("--kind", default=default)
    known, _ = peek.parse_known_args(argv)

    def check():
        kinds.kind(known.kind)
        return known.kind

    return check_task(check)
