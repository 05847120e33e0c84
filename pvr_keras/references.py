"""References to code: ``"module:name"`` (an importable module) or ``"path/to/file.py:name"``
(a file), and the one rule for importing them.

A run can name a model builder, a task kind or a generator of a researcher's own by
reference; ``resolve`` imports it. Reading a record never runs code on its own: inside
``reading(what)``, a reference to code not yet imported that the user did not name
(``trust``) raises ``UntrustedCode`` instead of being imported.

    >>> is_reference("my_nets.py:tiny_net"), is_reference("mlp")
    (True, False)
    >>> normalise_reference("./a/../nets.py:tiny_net")
    'nets.py:tiny_net'
"""

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import os
import pathlib
import sys

from pvr_keras.errors import UntrustedCode

_USER_PACKAGE = "pvr_keras_user"  # sys.modules names of user files loaded by path
_SOURCES = {}  # a builder file's reference path -> where it was found (a run's record says)
_READING = []  # what is being read from disk, innermost last: no new code is imported then
_TRUSTED = set()  # the files / modules the user named themselves (``trust``)


def is_reference(name):
    """True for ``"module:function"`` / ``"file.py:function"``, False for a plain name."""
    return isinstance(name, str) and ":" in name


def split_reference(ref):
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
    module, attr = split_reference(ref)
    if _is_file(module):
        module = os.path.normpath(module)
    return f"{module}:{attr}"


def remember_source(ref, path):
    """Where the file of a file reference is, when its (relative) path is not here: a run
    folder records its builder's absolute path (``model_source``), so that it reloads from
    any working directory."""
    module = split_reference(normalise_reference(ref))[0]
    if _is_file(module) and pathlib.Path(path).is_file():
        _SOURCES[module] = str(path)


def _file_path(module):
    path = pathlib.Path(module)
    if not path.is_file() and module in _SOURCES:
        return pathlib.Path(_SOURCES[module])
    return path


def source_file(module):
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


def defined_names(path):
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
    module = split_reference(normalise_reference(ref))[0]
    _TRUSTED.add(str(pathlib.Path(module).resolve()) if _is_file(module) else module)


def trust_file(path):
    """Marks the file at ``path`` as the user's (``trust``, for a path already checked)."""
    _TRUSTED.add(str(pathlib.Path(path).resolve()))


def is_reading():
    """Whether a record is being read (``reading``): what it names is not the user's."""
    return bool(_READING)


def _module_name(path):
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    return f"{_USER_PACKAGE}.{path.stem}_{digest}"


def is_trusted(ref):
    """Whether the code of ``ref`` may be imported outside ``reading`` too: the user named it
    (``trust``), it is the library's, or it is imported already."""
    module = split_reference(normalise_reference(ref))[0]
    if not _is_file(module):
        return module in _TRUSTED or module in sys.modules or module.split(".")[0] == "pvr_keras"
    path = _file_path(module).resolve()
    return str(path) in _TRUSTED or _module_name(path) in sys.modules


def find_reference(ref, what="reference"):
    """``(ref normalised, its module, the parsed source)`` once its file (or module) is
    found and defines its name; nothing is imported. ``what`` names it in the error
    (``model``, ``aggregation``)."""
    ref = normalise_reference(ref)
    module, attr = split_reference(ref)
    path = source_file(module)
    tree, names = defined_names(path)
    if attr not in names:
        raise ValueError(f"{path} defines no {attr!r} ({what} reference {ref!r})")
    return ref, module, tree


def check_reference(ref, what="reference"):
    """``ref`` normalised, once its file (or module) is found and defines its name
    (``find_reference``)."""
    return find_reference(ref, what)[0]


def file_of(ref):
    """The file a file reference's code would be imported from here (a record's
    ``model_source`` where the reference's own path is not here), or None for a module
    reference."""
    module = split_reference(normalise_reference(ref))[0]
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
    name = _module_name(path)
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
    module, attr = split_reference(ref)
    loaded = load_module(module)
    try:
        return getattr(loaded, attr)
    except AttributeError:
        raise ValueError(f"{module} has no {attr!r}") from None
