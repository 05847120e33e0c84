"""recipes/image_sequence.py (Figure 2) end to end with a tiny config on the real MNIST."""

import json
import os
import pathlib
import sys

import pandas as pd
import pytest

from pvr_keras.training import read_record

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import image_sequence  # noqa: E402

TINY = ["--conv-widths", "4", "--dim", "8", "--widths", "16", "8", "--num-examples", "300"]
TINY += ["--test-examples", "100", "--train-eval-examples", "100", "--epochs", "1"]


def test_presets():
    paper, paper_own = image_sequence.COMMAND.parse(["--preset", "paper"])
    quick, quick_own = image_sequence.COMMAND.parse([])
    assert (paper.learning_rate, paper.batch_size, paper.epochs) == (1e-4, 50, 10)
    assert paper.model_kwargs["widths"] == (512, 1024, 512, 64)  # the paper's MLP
    assert paper.model_kwargs["dim"] == 64 and paper.model == "image_sequence"
    assert (paper.model_kwargs["head"], quick.model_kwargs["head"]) == ("mlp", "transformer")
    assert paper.model_kwargs["conv_widths"] == (32, 64)  # the conv encoder
    assert quick.model_kwargs["conv_widths"] == ()  # the dense encoder
    assert paper_own.encoder is quick_own.encoder is None  # each preset's own
    assert quick.num_examples > paper.num_examples  # more, cheaper examples on a CPU


@pytest.mark.slow
def test_recipe_end_to_end(tfds_dir, tmp_path, capsys):
    out = tmp_path / "run"
    head = "mlp"  # the transformer head compiles slowly on JAX; tests/models cover it
    argv = [*TINY, "--head", head, "--encoder", "conv", "--window", "2", "--holdout", "1"]
    record = image_sequence.main([*argv, "--data-dir", str(tfds_dir), "--out", str(out)])
    for name in ("config.json", "record.json", "history.csv", "learning_curve.png"):
        assert (out / name).is_file(), name
    saved = read_record(out)
    assert saved == json.loads(json.dumps(record))
    assert saved["status"] == "complete" and saved["model"] == "image_sequence"
    assert saved["config"]["model_kwargs"]["head"] == head and saved["config"]["holdout"] == 1
    assert saved["kind"] == "sequence"
    assert saved["steps_per_epoch"] == 6 and saved["recipe"]["optimizer"] == "adam"
    assert saved["backend"] == os.environ.get("KERAS_BACKEND", "tensorflow")
    assert pd.read_csv(out / "history.csv")["test_accuracy"].notna().all()
    assert "image_sequence" in capsys.readouterr().out


def test_bad_holdout_is_refused_before_training(tfds_dir, tmp_path):
    with pytest.raises(ValueError, match="holdout"):
        image_sequence.main([*TINY, "--holdout", "3", "--data-dir", str(tfds_dir),
                             "--out", str(tmp_path / "run")])  # fmt: skip
    assert not (tmp_path / "run").exists()
