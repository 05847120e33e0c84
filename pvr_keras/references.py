"""References to code: ``"module:name"`` (an importable module) or ``"path/to/file.py:name"``
(a file), and the one rule for importing them.

A run can name a model builder, a task kind or a generator of a researcher's own by
reference; ``resolve`` imports it. Reading a record never runs code on its own: inside
``reading(what)``, a reference to code not yet imported that the user did not name
(``trust``) raises ``UntrustedCode`` instead of being imported.

Finding and checking a reference imports nothing: a module's file is located the way the
import system would locate it, package by package, without running any package's
``__init__``. A file is imported from the bytes read once: they are hashed (a file trusted by
its recorded SHA-256 must match), compiled and run; no bytecode cache (``__pycache__``) is
read or written, so a planted ``.pyc`` or a file swapped after the check never runs.

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

from pvr_keras import files
from pvr_keras.errors import UntrustedCode

_USER_PACKAGE = "pvr_keras_user"  # sys.modules names of user files loaded by path
_SOURCES = {}  # a builder file's reference path -> where it was found (a run's record says)
_READING = []  # what is being read from disk, innermost last: no new code is imported then
_TRUSTED = set()  # the files / modules the user named themselves (``trust``)
_READ_REFS = set()  # references a record named (``reading``): never trusted by ``trust_named``
_DIGESTS = {}  # a trusted file's absolute path -> the SHA-256 its bytes must have to run
_LOADED = {}  # a loaded file's absolute path -> the SHA-256 of the bytes that ran
MAX_SOURCE_BYTES = 16 << 20  # a builder / kind file larger than this is not read


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
    return _module_file(module)


def _module_file(module):
    """The source file of the importable module ``module``, located as the import system
    locates it (each finder of ``sys.meta_path``, package by package) but without importing
    anything: no parent package's ``__init__`` runs (``importlib.util.find_spec`` would run
    them)."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"{module!r} is not a module name (a reference is 'module:name')")
    locations, spec = None, None
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        spec = getattr(loaded, "__spec__", None) if loaded is not None else None
        if spec is None:
            spec = _find_spec(name, locations)
        if spec is None:
            raise ValueError(f"cannot find module {module!r} (no {name!r} on the import path)")
        if depth < len(parts):
            if spec.submodule_search_locations is None:
                raise ValueError(f"cannot find module {module!r} ({name} is not a package)")
            locations = list(spec.submodule_search_locations)
    if not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"cannot find the Python source of module {module!r}")
    return pathlib.Path(spec.origin)


# The finders that only locate: the import system's own and those of editable installs
# (``__editable__..._finder``: a name -> path table). Others may run code to answer
# (setuptools' ``_distutils_hack`` imports setuptools for ``distutils.*``), so a name from a
# record never reaches them.
LOCATING_FINDERS = ("_frozen_importlib", "_frozen_importlib_external", "importlib", "__editable__")


def _find_spec(name, locations):
    """The spec the first locating finder of ``sys.meta_path`` gives ``name`` (searching
    ``locations``, a package's folders, or the import path): nothing is imported."""
    for finder in sys.meta_path:
        if not str(getattr(finder, "__module__", "")).startswith(LOCATING_FINDERS):
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, locations)
        except (ImportError, ValueError, TypeError, OSError):
            continue
        if spec is not None:
            return spec
    return None


def defined_names(path):
    """Names defined at the top level of a Python file: functions, classes, assignments."""
    try:
        source = files.read_plain(path, MAX_SOURCE_BYTES)
        tree = ast.parse(source, str(path))
    except (OSError, ValueError) as err:  # a link, a FIFO, a huge file; not UTF-8
        raise ValueError(f"{path} cannot be read as Python source ({err})") from None
    except SyntaxError as err:
        raise ValueError(f"{path} is not valid Python: {err}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"{path} is not Python this library reads (nested too deeply)") from None
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


def trust_module(module):
    """Marks the importable module ``module`` (``pkg.nets``) as the user's: a record naming
    ``pkg.nets:build`` may import it (``--trust-module``)."""
    _module_file(module)  # a module name that can be found (nothing is imported)
    _TRUSTED.add(module)


def trust_file(path, sha256=None):
    """Marks the file at ``path`` as the user's (``trust``, for a path already checked);
    with ``sha256``, only bytes with that SHA-256 are run from it (``load_module`` checks the
    bytes it runs, not a second read)."""
    key = str(pathlib.Path(path).resolve())
    _TRUSTED.add(key)
    if sha256 is not None:
        _DIGESTS[key] = sha256


def loaded_sha256(path):
    """The SHA-256 of the bytes ``load_module`` ran from the file at ``path`` (None if it
    has not loaded it): what a run records of the builder it trained with."""
    return _LOADED.get(str(pathlib.Path(path).resolve()))


def is_reading():
    """Whether a record is being read (``reading``): what it names is not the user's."""
    return bool(_READING)


def reading_what():
    """What is being read (the innermost ``reading``), or None."""
    return _READING[-1] if _READING else None


def trust_named(ref):
    """Trusts ``ref`` as named in this process (a task made in Python), unless a record read
    here named it first (``reading``): a reference read from disk is not made the user's by
    being checked again outside the gate."""
    if _READING:
        _READ_REFS.add(normalise_reference(ref))
    elif normalise_reference(ref) not in _READ_REFS:
        trust(ref)


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
        if _is_file(module):
            how = ("pass --trust-code (trust_code=True) to import it if it is the file the run "
                   "recorded, or name the reference yourself")  # fmt: skip
        else:
            how = (f"a module is imported only when you name it: --trust-module {module} "
                   f"(registry.trust('{module}:...') in Python)")  # fmt: skip
        raise UntrustedCode(
            f"{_READING[-1]} names code to import ({module}); reading a record runs no code "
            f"you did not name: {how}"
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
    source = files.read_plain(path, MAX_SOURCE_BYTES)  # read once: these bytes are run
    digest = hashlib.sha256(source).hexdigest()
    expected = _DIGESTS.get(str(path))
    if expected is not None and digest != expected:
        raise UntrustedCode(
            f"{path} changed after it was checked (its SHA-256 is not the recorded one); "
            f"nothing was imported"
        )
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as err:
        raise ValueError(f"{path} is not valid Python: {err}") from None
    loaded = importlib.util.module_from_spec(
        importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    )
    loaded.__file__ = str(path)
    sys.modules[name] = loaded
    try:
        exec(code, loaded.__dict__)  # the checked bytes, compiled here: no bytecode cache
    except BaseException:
        del sys.modules[name]
        raise
    _LOADED[str(path)] = digest
    return loaded


def resolve(ref):
    """The object a ``"module:name"`` / ``"file.py:name"`` reference names (imported)."""
    module, attr = split_reference(ref)
    loaded = load_module(module)
    try:
        return getattr(loaded, attr)
    except AttributeError:
        raise ValueError(f"{module} has no {attr!r}") from None
