"""recipes/chain.py: the presets' grids, bad flags in one line, and a tiny study end to end
(the counts by hop count against the saved models, the summary, the figure, resume, and the
docs/results table made from the records)."""

import csv
import json
import re

import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.tasks import ChainTask
from pvr_keras.training import load_run
from tests import scripts
from tests.plots import assert_plot

# 2 widths x 2 seeds of the MLP at L = 8, trained on hops 1-2, tested on 1-5.
TINY = ["--length", "8", "--hops", "1", "2", "--test-hops", "1", "2", "3", "4", "5",
        "--model", "mlp", "--width", "0.0625", "0.125", "--seed", "0", "1",
        "--num-examples", "512", "--test-examples", "300", "--train-eval-examples", "200",
        "--epochs", "2"]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/chain.py")


def _runs(recipe, *flags):
    return recipe.runs_of(recipe.COMMAND.parse_all(list(flags)))


def test_the_presets_grids(recipe, monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    runs = _runs(recipe)
    assert [(r.model, r.width, r.seed) for r in runs] == [
        ("transformer", 0.125, 0), ("mixer", 0.125, 0), ("mlp", 0.125, 0)
    ]  # fmt: skip
    task = runs[0].task
    assert (task.length, task.form, task.hops, task.test_hops) == (
        12, "conditional", (1, 2, 3, 4), (1, 2, 3, 4, 5, 6, 7, 8)
    )  # fmt: skip
    assert {(r.num_examples, r.epochs, r.batch_size) for r in runs} == {(20_000, 10, 128)}
    parsed = recipe.COMMAND.parse_all(["--preset", "medium"])
    runs = recipe.runs_of(parsed)
    assert sorted((r.model, r.seed) for r in runs) == sorted(
        (m, s) for m in ("transformer", "mixer", "mlp") for s in (0, 1, 2)
    )
    assert {(r.task.length, r.width, r.num_examples) for r in runs} == {(20, 0.125, 100_000)}
    assert parsed.own.out == "runs/chain_medium"
    assert parsed.run.system.population == 3  # seeds together, on JAX
    named = recipe.COMMAND.parse_all(["--preset", "medium", "--backend", "tensorflow"])
    assert named.run.system.population == 1  # one run after another there
    assert len({r.run_id for r in runs}) == 9 and all("-t1-8-" in r.run_id for r in runs)
    # Flags replace the preset's values; the grid is what is given several values.
    runs = _runs(recipe, "--model", "transformer", "--seed", "3", "4", "--length", "16")
    assert [(r.model, r.seed, r.task.length) for r in runs] == [
        ("transformer", 3, 16), ("transformer", 4, 16)
    ]  # fmt: skip
    assert recipe.label(runs[0]) == "transformer x0.125"
    assert recipe.label(runs[0].replace(width=1.0)) == "transformer"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--length", "1"], "length must be an integer >= 2; received 1"),
        (["--hops", "0"], r"hops must be in 1..11 \(length 12\)"),
        (["--length", "6"], "test_hops must be at most length - 1 = 5"),
        (["--form", "cycle", "--length", "8"], "the cycle form writes the hop count"),
        (["--form", "nope"], "invalid choice: 'nope'"),
        (["--epochs", "1", "2"], "received several values of --epochs"),
        (["--seed", "1", "1"], "seeds must be distinct"),
        (["--holdout", "1"], "unrecognized arguments: --holdout"),
        (["--model", "resnet18"], "(a model of kind image)"),
        (["--population", "2", "--backend", "tensorflow"], "trains on JAX"),
    ],
)
def test_a_bad_flag_is_one_line_before_any_work(argv, match, tmp_path, capsys):
    out = tmp_path / "x"
    assert scripts.exit_status("recipes/chain.py", *argv, "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("chain.py: error: ") and re.search(match, err[-1]), err
    assert not any(line.startswith("Traceback") for line in err)
    assert not out.exists()


def test_dry_run_sizes_the_grid_and_writes_nothing(recipe, tmp_path, capsys):
    result = recipe.main(["--preset", "medium", "--dry-run", "--out", str(tmp_path / "r")])
    assert result["total"] == 9 and not (tmp_path / "r").exists()
    assert "transformer x0.125: 3 runs, 3.00e+06 training examples" in capsys.readouterr().out


@pytest.fixture(scope="module")
def trained(recipe, tmp_path_factory):
    out = tmp_path_factory.mktemp("chain") / "chain_quick"
    recipe.main([*TINY, "--out", str(out)])
    return out, json.loads((out / "chain.json").read_text())


@pytest.mark.slow  # four tiny runs: ~20 s on a loaded CPU
def test_counts_by_hop_count_are_those_of_the_saved_models(trained):
    out, result = trained
    assert [(r["label"], r["seed"]) for r in result["runs"]] == [
        ("mlp x0.0625", 0), ("mlp x0.125", 0), ("mlp x0.0625", 1), ("mlp x0.125", 1)
    ]  # fmt: skip
    assert (result["train_hops"], result["test_hops"]) == ([1, 2], [1, 2, 3, 4, 5])
    task = ChainTask(length=8, hops=(1, 2), test_hops=(1, 2, 3, 4, 5))
    lines = {json.loads(s)["run_dir"]: json.loads(s)
             for s in (out / "results.jsonl").read_text().splitlines()}  # fmt: skip
    for row in result["runs"]:
        model = load_run(out / row["run_dir"]).model
        x, y = data.chain_arrays(task, 300, split="test", seed=row["seed"])
        predicted = model.predict(x, verbose=0).argmax(-1)
        hops = np.array([len(task.chain(x[i : i + 1])[0]) for i in range(len(x))])
        assert row["hops"] == [1, 2, 3, 4, 5] and sum(row["examples"]) == 300
        for i, k in enumerate(row["hops"]):
            assert row["examples"][i] == (hops == k).sum()
            assert row["correct"][i] == (predicted[hops == k] == y[hops == k]).sum()
            assert row["majority"][i] == np.bincount(y[hops == k]).max()
        # The run's own test set: its recorded test accuracy, by hop count.
        recorded = lines[row["run_dir"]]["test_accuracy"]
        assert sum(row["correct"]) / 300 == pytest.approx(recorded, abs=1e-6)
        assert row["test_accuracy"] == recorded
        kept = json.loads((out / row["run_dir"] / "hops.json").read_text())
        assert kept["correct"] == row["correct"] and kept["seed"] == row["seed"]
    for model in result["models"]:
        mine = [r for r in result["runs"] if r["label"] == model["label"]]
        mean = np.mean([np.divide(r["correct"], r["examples"]) for r in mine], axis=0)
        assert model["seeds"] == 2 and model["mean"] == pytest.approx(mean.tolist())
    with open(out / "chain.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["model"] for r in rows] == ["mlp x0.0625", "mlp x0.125", "majority class"]
    assert float(rows[0]["hop_3"]) == pytest.approx(result["models"][0]["mean"][2])
    assert_plot(out / "chain.png")


@pytest.mark.slow
def test_run_again_trains_and_scores_nothing(recipe, trained, capsys):
    out, result = trained
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/hops.json")}
    assert len(stamps) == 4
    recipe.main([*TINY, "--out", str(out)])
    printed = capsys.readouterr().out
    assert "0 to run" in printed and "accuracy per hop count" in printed
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert json.loads((out / "chain.json").read_text())["runs"] == result["runs"]


@pytest.mark.slow
def test_the_docs_table_is_made_from_the_exported_records(trained, tmp_path):
    """The export copies the records, not the models; the table is computed from each run's
    counts: a changed count changes the table (and ``--check`` says it is stale)."""
    out, result = trained
    exporter = scripts.load("tools/export_results.py")
    tables = scripts.load("tools/generate/results_tables.py")
    docs = tmp_path / "docs"
    exporter.main([str(out.parent), str(docs)])
    study = docs / "chain_quick"
    names = {p.name for p in study.iterdir()}
    assert {"results.jsonl", "chain.json", "chain.csv", "chain.png", "config_chain.json",
            "sweeps"} <= names  # fmt: skip
    assert "runs" not in names and not list(study.rglob("*.keras"))
    table = tables.tables(docs)["chain_quick"]
    first = result["runs"][0]
    accuracy = first["correct"][0] / first["examples"][0]
    other = result["runs"][2]  # the same model, seed 1
    mean = (accuracy + other["correct"][0] / other["examples"][0]) / 2
    assert f"| {first['label']} | 2 | {mean:.3f}" in table
    (docs / "README.md").write_text(f"<!-- table: chain_quick -->\n{table}<!-- end table -->\n")
    assert tables.main([str(docs), "--check", "--readme", str(docs / "README.md")]) == 0
    # A count changed in the committed records: the table follows it, and --check fails.
    changed = json.loads((study / "chain.json").read_text())
    right = 0 if first["correct"][0] else first["examples"][0]  # none right, or all
    changed["runs"][0]["correct"][0] = right
    (study / "chain.json").write_text(json.dumps(changed))
    flipped = (right / first["examples"][0] + other["correct"][0] / other["examples"][0]) / 2
    assert f"| {first['label']} | 2 | {flipped:.3f}" in tables.tables(docs)["chain_quick"]
    assert tables.main([str(docs), "--check", "--readme", str(docs / "README.md")]) == 1


@pytest.mark.slow
def test_seeds_trained_as_one_population_are_scored_from_their_own_models(recipe, tmp_path, capsys):
    """``--population 2`` on JAX: both seeds in one program, each scored from its own saved
    model on its own test set (the CI's JAX run)."""
    import keras

    if keras.backend.backend() != "jax":
        pytest.skip("a population trains on JAX")
    out = tmp_path / "population"
    flags = [*TINY, "--width", "0.125", "--population", "2", "--backend", "jax"]
    recipe.main([*flags, "--out", str(out)])
    assert "a population of 2" in capsys.readouterr().out
    result = json.loads((out / "chain.json").read_text())
    lines = {json.loads(s)["run_dir"]: json.loads(s)
             for s in (out / "results.jsonl").read_text().splitlines()}  # fmt: skip
    assert [r["seed"] for r in result["runs"]] == [0, 1]
    for row in result["runs"]:
        assert lines[row["run_dir"]]["backend"] == "jax"
        recorded = lines[row["run_dir"]]["test_accuracy"]
        assert sum(row["correct"]) / 300 == pytest.approx(recorded, abs=1e-6)
    assert result["runs"][0]["correct"] != result["runs"][1]["correct"]
