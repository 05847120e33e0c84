"""The code's layering: recipes compose the library and never each other, the library never
imports recipes or tools, and private third-party APIs are reached only through compat."""

import ast
import pathlib
import re

from tests import scripts

REPO = pathlib.Path(__file__).resolve().parents[1]
RECIPES = sorted((REPO / "recipes").glob("*.py"))
RECIPE_NAMES = {p.stem for p in RECIPES}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_no_recipe_imports_a_recipe_or_edits_sys_path():
    assert len(RECIPES) >= 9
    for path in RECIPES:
        imported = {name.split(".")[0] for name in _imports(path)}
        assert not imported & RECIPE_NAMES, f"{path.name} imports {imported & RECIPE_NAMES}"
        assert "sys.path" not in path.read_text(), f"{path.name} edits sys.path"


def test_library_never_imports_recipes_or_tools():
    for path in (REPO / "pvr_keras").rglob("*.py"):
        roots = {name.split(".")[0] for name in _imports(path)}
        assert not roots & (RECIPE_NAMES | {"recipes", "tools"}), path


def test_private_apis_only_in_compat():
    private = re.compile(r"keras\.src|tensorflow\.compiler|_symbolic_build|oracle_client")
    for path in (REPO / "pvr_keras").rglob("*.py"):
        if path.name == "compat.py":
            continue
        hits = [line for line in path.read_text().splitlines() if private.search(line)]
        assert not hits, f"{path.relative_to(REPO)}: {hits}"


# The library's layers, lowest first: a module imports only from its own layer or below
# (pvr_keras/__init__.py and docs/extending.md document them, in this order; tests below
# check it). Names that are not packages are modules.
LAYERS = (
    ("checks", "errors", "files", "fields", "compat", "engines", "calibration"),
    ("references", "registry", "tasks", "hyperparams"),
    ("kinds",),
    ("runconfig", "legacy"),
    ("data", "models", "testing", "figures", "analysis", "counterfactuals"),
    ("training", "benchmarks", "tfds", "reasoning_gym"),
    ("sweeps", "tuning", "launch"),
    ("cli",),
)
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _unit(path):
    """The layer unit of a library file: its subpackage, or the module's own name."""
    return _module_unit(path.relative_to(REPO / "pvr_keras").with_suffix("").parts)


# A kind's folder (``kinds/<name>/``) holds everything the kind is, one module a role, each
# standing at the layer of its role: its task and rule with the tasks, its generators with
# the data, its ``TaskKind`` with the kinds, its benchmark hooks with the benchmarks.
KIND_FOLDER_ROLES = {
    "__init__": "kinds", "kind": "kinds", "task": "tasks", "keys": "data",
    "numpy_data": "data", "tf_data": "data", "jax_data": "data", "benchmark": "benchmarks",
}  # fmt: skip
# The boolean and gotu kinds' roles (one block): seen domains (the boolean kind's, shared with
# gotu) and targets written as text (gotu's) are rules, with the tasks.
KIND_FOLDER_ROLES |= {"domains": "tasks", "targets": "tasks"}


def _module_unit(parts):
    """The layer unit of the module ``pvr_keras.<parts>``: its subpackage, or its own name. A
    kind's benchmark hooks (``kinds/<name>_benchmark.py``: its source rows, TFDS features,
    text form, scoring) stand at the benchmarks' layer: its ``TaskKind`` names them by
    reference, and nothing in the kinds layer imports them. A module of a kind's folder
    stands at its role's layer (``KIND_FOLDER_ROLES``)."""
    if parts[0] == "kinds" and parts[-1].endswith("_benchmark"):
        return "benchmarks"
    if parts[0] == "kinds" and len(parts) == 2 and parts[1] in KIND_FOLDERS:
        return "kinds"  # the folder's package itself
    if parts[0] == "kinds" and len(parts) >= 3:
        return KIND_FOLDER_ROLES.get(parts[-1], f"kinds/{parts[1]}/{parts[-1]}: no role")
    return parts[0]


KIND_FOLDERS = {p.name for p in (REPO / "pvr_keras" / "kinds").iterdir() if p.is_dir()
                and (p / "__init__.py").is_file()}  # fmt: skip


def test_every_module_of_a_kind_folder_has_a_role():
    """A kind's folder holds modules named for their roles only (``KIND_FOLDER_ROLES``), so
    the layering applies inside it as everywhere else."""
    assert KIND_FOLDERS, "no kind is a folder"
    for folder in KIND_FOLDERS:
        for path in (REPO / "pvr_keras" / "kinds" / folder).glob("*.py"):
            assert path.stem in KIND_FOLDER_ROLES, f"{path.relative_to(REPO)}: no role"


def test_every_library_module_has_a_layer():
    units = {_unit(p) for p in (REPO / "pvr_keras").rglob("*.py")} - {"__init__"}
    assert units == set(LAYER), units ^ set(LAYER)


def test_the_package_docstring_lists_the_layers():
    """``pvr_keras/__init__.py`` lists the layers as LAYERS does: one bullet a layer, lowest
    first, naming each of its units (in ``double backticks``)."""
    import pvr_keras

    [listing] = [p for p in pvr_keras.__doc__.split("\n\n") if p.startswith("- ")]
    bullets = listing[2:].split("\n- ")
    named = [[n for n in re.findall(r"``(\w+)``", b) if n in LAYER] for b in bullets]
    assert [set(n) for n in named] == [set(layer) for layer in LAYERS], named


def test_the_extending_doc_lists_the_layers_in_order():
    """docs/extending.md's map of the library goes up the layers as LAYERS does, from the
    lowest to ``cli``, and every path it names is there."""
    doc = (REPO / "docs" / "extending.md").read_text()
    section = doc.split("## Where things live")[1].split("\n## ")[0]
    [listing] = [p for p in section.split("\n\n") if p.startswith("    pvr_keras/")]
    paths = re.findall(r"^    (pvr_keras/\S+)", listing, flags=re.M)
    assert all((REPO / p).exists() for p in paths), paths
    layers = [LAYER[pathlib.Path(p).parts[1].removesuffix(".py")] for p in paths]
    assert layers == sorted(layers), list(zip(paths, layers, strict=True))
    assert set(layers) == set(range(len(LAYERS))), "a layer is missing from the doc's map"


def test_no_module_imports_from_a_higher_layer():
    """No upward import, at module level or inside a function: config-like modules never
    import training, models never import training (the schedules a saved model needs are
    loaded by the one loader, training.load_model)."""
    upward = []
    for path in (REPO / "pvr_keras").rglob("*.py"):
        unit = _unit(path)
        if unit == "__init__":
            continue
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "pvr_keras" or len(parts) < 2:
                continue
            if LAYER[_module_unit(parts[1:])] > LAYER[unit]:
                upward.append(f"{path.relative_to(REPO)} imports {name}")
    assert not upward, "\n".join(upward)


def test_recipes_declare_no_run_field_again():
    """A recipe field named like a run field (task, architecture, data, training, system) is
    that field, taken with ``cli.field_of`` (declared once, in its section); the one
    exception is ``train.py``'s ``--kind``, the selector of the kind itself."""
    from pvr_keras import kinds
    from pvr_keras.runconfig import section_fields

    run_fields = set()
    for kind in kinds.kind_names():
        run_fields |= set(section_fields(kinds.kind(kind))) - {"kind"}
    import dataclasses

    again = []
    for path in RECIPES:
        module = scripts.load(path.relative_to(REPO))
        for value in vars(module).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                if value.__module__ != module.__name__:
                    continue
                for field in dataclasses.fields(value):
                    if field.name in run_fields and "declared_in" not in field.metadata:
                        again.append(f"{path.name}: {value.__name__}.{field.name}")
    assert not again, again


def _module_graph():
    """``{module: modules of the library it imports}``, at module level or inside a function
    (``from pvr_keras import x`` is module ``pvr_keras.x`` where that is a module); a
    module's own packages are left out (importing it runs them first anyway)."""
    modules = {}
    for path in (REPO / "pvr_keras").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module in modules:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
        graph[name] = {m for m in found if m != name and not name.startswith(m + ".")}
    return graph


def _cycles(graph):
    """The import cycles of ``graph``: its strongly connected parts of two or more modules
    (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    """No two library modules import each other, directly or through others, even inside
    a function: every module can be read (and tested) above the ones it uses."""
    graph = _module_graph()
    assert "pvr_keras.runconfig" in graph and "pvr_keras.kinds" in graph["pvr_keras.runconfig"]
    assert _cycles(graph) == []
