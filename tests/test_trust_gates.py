"""The two structural guards of what the library reads from disk, checked on its source.

1. **One reader.** Every file the package, the recipes and the tools read goes through
   ``pvr_keras.files`` (``read_plain``, ``read_json``, ``read_npy``, ``parse_json``,
   ``private_copy``): a plain file checked on the open descriptor, no link followed, no FIFO
   or device waited on, bounded size and JSON depth, a one-line error. A call that reads a
   file any other way (``open(``, ``read_text(``, ``json.load``, ``np.load``, ``h5py.File``,
   a Keras load outside ``files.private_copy``) fails the first test, naming where it is.
2. **One trust gate.** Code named by a reference is imported in one place
   (``pvr_keras.references.load_module``, which refuses, inside ``references.reading``, what
   the user did not name); and every function that reads a record or a config from disk and
   rebuilds objects from it (``kinds.kind``, ``check_aggregation``, ``from_config``,
   ``Run.make``, ``.replace(``, ``resolve``, a model builder) does so inside
   ``with reading(...)``, or is itself called only there.

Each test walks the source with ``ast``; ``test_the_walkers_find_a_planted_bypass`` plants
one bypass of each kind and checks that it is found, so neither walker can pass by finding
nothing.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TREES = ("pvr_keras", "recipes", "tools")
READER = "pvr_keras/files.py"  # the one module that opens files to read them
GATE = "pvr_keras/references.py"  # the one module that imports code by reference

# Calls that read a file without the reader: (receiver or None for a bare name, attribute).
# ``None`` as the receiver matches any receiver of that attribute.
READS = {
    (None, "read_text"),
    (None, "read_bytes"),
    ("json", "load"),  # (``json.loads`` parses text some reader read, or a process's reply)
    ("np", "load"),
    ("np", "fromfile"),
    ("np", "loadtxt"),
    ("np", "genfromtxt"),
    ("pickle", "load"),
    ("pickle", "loads"),
    ("h5py", "File"),
    ("gfile", "GFile"),
    ("io", "read_file"),
    ("Image", "open"),
    ("imageio", "imread"),
    ("plt", "imread"),
}
# Keras loads read a file by name: only a private copy the reader made (``files.private_copy``).
KERAS_LOADS = {"load_weights", "load_model"}
# Importing code: only the gate does it.
IMPORTS = {("importlib", "import_module"), ("util", "spec_from_file_location"),
           ("runpy", "run_path"), ("runpy", "run_module"), (None, "exec_module")}  # fmt: skip
BARE_IMPORTS = {"exec", "eval", "__import__", "compile"}


def _sources(trees=TREES):
    for tree in trees:
        for path in sorted((ROOT / tree).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def _call_name(call):
    """``(receiver, attribute)`` of a call: ``json.load(f)`` -> ("json", "load"),
    ``open(p)`` -> (None, "open"), ``a.b.read_text()`` -> ("b", "read_text")."""
    func = call.func
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        inner = func.value
        if isinstance(inner, ast.Name):
            return inner.id, func.attr
        if isinstance(inner, ast.Attribute):
            return inner.attr, func.attr
        return "", func.attr
    return "", ""


def _with_calls(node):
    """The ``(receiver, attribute)`` of each context manager a ``with`` statement enters."""
    return [_call_name(item.context_expr) for item in node.items
            if isinstance(item.context_expr, ast.Call)]  # fmt: skip


def _walk(tree, inside=()):
    """Yields ``(node, managers)`` for every node, with the context managers of the ``with``
    statements around it (innermost last)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.With | ast.AsyncWith):
            yield child, inside
            managers = inside + tuple(_with_calls(child))
            for item in child.items:
                yield from _walk(item, inside)
            for statement in child.body:
                yield statement, managers
                yield from _walk(statement, managers)
        else:
            yield child, inside
            yield from _walk(child, inside)


def reads_outside_the_reader(sources):
    """``path:line call`` for each read of a file that bypasses ``pvr_keras.files``."""
    found = []
    for name, text in sources:
        if name == READER:
            continue
        for node, managers in _walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            receiver, attr = _call_name(node)
            if (
                attr == "loads"
                and node.args
                and isinstance(node.args[0], ast.Call)
                and (_call_name(node.args[0])[1] == "dumps")
            ):
                continue  # json.loads(json.dumps(x)): a round trip in memory, not a read
            bad = (receiver, attr) in READS or (None, attr) in READS
            bad |= receiver is None and attr == "open"
            bad |= receiver not in (None, "os", "") and attr == "open" and receiver != "files"
            if attr in KERAS_LOADS and receiver not in (None, "self", "evaluate"):
                bad |= ("files", "private_copy") not in managers
            if bad:
                found.append(f"{name}:{node.lineno} {receiver + '.' if receiver else ''}{attr}(")
    return found


# The library importing its own modules (``"file": "why"``): nothing a user or a file names.
OWN_IMPORTS = {
    "pvr_keras/__init__.py": "its subpackages, by their names in SUBPACKAGES",
    "pvr_keras/data/__init__.py": "its own modules, lazily, by fixed names",
    "pvr_keras/tasks/__init__.py": "its own modules, lazily, by fixed names",
    "pvr_keras/training/__init__.py": "its own modules, lazily, by fixed names",
    "pvr_keras/tuning/__init__.py": "its own modules, lazily, by fixed names",
    "pvr_keras/benchmarks/lm_eval_hooks.py": "replies.py beside it (lm-eval imports it by path)",
    "tools/generate/results_tables.py": "the repository's claims modules, by fixed names",
    "tools/migrate_runs.py": "recipes/gotu.py of this repository",
    "tools/probes/study_costs.py": "the repository's recipes, by their fixed names",
    "tools/probes/probe_faults.py": "compiles the hostile .pyc it plants (never runs it)",
}


def imports_outside_the_gate(sources):
    """``path:line call`` for each import of code by name outside ``references`` (and the
    library's imports of its own modules, ``OWN_IMPORTS``)."""
    found = []
    for name, text in sources:
        if name == GATE or name in OWN_IMPORTS:
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            receiver, attr = _call_name(node)
            if ((receiver, attr) in IMPORTS or (None, attr) in IMPORTS
                    or (receiver is None and attr in BARE_IMPORTS)):  # fmt: skip
                found.append(f"{name}:{node.lineno} {attr}(")
    return found


# What reads a record or config from disk, and what rebuilds objects (imports code) from one.
READERS = {"read_json", "read_plain", "parse_json", "read_record", "parse_lines", "read_lines",
           "read_sweep", "load_config", "read_config"}  # fmt: skip
REBUILDS = {("kinds", "kind"), (None, "check_aggregation"), (None, "from_config"),
            (None, "make"), (None, "replace"), (None, "resolve"), (None, "builder"),
            (None, "model_spec"), (None, "config_identity"), (None, "load_module"),
            (None, "kind")}  # fmt: skip
NOT_REBUILDS = {"os", "str", "dataclasses", "text", "name", "line", "path", "ref", "s",
                "request", "evaluation", "train", "test", "value", "key"}  # fmt: skip


def _functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _readers(tree):
    """``READERS`` and the functions of a module that return what one of them read (its
    ``_read(path)`` helper), to a fixed point."""
    readers = set(READERS)
    while True:
        more = set()
        for function in _functions(tree):
            if function.name in readers:
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Return)
                    and node.value is not None
                    and any(
                        isinstance(n, ast.Call) and _call_name(n)[1] in readers
                        for n in ast.walk(node.value)
                    )
                ):
                    more.add(function.name)
        if not more:
            return readers
        readers |= more


def rebuilds_outside_the_gate(sources):
    """``path:function:line call`` for each function that reads a record or config from disk
    (a reader, or a function returning what one read) and rebuilds an object (imports code)
    outside ``with reading(...)``."""
    found = []
    parsed = {name: ast.parse(text) for name, text in sources if name not in (READER, GATE)}
    for name, tree in parsed.items():
        readers = _readers(tree)
        for function in _functions(tree):
            calls = [(n, m) for n, m in _walk(function) if isinstance(n, ast.Call)]
            if not any(_call_name(n)[1] in readers for n, _ in calls):
                continue
            for node, managers in calls:
                receiver, attr = _call_name(node)
                if (
                    receiver in NOT_REBUILDS
                    or isinstance(node.func, ast.Attribute)
                    and (isinstance(node.func.value, ast.Constant))
                ):
                    continue
                if not node.args and not node.keywords:  # path.resolve(), str.replace: not one
                    continue
                if (receiver, attr) not in REBUILDS and (None, attr) not in REBUILDS:
                    continue
                if not any(manager[1] == "reading" for manager in managers):
                    found.append(f"{name}:{function.name}:{node.lineno} {attr}(")
    return found


@pytest.mark.parametrize("walker", [reads_outside_the_reader, imports_outside_the_gate,
                                    rebuilds_outside_the_gate])  # fmt: skip
def test_nothing_bypasses_the_reader_or_the_gate(walker):
    found = walker(_sources())
    assert not found, f"{walker.__name__}:\n" + "\n".join(found)


PLANTED = {
    "open": "def f(p):\n    return open(p).read()\n",
    "read_text": "def f(p):\n    return p.read_text()\n",
    "json.load": "import json\ndef f(h):\n    return json.load(h)\n",
    "np.load": "import numpy as np\ndef f(p):\n    return np.load(p)\n",
    "h5py": "import h5py\ndef f(p):\n    return h5py.File(p)\n",
    "keras load": "import keras\ndef f(p):\n    return keras.saving.load_model(p)\n",
    "weights": "def f(model, p):\n    model.load_weights(p)\n",
}
GATE_PLANTED = {
    "import_module": "import importlib\ndef f(m):\n    return importlib.import_module(m)\n",
    "exec": "def f(code):\n    exec(code)\n",
}
REBUILD_PLANTED = {
    "kinds.kind": "def f(p):\n    c = files.read_json(p)\n    return kinds.kind(c['kind'])\n",
    "config_identity": "def f(p):\n    return config_identity(files.read_json(p))\n",
    "replace": "def f(run, p):\n    w = read_record(p)['w']\n    return run.replace(window=w)\n",
}


@pytest.mark.parametrize(
    ("walker", "planted"),
    [
        (reads_outside_the_reader, PLANTED),
        (imports_outside_the_gate, GATE_PLANTED),
        (rebuilds_outside_the_gate, REBUILD_PLANTED),
    ],  # fmt: skip
)
def test_the_walkers_find_a_planted_bypass(walker, planted):
    for what, source in planted.items():
        assert walker([("pvr_keras/planted.py", source)]), what
    # ... and pass the same code written the library's way.
    safe = {
        reads_outside_the_reader: [
            "def f(p):\n    return files.read_plain(p)\n",
            "def f(m, p):\n    with files.private_copy(p) as c:\n        m.load_weights(c)\n",
        ],
        imports_outside_the_gate: ["def f(m):\n    return references.load_module(m)\n"],
        rebuilds_outside_the_gate: [
            "def f(p):\n    c = files.read_json(p)\n    with reading(p):\n"
            "        return kinds.kind(c['kind'])\n",
        ],
    }[walker]
    for source in safe:
        assert not walker([("pvr_keras/planted.py", source)]), source
