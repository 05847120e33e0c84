"""docs/extending.md, as a researcher uses it: a model and a task kind written outside the
package train through every recipe, sweep, search and the benchmark, and reload anywhere.

The files are the code blocks of docs/extending.md, written as they are there."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from pvr_keras import files

REPO = pathlib.Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "extending.md"
sys.path.insert(0, str(REPO / "recipes"))
TINY = ["--num-examples", "1000", "--test-examples", "300", "--epochs", "2", "--min-steps", "0",
        "--warmup-epochs", "0", "--batch-size", "128"]  # fmt: skip


def blocks():
    """``{file name or None: code}`` of the doc's Python blocks (a first line ``# name.py``
    names the file)."""
    found = {}
    for code in re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S):
        first = code.splitlines()[0]
        name = first[2:].strip() if re.fullmatch(r"# \w+\.py", first) else None
        found[name] = code
    return found


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A folder with the doc's my_nets.py and my_kinds.py: a researcher's project."""
    root = tmp_path_factory.mktemp("project")
    for name, code in blocks().items():
        if name:
            (root / name).write_text(code)
    return root


@pytest.fixture
def in_project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def _env():
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}


def test_the_doc_names_its_files():
    assert {"my_nets.py", "test_my_nets.py", "my_kinds.py", "my_aggs.py", None} == set(blocks())


def test_your_model_passes_the_model_test(project, tmp_path, monkeypatch):
    """The doc's test file, as pytest would run it from the project folder: the doc's builder
    passes ``pvr_keras.testing.run_model_test`` (build, call, fit, save and reload)."""
    import importlib.util

    monkeypatch.syspath_prepend(str(project))
    spec = importlib.util.spec_from_file_location("test_my_nets", project / "test_my_nets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.test_tiny_net(tmp_path)


@pytest.mark.slow  # tiny runs through every recipe: ~2 min on a loaded 2-core CPU
def test_a_model_of_your_own_through_every_recipe(in_project, tmp_path, capsys):
    import token_pvr
    import token_sweep
    import tune

    from pvr_keras.sweeps import suites
    from tests import scripts

    benchmark = scripts.load("tools/benchmark.py")
    ref = "my_nets.py:tiny_net"
    out = in_project / "runs" / "one"
    record = token_pvr.main(["--model", ref, "--window", "1", *TINY, "--out", str(out)])
    assert record["config"]["model"] == ref
    # Keras's name of an unnamed model: "functional", numbered after other models in this process.
    assert re.fullmatch(r"functional(_\d+)?", record["model"])
    assert record["model_source"] == str(in_project / "my_nets.py")
    assert record["model_source_sha256"] == files.sha256(in_project / "my_nets.py")
    # evaluate.py from another folder, in a fresh process: only the module defines Doubled.
    # It imports the run's builder file only when asked to (--trust-code; its refusal without
    # the flag: tests/test_untrusted_code.py::test_evaluate_refuses_in_one_line).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = [sys.executable, str(REPO / "tools" / "evaluate.py"), str(out), "--json",
               str(elsewhere / "rows.json"), "--trust-code"]  # fmt: skip
    done = subprocess.run(command, cwd=elsewhere, env=_env(), capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = json.loads((elsewhere / "rows.json").read_text())
    assert row["accuracy"] == pytest.approx(record["final"]["test_accuracy"], abs=1e-6)

    summary = token_sweep.main(["--models", ref, "--windows", "1", "--sizes", "1000",
                                "--seeds", "0", *TINY[2:], "--no-figures",
                                "--out", str(in_project / "sweep")])  # fmt: skip
    assert len(summary["trained"]) == 1 and summary["trained"][0].startswith("tiny_net-w1-")

    search = tune.main(["--model", ref, "mlp", "--num-examples", "500", "--val-examples",
                        "128", "--epochs", "1", "--max-trials", "1", "--directory",
                        str(in_project / "tune")])  # fmt: skip
    assert search["trials"] == 1 and "--model" in search["train_command"]
    assert search["project"].endswith("random_tiny_net-mlp_w1_mod_sum_n500")

    # The benchmark, on a two-entry suite of tiny runs (the real ones: tools/benchmark.py).
    tiny = suites.Suite("quick", "tiny", token=dict(num_examples=600, test_examples=200,
                        train_eval_examples=200, epochs=1, warmup_epochs=0, min_steps=0,
                        batch_size=128), image={}, image_width=1)  # fmt: skip
    patch = pytest.MonkeyPatch()
    patch.setitem(suites.SUITES, "quick", tiny)
    patch.setattr(suites, "TOKEN_ENTRIES", suites.TOKEN_ENTRIES[:2])
    try:
        table = benchmark.main(["--model", ref, "--out", str(in_project / "bench")])
    finally:
        patch.undo()
    assert table["label"] == ref and set(table["entries"]) == {"w1", "w2"}
    assert (in_project / "bench" / "benchmark.md").read_text().count("| w") == 2
    assert (in_project / "bench" / "benchmark.png").stat().st_size > 5000


@pytest.mark.slow  # the doc's Python block, then the kind from the command line
def test_a_task_kind_of_your_own(in_project, capsys):
    # The block as a script run in the project folder (its own globals, in this process: a
    # fresh interpreter would only add an import of JAX and TensorFlow).
    code = blocks()[None].replace("epochs=3", "epochs=1")
    exec(compile(code, str(DOC), "exec"), {"__name__": "__main__"})
    assert "'accuracy'" in capsys.readouterr().out
    lines = [json.loads(s) for s in (in_project / "runs/reversed/sweep/results.jsonl")
             .read_text().splitlines()]  # fmt: skip
    assert sorted((r["seed"], r["num_values"]) for r in lines) == [(0, 4), (0, 5), (1, 4),
                                                                   (1, 5)]  # fmt: skip
    assert {r["kind"] for r in lines} == {"my_kinds.py:REVERSED"}
    assert all(r["id"].startswith("reversed-tiny_net-n3000-") for r in lines)

    import train

    from pvr_keras import training
    from pvr_keras.kinds import kind

    out = in_project / "runs" / "cli"
    flags = ["--kind", "my_kinds.py:REVERSED", "--model", "my_nets.py:tiny_net", "--seq-len", "6",
             "--num-values", "4"]  # fmt: skip
    record = train.main([*flags, *TINY, "--out", str(out)])
    assert record["kind"] == "reversed" and record["config"]["seq_len"] == 6
    run = training.load_run(out)
    assert run.evaluate()["accuracy"] == pytest.approx(record["final"]["test_accuracy"],
                                                       abs=1e-6)  # fmt: skip
    # The generator follows the rule it declares.
    stream = kind("my_kinds.py:REVERSED").stream("tfdata")
    x, y = next(iter(stream(run.task(), 50, batch_size=50, shuffle=False)))
    assert (run.task().label(x.numpy()) == y.numpy()).all()
