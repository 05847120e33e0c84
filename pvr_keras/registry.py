"""Models by name, or by reference to a researcher's own code.

Models. Each model file in ``pvr_keras/models/`` registers its builder with a decorator::

    @register_model("mlp", kind="token", params=1_445_194,
                    widths={"embed_dim": 64, "widths": (512, 1024, 512, 64)})
    def mlp(*, seq_len=11, vocab=10, num_classes=10, ...): ...

``kind`` says what the model takes (``token``: int tokens; ``image``: images; ``sequence``:
image sequences; ``bits``: +/-1 bits), ``params`` the paper's parameter count, ``widths`` the
paper's width arguments that ``--width`` scales (``width_arg``: a builder argument that
``--width`` sets instead, e.g. a CNN's base channels). The table of built-in models is read
from those decorators in the source (``ast``), so it is listed without importing Keras, a
framework or any model file: flag choices and config checks run before TensorFlow loads.

Wherever a model name is accepted, so is a reference to a builder of your own:
``"my_pkg.nets:tiny_net"`` (an importable module) or ``"path/to/nets.py:tiny_net"`` (a file).
The builder is called with the task's arguments (token models: ``seq_len``, ``vocab``,
``num_classes``; image models: ``input_shape``, ``num_classes``) and returns a Keras model.
Decorated with ``register_model`` it may declare its kind and widths too.

Task kinds have a registry of their own, ``pvr_keras.kinds``. Finding and importing any
``"module:name"`` / ``"file.py:name"`` reference (models, kinds, generators), and the trust
rule for code a record names, live in ``pvr_keras.references``; its names are importable from
here too (``registry.resolve``, ``registry.trust``, ...).

    >>> sorted(model_names("token"))
    ['mixer', 'mlp', 'mlp2x', 'transformer']
    >>> model_spec("mixer").params
    8495674
"""

import ast
import dataclasses
import functools
import pathlib

from pvr_keras import files
from pvr_keras.checks import memory_bytes  # noqa: F401  (runconfig reads it here)
from pvr_keras.references import (  # noqa: F401  (registry.X keeps working for each)
    check_reference,
    defined_names,
    file_of,
    find_reference,
    is_reading,
    is_reference,
    is_trusted,
    load_module,
    loaded_sha256,
    normalise_reference,
    reading,
    reading_what,
    remember_source,
    resolve,
    source_file,
    split_reference,
    trust,
    trust_file,
    trust_module,
    trust_named,
)

MODEL_KINDS = ("token", "image", "sequence", "bits")
MODELS_DIR = pathlib.Path(__file__).resolve().parent / "models"


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A model builder and what it declares about itself.

    Attributes:
        name: the registered name, or the reference it was found by.
        builder: ``"module:function"``, or ``"path/to/file.py:function"``.
        kind: what the model takes (``MODEL_KINDS``); None: not declared (any task).
        params: the paper's parameter count (None: not from the paper).
        widths: the paper's width arguments, scaled by ``--width`` (``width_kwargs``).
        width_arg: a builder argument that ``--width`` sets as it is (CNNs: base channels).
        width_multiple: scaled widths round to a multiple of this (attention heads).
    """

    name: str
    builder: str
    kind: str | None = None
    params: int | None = None
    widths: dict | None = None
    width_arg: str | None = None
    width_multiple: int = 1

    @property
    def is_reference(self):
        return ":" in self.name


# ---------------------------------------------------------------------------------------------
# Models


_registered = {}  # name -> ModelSpec, filled as model files are imported


def register_model(name, *, kind, params=None, widths=None, width_arg=None, width_multiple=1):
    """Decorator: registers a model builder under ``name``.

    Built-in model files use literal arguments only (the registry reads them from the source
    without importing the file). A builder of your own may use it too, to declare its kind
    and widths; it is still found by reference (``"my_pkg.nets:tiny_net"``).

    Raises:
        ValueError: an unknown kind, or ``name`` is a built-in model's.
    """
    _check_declaration(name, kind, params, widths, width_arg, width_multiple)

    def decorate(builder):
        spec = ModelSpec(
            name=name,
            builder=f"{builder.__module__}:{builder.__qualname__}",
            kind=kind,
            params=params,
            widths=_freeze(widths),
            width_arg=width_arg,
            width_multiple=width_multiple,
        )
        builtin = builtin_models().get(name)  # yours loaded again (another path): the last wins
        if builtin is not None and builtin.builder != spec.builder:
            raise ValueError(
                f"model {name!r} is the library's, by {builtin.builder}: pick a new name"
            )
        _registered[name] = spec
        builder.model_spec = spec
        return builder

    return decorate


def _freeze(widths):
    """Width dicts with tuples (as the source writes them), whatever sequence was given."""
    if widths is None:
        return None
    return {k: tuple(v) if isinstance(v, list | tuple) else v for k, v in widths.items()}


def _decorator_calls(tree):
    """(function name, decorator Call) of every function decorated with register_model."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            func = getattr(decorator, "func", None)
            called = getattr(func, "id", None) or getattr(func, "attr", None)
            if isinstance(decorator, ast.Call) and called == "register_model":
                yield node.name, decorator


def _check_declaration(name, kind, params, widths, width_arg, width_multiple, where=""):
    """What ``register_model`` declares, checked (``where``: the file it was read from)."""

    def refuse(what):
        raise ValueError(f"{where}register_model: {what}")

    def size(value):
        return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 40

    if not isinstance(name, str) or not name or len(name) > 200:
        refuse(f"the model's name must be a non-empty string; received {name!r:.80}")
    if kind not in MODEL_KINDS:
        refuse(f"kind must be one of {', '.join(MODEL_KINDS)}; received {kind!r:.80}")
    if params is not None and not size(params):
        refuse(f"params must be a positive integer (the paper's count); received {params!r:.80}")
    if widths is not None and (
        not isinstance(widths, dict)
        or not all(isinstance(k, str) for k in widths)
        or not all(
            size(v) or isinstance(v, list | tuple) and v and all(map(size, v))
            for v in widths.values()
        )  # fmt: skip
    ):
        refuse(f"widths must map argument names to positive integers or tuples of them; "
               f"received {widths!r:.80}")  # fmt: skip
    if width_arg is not None and not (isinstance(width_arg, str) and width_arg.isidentifier()):
        refuse(f"width_arg must be an argument's name; received {width_arg!r:.80}")
    if not size(width_multiple):
        refuse(f"width_multiple must be a positive integer; received {width_multiple!r:.80}")


_DECLARED = ("name", "kind", "params", "widths", "width_arg", "width_multiple")


def _spec_from_call(function, call, module, name=None, where=""):
    """The ``ModelSpec`` a ``register_model(...)`` decorator in a source file declares, its
    arguments read as literals and checked as ``register_model`` checks them (``ValueError``
    naming ``where``, the file, for anything else)."""
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise ValueError(
            f"{where}register_model takes literal arguments only (the library reads them "
            f"without running the file)"
        ) from None
    if (
        len(args) > 1
        or None in kwargs
        or set(kwargs) - set(_DECLARED)
        or (args and "name" in kwargs)
    ):
        raise ValueError(
            f"{where}register_model takes a name and the keywords "
            f"{', '.join(_DECLARED[1:])}; received {len(args)} positional and "
            f"{sorted(k for k in kwargs if k)}"
        )
    registered = args[0] if args else kwargs.pop("name", None)
    _check_declaration(
        registered, kwargs.get("kind"), kwargs.get("params"), kwargs.get("widths"),
        kwargs.get("width_arg"), kwargs.get("width_multiple", 1), where,
    )  # fmt: skip
    return ModelSpec(
        name=name or registered,
        builder=f"{module}:{function}",
        kind=kwargs["kind"],
        params=kwargs.get("params"),
        widths=_freeze(kwargs.get("widths")),
        width_arg=kwargs.get("width_arg"),
        width_multiple=kwargs.get("width_multiple", 1),
    )


@functools.cache
def builtin_models():
    """``{name: ModelSpec}`` of the library's models, read from the decorators in
    ``pvr_keras/models/*.py`` (no import of Keras or of the model files)."""
    found = {}
    for path in sorted(MODELS_DIR.glob("*.py")):
        tree = ast.parse(files.read_plain(path), str(path))
        for function, call in _decorator_calls(tree):
            spec = _spec_from_call(function, call, f"pvr_keras.models.{path.stem}")
            found[spec.name] = spec
    return dict(sorted(found.items(), key=lambda item: _ORDER.get(item[0], len(_ORDER))))


# The paper's order (Table 1, then the CNNs), for listings and messages.
_ORDER = {name: i for i, name in enumerate(
    ("mlp", "mlp2x", "transformer", "mixer", "resnet18", "vgg11_bn", "image_sequence")
)}  # fmt: skip


def model_names(kind=None):
    """Names of the built-in models, in the paper's order; only those of ``kind`` if given."""
    return tuple(n for n, s in builtin_models().items() if kind is None or s.kind == kind)


def model_spec(name):
    """The ``ModelSpec`` of a built-in name or of a builder reference (checked, not imported).

    Raises:
        ValueError: an unknown name, or a reference whose module, file or function is not
            there.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"model must be a name or a 'module:function' reference; got {name!r}")
    if not is_reference(name):
        builtin = builtin_models()
        if name not in builtin:
            raise ValueError(
                f"model must be one of {', '.join(builtin)} or a builder reference "
                f"('my_pkg.nets:builder' or 'path/to/file.py:builder'); received {name!r}"
            )
        return builtin[name]
    ref, module, tree = find_reference(name, "model")
    attr = split_reference(ref)[1]
    for function, call in _decorator_calls(tree):
        if function == attr:
            return _spec_from_call(function, call, module, name=ref, where=f"{module}: ")
    return ModelSpec(name=ref, builder=ref)


def check_model(name, kind):
    """The ``ModelSpec`` of ``name`` if it can train a task whose models are of ``kind``.

    Raises:
        ValueError: unknown, or a model of another kind (a reference that declares no kind
            is accepted for any task).
    """
    if isinstance(name, str) and name and not is_reference(name):
        spec = builtin_models().get(name)
        if spec is None or spec.kind != kind:
            what = "not a registered model" if spec is None else f"a model of kind {spec.kind}"
            raise ValueError(
                f"model must be one of {', '.join(model_names(kind))} (the {kind} models) or "
                f"a builder reference ('my_pkg.nets:builder' or 'path/to/file.py:builder'); "
                f"received {name!r} ({what})"
            )
        return spec
    spec = model_spec(name)
    if spec.kind is not None and spec.kind != kind:
        raise ValueError(f"{name} is registered as a {spec.kind} model; this task needs {kind}")
    return spec


def builder(name):
    """The builder function of a built-in model name or a reference (imports its module)."""
    spec = model_spec(name)
    found = resolve(spec.builder)
    if not callable(found):
        raise ValueError(f"{spec.builder} is not a model builder (not callable)")
    return found


PAPER_WIDTH_ARG = 64  # torchvision's base channels: the width of the CNNs' registered params


def estimated_params(spec, width):
    """About how many parameters ``spec`` has at ``width`` (None if it declares no paper
    count): dense and convolution weights grow with the square of the width."""
    if spec.params is None:
        return None
    scale = width / PAPER_WIDTH_ARG if spec.width_arg else width
    return spec.params * max(1.0, scale) ** 2


def width_kwargs(model, scale):
    """Builder keyword arguments that scale every registered width of ``model`` by ``scale``:
    ``scale=1`` is the paper's model; CPU presets train e.g. 0.25 copies of the Transformer
    and MLP-Mixer (the full-width Mixer needs ~20 GB of activations at batch 1024).

    Args:
        model: a model name, builder reference or ``registry.ModelSpec``.
        scale: a number > 0.

    Example:
        >>> width_kwargs("mixer", 0.25)
        {'dim': 128, 'token_dim': 192, 'channel_dim': 512}
    """
    spec = model if isinstance(model, ModelSpec) else model_spec(model)
    if not spec.widths:
        scalable = ", ".join(n for n, s in builtin_models().items() if s.widths)
        raise ValueError(
            f"width scaling is defined for models that register widths ({scalable}); "
            f"received {spec.name!r}"
        )
    if not isinstance(scale, int | float) or isinstance(scale, bool) or scale <= 0:
        raise ValueError(f"width scale must be a number > 0; received {scale!r}")
    if scale == 1:
        return {}
    multiple = spec.width_multiple
    kwargs = {}
    for key, value in spec.widths.items():
        if isinstance(value, tuple):
            kwargs[key] = tuple(max(1, round(v * scale)) for v in value)
        else:
            kwargs[key] = max(multiple, round(value * scale / multiple) * multiple)
    return kwargs
