"""recipes/block_holdout.py end to end with a tiny config: runs, logit analysis, figure.

Two tiny trainings: an IID run by block_iid.py (shared with its tests, see conftest.py),
reused, and the holdout run; the path that trains its own IID model is checked on copies of
those finished runs.
"""

import csv
import json
import pathlib
import shutil
import sys

import keras
import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.tasks import BlockTask
from pvr_keras.training import read_record
from pvr_keras.training.records import FORMAT, FORMAT_VERSION
from tests.plots import assert_plot

from .conftest import BLOCK_TINY

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import block_holdout  # noqa: E402
import block_iid  # noqa: E402

TINY = BLOCK_TINY  # --test-examples 200
SUBSETS = ["pointer 0, label 1-3", "pointer to top right", "pointer to bottom left"]
SUBSETS += ["pointer to bottom right"]


@pytest.fixture(scope="module")
def iid_run(block_iid_run):
    return block_iid_run[0]


@pytest.fixture(scope="module")
def reused(iid_run, tfds_dir, tmp_path_factory):
    """A holdout run reusing ``iid_run`` as its IID model: (out folder, summary)."""
    out = tmp_path_factory.mktemp("holdout") / "run"
    argv = [*TINY, "--data-dir", str(tfds_dir), "--iid-run", str(iid_run), "--out", str(out)]
    return out, block_holdout.main(argv)


@pytest.mark.slow
def test_holdout_run_and_outputs(reused, iid_run, capsys):
    out, summary = reused
    assert not (out / "iid").exists()  # reused, not trained again
    for name in ("config.json", "logits.json", "logits.csv", "logits.png"):
        assert (out / name).is_file(), name
    assert_plot(out / "logits.png")
    record = read_record(out / "holdout")
    assert record["status"] == "complete" and record["config"]["holdout"] is True
    assert (out / "holdout" / "model.keras").is_file()
    saved = json.loads((out / "logits.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    assert saved["iid_run"] == str(iid_run)
    assert saved["holdout_test_accuracy"] == record["final"]["test_accuracy"]
    assert saved["holdout_train_accuracy"] == record["final"]["train_eval_accuracy"]
    assert saved["iid_test_accuracy"] == read_record(iid_run)["final"]["test_accuracy"]
    assert list(saved["models"]) == ["IID", "holdout"]


@pytest.mark.slow
def test_logit_numbers_match_the_models(reused, iid_run, tfds_dir):
    """Every mean in logits.json and logits.csv against the saved models' own logits."""
    out, summary = reused
    task = BlockTask()
    x, y, info = data.block_arrays(
        task, 200, split="test", seed=0, holdout=True, data_dir=str(tfds_dir)
    )
    pointer = info["cell_labels"][:, 0]
    masks = {
        SUBSETS[0]: (pointer == 0) & np.isin(y, [1, 2, 3]),
        SUBSETS[1]: pointer <= 3,
        SUBSETS[2]: (pointer >= 4) & (pointer <= 6),
        SUBSETS[3]: pointer >= 7,
    }
    with open(out / "logits.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for name, folder in (("IID", iid_run), ("holdout", out / "holdout")):
        logits = keras.saving.load_model(folder / "model.keras").predict(x, verbose=0)
        result = summary["models"][name]
        assert result["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == y))
        assert list(result["subsets"]) == SUBSETS
        for subset, mask in masks.items():
            group, key = result["subsets"][subset], (name, subset)
            assert group["count"] == mask.sum() > 0
            want = logits[mask].mean(axis=0)
            np.testing.assert_allclose(group["mean_logits"], want, rtol=1e-4, atol=1e-5)
            got = [float(r["mean_logit"]) for r in rows if (r["model"], r["subset"]) == key]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        for label in range(10):
            if (y == label).any():
                np.testing.assert_allclose(
                    result["mean_logits_by_class"][label],
                    logits[y == label].mean(axis=0),
                    rtol=1e-4,
                    atol=1e-5,
                )
        right = result["subsets"]["pointer to bottom right"]
        assert right["held_out_classes"] == [7, 8, 9, 0]
        mean = np.array(right["mean_logits"])
        assert right["mean_logit_held_out"] == pytest.approx(mean[[7, 8, 9, 0]].mean())
        assert right["mean_logit_other"] == pytest.approx(mean[1:7].mean())


@pytest.mark.slow
def test_without_iid_run_the_iid_model_lives_in_the_folder(reused, iid_run, tfds_dir, tmp_path):
    """Without --iid-run the IID run is out/iid (trained there, or resumed/found complete)."""
    first, summary = reused
    out = tmp_path / "run"
    shutil.copytree(iid_run, out / "iid")
    shutil.copytree(first / "holdout", out / "holdout")
    again = block_holdout.main([*TINY, "--data-dir", str(tfds_dir), "--out", str(out)])
    assert again["iid_run"] == str(out / "iid")
    assert read_record(out / "iid")["finished"] == read_record(iid_run)["finished"]  # found
    for name, result in again["models"].items():  # the same models on the same examples
        before = summary["models"][name]
        assert result["accuracy"] == before["accuracy"]
        for subset, group in result["subsets"].items():
            np.testing.assert_allclose(
                group["mean_logits"], before["subsets"][subset]["mean_logits"], rtol=1e-5
            )
    assert (out / "logits.png").is_file()


def test_held_out_test_set_has_only_held_out_values(tfds_dir):
    """The analysed examples are the Figure 6 test set: each label is held out in its cell."""
    task = BlockTask()
    _, y, info = data.block_arrays(
        task, 200, split="test", seed=0, holdout=True, data_dir=str(tfds_dir)
    )
    held = dict(zip((1, 2, 3), task.holdout_classes(), strict=True))
    cells = task.named_cell(info["cell_labels"][:, 0])
    assert all(label in held[cell] for label, cell in zip(y, cells, strict=True))


def _fake_run(folder, status="complete", **changes):
    """A run folder as block_iid.py leaves it, without training (the model file is empty)."""
    run, _ = block_iid.COMMAND.parse(["--model", "vgg11_bn", "--width", "1"])
    record = {"format": FORMAT, "format_version": FORMAT_VERSION, "status": status}
    record["config"] = {**run.to_dict(), "holdout": False, **changes}
    folder.mkdir(parents=True)
    (folder / "record.json").write_text(json.dumps(record))
    (folder / "model.keras").write_bytes(b"")
    return folder


QUICK_TINY = ["--model", "vgg11_bn", "--width", "1"]


def test_iid_run_of_another_config_is_refused_before_training(tfds_dir, tmp_path):
    fake = _fake_run(tmp_path / "iid", width=4, epochs=2)
    argv = [*QUICK_TINY, "--data-dir", str(tfds_dir), "--iid-run", str(fake)]
    with pytest.raises(ValueError, match=r"another configuration.*'epochs': \(2, 5\)"):
        block_holdout.main([*argv, "--out", str(tmp_path / "run")])
    assert not (tmp_path / "run").exists()
    fake = _fake_run(tmp_path / "holdout_run", holdout=True)
    with pytest.raises(ValueError, match=r"'holdout': \(True, False\)"):
        block_holdout.main([*QUICK_TINY, "--iid-run", str(fake), "--out", str(tmp_path / "r")])


def test_iid_run_that_is_not_a_finished_run_is_refused(tfds_dir, tmp_path):
    argv = [*QUICK_TINY, "--data-dir", str(tfds_dir), "--out", str(tmp_path / "run")]
    with pytest.raises(
        ValueError, match="not a finished block_iid run folder: no record.json and no model.keras"
    ):
        block_holdout.main([*argv, "--iid-run", str(tmp_path / "none")])
    running = _fake_run(tmp_path / "running", status="running")
    with pytest.raises(ValueError, match="is not complete"):
        block_holdout.main([*argv, "--iid-run", str(running)])
    assert not (tmp_path / "run").exists()


def test_presets_follow_block_iid():
    """The two recipes share their presets, so that a block_iid run can stand in for
    block_holdout's IID model."""
    for name in block_holdout.COMMAND.presets:
        run, own = block_holdout.COMMAND.parse(["--preset", name])
        iid, _ = block_iid.COMMAND.parse(["--preset", name])
        assert run.replace(holdout=False).to_dict() == iid.to_dict()
        assert own.iid_run is None and own.out.startswith("runs/block_holdout/")
