"""recipes/noise_sensitivity.py (Figure 5) end to end with a tiny config."""

import csv
import itertools
import json
import math

import numpy as np
import pytest

from pvr_keras.analysis import noise_sensitivity_runs
from pvr_keras.tasks import TokenTask
from tests import scripts
from tests.plots import assert_plot


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/noise_sensitivity.py")


TINY = ["--windows", "1", "2", "3", "--aggregations", "mod_sum", "min", "max"]
TINY += ["--num-deltas", "4", "--num-samples", "1500", "--runs", "2"]


def test_writes_csv_plots_and_config(recipe, tmp_path, capsys):
    recipe.main([*TINY, "--out", str(tmp_path)])
    with open(tmp_path / "noise_sensitivity.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["aggregation", "window", "delta", "ns", "ns_std"]
    assert len(rows) == 3 * 3 * 4
    deltas = sorted({float(r["delta"]) for r in rows})
    np.testing.assert_allclose(deltas, np.exp(np.linspace(-7, -1, 4)))
    # Every value recomputed: each (aggregation, window) task's per-run estimates (common
    # random numbers: the same draws per delta whatever the other deltas) averaged over runs.
    for (aggregation, window), group in itertools.groupby(
        rows, key=lambda r: (r["aggregation"], int(r["window"]))
    ):
        group = list(group)
        task = TokenTask(window=window, aggregation=aggregation)
        per_run = noise_sensitivity_runs(
            task, [float(r["delta"]) for r in group], num_samples=1500, runs=2, seed=0
        )
        np.testing.assert_allclose([float(r["ns"]) for r in group], per_run.mean(0), rtol=1e-12)
        np.testing.assert_allclose([float(r["ns_std"]) for r in group], per_run.std(0), atol=1e-12)

    mean = {}
    for r in rows:
        mean.setdefault((r["aggregation"], int(r["window"])), []).append(float(r["ns"]))
    mean = {k: np.mean(v) for k, v in mean.items()}
    summary = json.loads((tmp_path / "noise_sensitivity.json").read_text())
    assert summary["wall_time_s"] > 0
    assert {(a, int(w)): v for a, by in summary["mean_ns"].items() for w, v in by.items()} == (
        pytest.approx(mean, rel=1e-12)
    )
    # Figure 5b's trends at this fixed seed: mod_sum rises with the window, min falls, and max
    # ends below where it starts.
    assert mean["mod_sum", 1] < mean["mod_sum", 2] < mean["mod_sum", 3]
    assert mean["min", 1] > mean["min", 2] > mean["min", 3]
    assert mean["max", 3] < mean["max", 1]

    for name in ("noise_sensitivity_mod_sum.png", "noise_sensitivity_aggregations.png"):
        assert_plot(tmp_path / name)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["windows"] == [1, 2, 3] and config["num_samples"] == 1500
    assert config["aggregations"] == ["mod_sum", "min", "max"]
    printed = capsys.readouterr().out
    assert "mean NS_delta over delta" in printed and "wrote" in printed


def test_presets(recipe):
    from pvr_keras import cli

    paper = cli.parse(recipe.Config, recipe.PRESETS, ["--preset", "paper"])
    assert (paper.num_samples, paper.runs) == (10_000, 10)
    assert math.exp(paper.log_delta_min) == pytest.approx(math.exp(-7))
    assert math.exp(paper.log_delta_max) == pytest.approx(math.exp(-1))
    assert cli.parse(recipe.Config, recipe.PRESETS, []).num_samples < paper.num_samples


@pytest.mark.parametrize(
    "flags, match",
    [
        (["--windows", "11"], "window must be between 1 and"),
        (["--aggregations", "min", "--curves", "mod_sum"], "curves must be one of the"),
        (["--log-delta-max", "0"], r"log_delta_max <= ln 0.5"),
        (["--log-delta-min", "-1", "--log-delta-max", "-2"], "log_delta_min < log_delta_max"),
        (["--num-deltas", "1"], "num_deltas must be at least 2; received 1"),
        (["--num-samples", "0"], "num_samples must be a positive integer; received 0"),
        (["--runs", "0"], "runs must be a positive integer; received 0"),
        (["--seed", "-1"], "seed must be a non-negative integer; received -1"),
    ],
)
def test_bad_config_fails_before_writing(recipe, tmp_path, flags, match):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=match):
        recipe.main([*TINY, *flags, "--out", str(out)])
    assert not out.exists()


def test_unknown_aggregation_is_refused_by_the_flags(recipe, tmp_path):
    with pytest.raises(SystemExit):
        recipe.main(["--aggregations", "sum", "--out", str(tmp_path)])
