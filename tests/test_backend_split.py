"""tests/backend_split.py: the lists name real tests, and CI's variable deselects exactly them."""

import ast
import os
import pathlib
import subprocess
import sys

from tests.backend_split import (
    ANY_BACKEND,
    BACKEND_DEPENDENT,
    BACKEND_FREE,
    BALANCED,
    SKIP_ANY_ENV,
    SKIP_ENV,
    is_any_backend,
    is_backend_free,
)

REPO = pathlib.Path(__file__).resolve().parents[1]


def _tests_of(path):
    tree = ast.parse((REPO / path).read_text())
    return {
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
    }


def test_every_entry_names_a_folder_file_or_test():
    for entry in BACKEND_FREE + BACKEND_DEPENDENT + ANY_BACKEND + BALANCED:
        path, _, name = entry.partition("::")
        assert (REPO / path).exists(), entry
        if name:
            assert name in _tests_of(path), entry


def _imports_keras(path):
    """Whether a test file imports keras, or the models or the training loop, at its top (a
    guard for the plain case; a test that builds a model is listed by hand)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import) and any(a.name == "keras" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (
            node.module == "keras"
            or (
                node.module == "pvr_keras" and {a.name for a in node.names} & {"models", "training"}
            )
        ):
            return True
    return False


def test_a_backend_free_file_that_imports_keras_lists_its_keras_tests():
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        relative = path.relative_to(REPO).as_posix()
        if is_backend_free(relative + "::x") and _imports_keras(path):
            listed = (e == relative or e.startswith(relative + "::") for e in BACKEND_DEPENDENT)
            assert any(listed), f"{relative} imports keras: list its Keras tests as dependent"


def test_matching():
    assert is_backend_free("tests/tasks/test_token.py::test_x[a-b]")
    assert is_backend_free(
        "tests/models/test_vgg.py::test_trainable_parameter_count_matches_torchvision"
    )
    assert not is_backend_free("tests/models/test_vgg.py::test_vgg11_bn_model")
    assert not is_backend_free("tests/data/test_block.py::test_feeds_a_keras_model")
    assert is_backend_free("tests/data/test_block.py::test_jitter_is_uniform")
    assert not is_backend_free("tests/data/test_fit_order.py::test_block_stream_through_fit")
    assert not is_backend_free("tests/test_configx.py::test_a")  # a file, not a prefix
    assert is_any_backend(
        "tests/recipes/test_token_sweep.py::test_sigkill_then_rerun_completes_without_duplicates"
    )
    assert not is_any_backend("tests/recipes/test_token_pvr.py::test_sigkill_and_resume")
    # One test of a file whose other tests train: its parametrisations are backend-free.
    checks = "tests/recipes/test_recipe_checks.py::"
    assert is_backend_free(checks + "test_bad_flags_fail_before_tensorflow_and_write_nothing[a]")
    assert not is_backend_free(checks + "test_failed_run_exits_3_and_the_output_is_quiet")
    assert not is_any_backend(checks + "test_failed_run_exits_3_and_the_output_is_quiet")


def test_a_backend_agnostic_test_is_not_backend_free():
    """The two lists are disjoint: otherwise CI's two variables together would skip a test in
    both runs."""
    for entry in ANY_BACKEND:
        assert not is_backend_free(entry), entry


def test_a_balanced_test_runs_in_the_jax_process_only():
    """A backend-free test moved to even out CI's two processes runs in exactly one: JAX's."""
    for entry in BALANCED:
        node = entry + "::test_x"
        assert is_any_backend(node) and not is_backend_free(node), entry


def test_the_variables_deselect_the_backend_free_and_agnostic_tests():
    # Files that collect without importing Keras (a collection is then ~1 s, not ~10): one
    # backend-free file, one backend-free file with a dependent test, one with an agnostic test.
    files = ["tests/test_cli.py", "tests/test_identity.py", "tests/test_extending.py"]

    def collected(**env):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                *files,
            ],
            cwd=REPO,
            env={
                **{k: v for k, v in os.environ.items() if k not in (SKIP_ENV, SKIP_ANY_ENV)},
                **env,
            },
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return {line for line in done.stdout.splitlines() if "::" in line}

    everything = collected()
    once = collected(**{SKIP_ENV: "1"})
    assert once == {t for t in everything if not is_backend_free(t)}
    assert not any(t.startswith("tests/test_cli.py") for t in once)
    assert once == {"tests/test_identity.py::test_a_legacy_run_folder_resumes_after_migrating"} | {
        t for t in everything if t.startswith("tests/test_extending.py")
    }
    agnostic = [t for t in everything if is_any_backend(t)]
    assert agnostic and set(agnostic) <= once
    not_agnostic = collected(**{SKIP_ANY_ENV: "1"})
    assert not_agnostic == {t for t in everything if not is_any_backend(t)}
    assert not set(agnostic) & not_agnostic
    assert any(t.startswith("tests/test_cli.py") for t in not_agnostic)
