"""recipes/block_interventions.py: presets, a bad flag in one line, and a tiny run end to end
on the real MNIST of the shared data dir (VGG11-BN at width 1, 300 examples, one epoch)."""

import contextlib
import csv
import io
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from .conftest import BLOCK_TINY

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import block_interventions  # noqa: E402

QUADRANTS = ["TL", "TR", "BL", "BR"]


def test_presets():
    quick = block_interventions.COMMAND.parse_all([])
    assert (quick.run.model, quick.run.width, quick.run.num_examples) == ("resnet18", 8, 25_000)
    assert (quick.run.epochs, quick.run.batch_size, quick.run.schedule) == (5, 50, "cosine")
    assert quick.run.seed == 1 and quick.own.pairs == 512
    assert quick.own.layers == ("block1", "block3", "block5", "block7")
    assert quick.own.all_at == ("block5",)
    medium = block_interventions.COMMAND.parse_all(["--preset", "medium"])
    assert medium.axes == {"seed": (1, 2, 3)} and medium.run.width == 16


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--pairs", "0"], "--pairs must be a positive integer; received 0"),
        (["--pairs", "5000"], "--pairs must be at most 4,096"),
        (["--aligned", "0"], "--aligned must be"),
        (["--layers", "block5", "block5"], "--layers must be distinct layer names"),
        (["--grid", "3"], "the variables TL, TR, BL, BR are those of 2x2 blocks"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_status_2(flags, message, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(REPO / "recipes" / "block_interventions.py"), *flags,
         "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_recipe_end_to_end(tfds_dir, tmp_path):
    from pvr_keras import counterfactuals as cf
    from pvr_keras.counterfactuals.patching import Interchange
    from pvr_keras.tasks import BlockTask
    from pvr_keras.training import load_run

    out = tmp_path / "study"
    argv = [*BLOCK_TINY, "--data-dir", str(tfds_dir), "--out", str(out), "--pairs", "24",
            "--pairs-seed", "5", "--layers", "block1", "block5", "--name", "cells"]  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        summary = block_interventions.main(argv)
    (run,) = summary["runs"]
    for name in ("cells.json", "cells.csv", f"cells_{run['id']}.png", "results.jsonl"):
        assert (out / name).is_file(), name
    assert (out / "runs" / run["id"] / "model.keras").is_file()
    saved = json.loads((out / "cells.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    assert saved["pairs"] == 24 and saved["changing_pairs"] is True
    grid = run["grid"]
    assert grid["layers"] == ["block1", "block5"] and grid["positions"] == QUADRANTS
    assert list(grid["iia"]) == QUADRANTS and list(grid["changed"]) == QUADRANTS
    for name, rows in grid["iia"].items():
        assert len(rows) == 2 and all(len(row) == 4 for row in rows)
        assert all(0 <= v <= 1 for row in rows for v in row)
        assert 0 < grid["changed"][name] < 1
    assert grid["shapes"]["block5"] == [10, 10, 8]  # VGG11-BN at width 1
    both = grid["all_quadrants"]
    assert both["variables"] == QUADRANTS and list(both["iia"]) == ["block5"]
    # aligned: every (layer, quadrant) at or above --aligned, from the grid by hand
    expected = {
        name: [[layer, q, v] for layer, row in zip(grid["layers"], rows, strict=True)
               for q, v in zip(QUADRANTS, row, strict=True) if v >= 0.9]
        for name, rows in grid["iia"].items()
    }  # fmt: skip
    assert saved["runs"][0]["aligned"] == expected
    # The CSV holds the same numbers: 4 variables x 2 layers x 4 quadrants, and the four at once.
    rows = list(csv.DictReader(io.StringIO((out / "cells.csv").read_text())))
    assert len(rows) == 4 * 2 * 4 + 1
    for row in rows[:-1]:
        layer = grid["layers"].index(row["layer"])
        value = grid["iia"][row["variable"]][layer][QUADRANTS.index(row["position"])]
        assert float(row["iia"]) == pytest.approx(value)
    assert (rows[-1]["variable"], rows[-1]["layer"], rows[-1]["position"]) == (
        "TL+TR+BL+BR", "block5", "all")  # fmt: skip
    # One cell again, from the saved model: the first 24 of the random test pairs of seed 5
    # whose label the interchange of BR changes (cf.pairs's changing pairs, without drawing
    # the 1,024 candidates it draws for them).
    task = BlockTask()
    model = load_run(out / "runs" / run["id"]).model
    every = cf.pairs(task, 120, "BR", seed=5, split="test", holdout=False, data_dir=tfds_dir)
    kept = np.flatnonzero(every.label != every.counterfactual_label)[:24]
    logits = Interchange(model, "block5").predict(every.base[kept], every.source[kept], ["TR"])
    again = cf.score(logits, every.counterfactual_label[kept])
    assert grid["iia"]["BR"][1][1] == pytest.approx(again)
    text = printed.getvalue()
    assert "TL: best IIA" in text and "all four variables at all quadrants: block5" in text
