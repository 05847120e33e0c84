"""recipes/block_iid.py end to end with a tiny config on the real MNIST of the shared data dir."""

import json
import os
import pathlib
import sys

import keras
import pandas as pd
import pytest

from pvr_keras import data
from pvr_keras.tasks import BlockTask
from pvr_keras.training import read_record
from pvr_keras.training.records import HISTORY_COLUMNS

from .conftest import BLOCK_TINY as TINY

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import block_iid  # noqa: E402


def test_presets():
    paper, _ = block_iid.COMMAND.parse(["--preset", "paper"])
    quick, _ = block_iid.COMMAND.parse([])
    assert (paper.model, paper.width, paper.values) == ("resnet18", 64, "mnist")
    assert (paper.learning_rate, paper.batch_size, paper.epochs) == (1e-4, 50, 10)
    assert (paper.num_examples, paper.test_examples, paper.schedule) == (60_000, 10_000, "constant")
    assert quick.width < paper.width and quick.num_examples < paper.num_examples


@pytest.mark.slow
def test_recipe_end_to_end(block_iid_run, tfds_dir):
    out, record, printed = block_iid_run
    for name in ("config.json", "record.json", "history.csv", "learning_curve.png", "model.keras"):
        assert (out / name).is_file(), name
    assert not (out / "checkpoint").exists()
    history = pd.read_csv(out / "history.csv")
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert history["epoch"].tolist() == [1]
    saved = read_record(out)
    assert saved == json.loads(json.dumps(record))
    assert saved["status"] == "complete" and saved["model"] == "vgg11_bn"
    assert saved["config"]["holdout"] is False and saved["config"]["width"] == 1
    assert "out" not in saved["config"]  # a finished run folder can be moved
    assert saved["num_examples"] == 300 and saved["steps_per_epoch"] == 6  # batch 50
    assert saved["recipe"]["optimizer"] == "adam" and saved["recipe"]["batch_size"] == 50
    assert saved["backend"] == os.environ.get("KERAS_BACKEND", "tensorflow")
    # The test accuracy again, from the saved model on the same 200 test examples.
    model = keras.saving.load_model(out / "model.keras")
    x, y, _ = data.block_arrays(BlockTask(), 200, split="test", seed=0, data_dir=tfds_dir)
    accuracy = float((model.predict(x, batch_size=50, verbose=0).argmax(-1) == y).mean())
    assert saved["final"]["test_accuracy"] == pytest.approx(accuracy, abs=1e-6)
    assert json.loads((out / "config.json").read_text())["system"]["data_dir"] == str(tfds_dir)
    assert saved["system"]["data_dir"] == str(tfds_dir)  # how it ran, beside its identity
    assert "IID" in printed and "test accuracy" in printed


def test_missing_data_dir_fails_fast_with_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="tfds build"):
        block_iid.main([*TINY, "--data-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path)])


def test_bad_model_is_refused():
    from pvr_keras.cli import ConfigError

    with pytest.raises(
        ConfigError,
        match="model must be one of resnet18, vgg11_bn .the image "
        "models. or a builder reference .* received 'resnet50' .not a registered",
    ):
        block_iid.main(["--model", "resnet50"])  # fmt: skip
