"""recipes/boolean_holdout.py end to end on a tiny budget: runs, exact measures, plot, resume."""

import csv
import json

import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.analysis import boolean, fourier_tracking
from pvr_keras.tasks import f3
from pvr_keras.training import load_run
from tests import scripts
from tests.plots import assert_plot

TINY = ["--bits", "0", "7", "--seeds", "0", "1", "--num-examples", "300", "--test-examples",
        "256", "--train-eval-examples", "300", "--epochs", "3",
        "--learning-rate", "1e-3"]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/boolean_holdout.py")


@pytest.fixture(scope="module")
def trained(recipe, tmp_path_factory):
    out = tmp_path_factory.mktemp("boolean")
    recipe.main([*TINY, "--out", str(out)])
    return out, json.loads((out / "boolean_holdout.json").read_text())


def test_every_bit_and_seed_is_a_run_with_exact_measures(trained):
    out, result = trained
    influence = boolean.boolean_influence(boolean.target_values(f3()))
    np.testing.assert_allclose(result["influence"], influence)
    assert [(r["bit"], r["seed"]) for r in result["runs"]] == [(0, 0), (0, 1), (7, 0), (7, 1)]
    cube = boolean.boolean_cube(11)
    target = f3().label(cube).astype(np.float64)
    for r in result["runs"]:
        folder = out / r["run_dir"]
        record = json.loads((folder / "record.json").read_text())
        assert record["metric"] == "mse" and record["config"]["holdout"] == 1 << r["bit"]
        values = np.asarray(load_run(folder).model.predict_on_batch(cube), np.float64)[:, 0]
        assert r["half_mse"] == pytest.approx(np.mean((values - target) ** 2) / 2, rel=1e-6)
        inside = cube[:, r["bit"]] == 1
        assert r["in_distribution_half_mse"] == pytest.approx(
            np.mean((values[inside] - target[inside]) ** 2) / 2, rel=1e-6
        )
        assert r["influence"] == pytest.approx(influence[r["bit"]])
    for row in result["bits"]:
        mine = [r["half_mse"] for r in result["runs"] if r["bit"] == row["bit"]]
        assert row["half_mse_mean"] == pytest.approx(np.mean(mine)) and row["seeds"] == 2
    with open(out / "boolean_holdout.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["bit"]) for r in rows] == [0, 7]
    assert_plot(out / "boolean_holdout.png")


def test_the_tracker_stores_every_epoch_and_its_last_equals_the_saved_model(trained):
    out, result = trained
    run = result["runs"][2]  # bit 7, seed 0
    found = fourier_tracking.read(out / run["run_dir"])
    assert sorted(map(int, found["epochs"])) == [0, 1, 2, 3]  # 0: before the first step
    last = found["epochs"]["3"]
    assert last["half_mse"] == pytest.approx(run["half_mse"], rel=1e-6)
    subsets = [boolean.subset_of(b) for b in found["subset_bits"]]
    assert (
        subsets
        == found["subsets"]
        == fourier_tracking.tracked_subsets(boolean.target_values(f3()), (7,))
    )
    np.testing.assert_allclose(last["coefficients"], run["learned_coefficients"], atol=1e-6)
    # the target's coefficients on the tracked monomials, exactly
    all_coefficients = boolean.fourier_coefficients(boolean.target_values(f3()))
    np.testing.assert_allclose(found["target_coefficients"], all_coefficients[subsets])


def test_training_minimises_the_mean_squared_error_on_the_frozen_stream(trained):
    out, result = trained
    folder = out / result["runs"][0]["run_dir"]
    record = json.loads((folder / "record.json").read_text())
    finished = load_run(folder)
    x, y = data.boolean_arrays(f3(), 256, split="test", seed=0)
    predictions = np.asarray(finished.model.predict_on_batch(x), np.float64)[:, 0]
    mse = float(np.mean((predictions - y) ** 2))
    assert record["final"]["test_loss"] == pytest.approx(mse, rel=1e-4)
    again = finished.evaluate()
    assert again["loss"] == pytest.approx(mse, rel=1e-4)
    assert again["accuracy"] == pytest.approx(np.mean(np.abs(predictions - y) < 0.5))
    losses = record["history"]["train_loss"]
    assert losses[-1] < losses[0]


def test_run_again_trains_nothing_and_says_the_same(recipe, trained, capsys):
    out, result = trained
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/record.json")}
    recipe.main([*TINY, "--out", str(out)])
    assert "0 to run" in capsys.readouterr().out
    recipe.main([*TINY, "--bits", "3", "--seeds", "0", "--name", "bit3", "--out", str(out)])
    assert "train MSE" in capsys.readouterr().out  # a regression's progress: its losses
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    again = json.loads((out / "boolean_holdout.json").read_text())
    assert again["bits"] == result["bits"]


def test_export_keeps_the_records_and_summary_not_the_models(trained, tmp_path):
    out, result = trained
    exporter = scripts.load("tools/export_results.py")
    results = tmp_path / "results"
    results.mkdir()
    (results / "boolean").symlink_to(out)  # the layout of tools/studies/medium_studies.sh
    exporter.main([str(results), str(tmp_path / "docs")])
    study = tmp_path / "docs" / "boolean"
    names = {p.name for p in study.iterdir()}
    assert {"results.jsonl", "boolean_holdout.json", "boolean_holdout.csv", "boolean_holdout.png",
            "config_boolean_holdout.json", "sweeps"} <= names  # fmt: skip
    assert "runs" not in names and not list(study.rglob("*.keras"))
    lines = [json.loads(s) for s in (study / "results.jsonl").read_text().splitlines()]
    ids = json.loads((study / "sweeps" / "boolean_holdout.json").read_text())["run_ids"]
    mine = [r["run_dir"] for r in lines if r["id"] in ids]  # (other settings may share --out)
    assert sorted(mine) == sorted(r["run_dir"] for r in result["runs"])
    assert json.loads((study / "boolean_holdout.json").read_text())["bits"] == result["bits"]
