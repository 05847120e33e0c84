"""The code's layering: recipes compose the library and never each other, the library never
imports recipes or tools, and private third-party APIs are reached only through compat."""

import ast
import pathlib
import re

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
