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

Task kinds have a registry of their own, ``pvr_keras.kinds``. ``resolve`` and ``load_module``
find any ``"module:name"`` / ``"file.py:name"`` reference (models, kinds, generators).

    >>> sorted(model_names("token"))
    ['mixer', 'mlp', 'mlp2x', 'transformer']
    >>> model_spec("mixer").params
    8495674
"""

import ast
import contextlib
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import os
import pathlib
import sys

from pvr_keras.checks import memory_bytes  # noqa: F401  (runconfig reads it here)
from pvr_keras.errors import UntrustedCode

MODEL_KINDS = ("token", "image", "sequence", "bits")
MODELS_DIR = pathlib.Path(__file__).resolve().parent / "models"
_USER_PACKAGE = "pvr_keras_user"  # sys.modules names of user files loaded by path
_SOURCES = {}  # a builder file's reference path -> where it was found (a run's record says)
_READING = []  # what is being read from disk, innermost last: no new code is imported then
_TRUSTED = set()  # the files / modules the user named themselves (``trust``)


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
    if kind not in MODEL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(MODEL_KINDS)}; received {kind!r}")

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


def _spec_from_call(function, call, module, name=None):
    args = [ast.literal_eval(a) for a in call.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    registered = args[0] if args else kwargs.pop("name")
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
        tree = ast.parse(path.read_text(), str(path))
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


def is_reference(name):
    """True for ``"module:function"`` / ``"file.py:function"``, False for a plain name."""
    return isinstance(name, str) and ":" in name


def _split_reference(ref):
    module, _, attr = ref.rpartition(":")
    if not module or not attr.isidentifier():
        raise ValueError(
            f"a reference is 'module:name' or 'path/to/file.py:name'; received {ref!r}"
        )
    return module, attr


def _is_file(module):
    return module.endswith(".py") or os.sep in module or "/" in module


def normalise_reference(ref):
    """A reference with its file path normalised (``./a/../b.py:f`` -> ``b.py:f``), so one
    file is one run identity."""
    module, attr = _split_reference(ref)
    if _is_file(module):
        module = os.path.normpath(module)
    return f"{module}:{attr}"


def remember_source(ref, path):
    """Where the file of a file reference is, when its (relative) path is not here: a run
    folder records its builder's absolute path (``model_source``), so that it reloads from
    any working directory."""
    module = _split_reference(normalise_reference(ref))[0]
    if _is_file(module) and pathlib.Path(path).is_file():
        _SOURCES[module] = str(path)


def _file_path(module):
    path = pathlib.Path(module)
    if not path.is_file() and module in _SOURCES:
        return pathlib.Path(_SOURCES[module])
    return path


def _source_file(module):
    """The file a reference's module lives in, found without importing it."""
    if _is_file(module):
        path = _file_path(module)
        if not path.is_file():
            raise ValueError(f"no such file {module!r} (a reference is 'file.py:name')")
        return path
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as err:
        raise ValueError(f"cannot find module {module!r}: {err}") from None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"cannot find module {module!r} (is its package importable?)")
    return pathlib.Path(spec.origin)


def _defined_names(path):
    """Names defined at the top level of a Python file: functions, classes, assignments."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except SyntaxError as err:
        raise ValueError(f"{path} is not valid Python: {err}") from None
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return tree, names


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
    ref = normalise_reference(name)
    module, attr = _split_reference(ref)
    path = _source_file(module)
    tree, names = _defined_names(path)
    if attr not in names:
        raise ValueError(f"{path} defines no {attr!r} (model reference {name!r})")
    for function, call in _decorator_calls(tree):
        if function == attr:
            return _spec_from_call(function, call, module, name=ref)
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


@contextlib.contextmanager
def reading(what):
    """While reading ``what`` (a record, a results file) from disk: any reference found there
    that names code not yet imported, and not named by the user (``trust``), raises
    ``UntrustedCode`` instead of being imported. Reading a record never runs code the user did
    not ask for."""
    _READING.append(str(what))
    try:
        yield
    finally:
        _READING.pop()


def trust(ref):
    """Marks the code of ``ref`` (a reference the user gave, e.g. on the command line) as
    theirs: ``reading`` imports it. The file is the one its path names here (never a path a
    record gave)."""
    if not is_reference(ref):
        return
    module = _split_reference(normalise_reference(ref))[0]
    _TRUSTED.add(str(pathlib.Path(module).resolve()) if _is_file(module) else module)


def trust_file(path):
    """Marks the file at ``path`` as the user's (``trust``, for a path already checked)."""
    _TRUSTED.add(str(pathlib.Path(path).resolve()))


def file_of(ref):
    """The file a file reference's code would be imported from here (a record's
    ``model_source`` where the reference's own path is not here), or None for a module
    reference."""
    module = _split_reference(normalise_reference(ref))[0]
    return _file_path(module).resolve() if _is_file(module) else None


def _check_trusted(module, key):
    if _READING and key not in _TRUSTED:
        raise UntrustedCode(
            f"{_READING[-1]} names code to import ({module}); reading a record runs no code "
            f"you did not name: pass --trust-code (trust_code=True) to import it, or name the "
            f"reference yourself"
        )


def load_module(module):
    """Imports a module by name, or a ``.py`` file by path (once per absolute path).

    Raises:
        UntrustedCode: inside ``reading``, a module not imported yet that the user did not
            name (``trust``).
    """
    if not _is_file(module):
        if module not in sys.modules and module.split(".")[0] != "pvr_keras":
            _check_trusted(module, module)
        return importlib.import_module(module)
    path = _file_path(os.path.normpath(module)).resolve()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    name = f"{_USER_PACKAGE}.{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    _check_trusted(module, str(path))
    if not path.is_file():
        raise ValueError(f"no such file {module!r} (a reference is 'file.py:name')")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ValueError(f"cannot load {path} as a Python module")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        del sys.modules[name]
        raise
    return loaded


def resolve(ref):
    """The object a ``"module:name"`` / ``"file.py:name"`` reference names (imported)."""
    module, attr = _split_reference(ref)
    loaded = load_module(module)
    try:
        return getattr(loaded, attr)
    except AttributeError:
        raise ValueError(f"{module} has no {attr!r}") from None


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
