"""tools/evaluate.py and training.load_run: a finished run's model on fresh data."""

import json
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pvr_keras import cli, data, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import records

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import token_pvr  # noqa: E402

from tests import scripts  # noqa: E402

evaluate = scripts.load("tools/evaluate.py")

TINY = ["--num-examples", "3000", "--test-examples", "700", "--min-steps", "0", "--epochs", "2"]


@pytest.fixture(scope="module")
def holdout_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "run"
    token_pvr.main([*TINY, "--window", "2", "--holdout", "1", "--out", str(out)])
    return out


def test_reproduces_the_recorded_accuracies(holdout_run, capsys):
    record = training.read_record(holdout_run)
    result = evaluate.main([str(holdout_run), "--holdout", "1", "0"])
    held, iid = result["rows"]
    # The run's own held-out test set, and the IID test set its record reports beside it.
    assert held["accuracy"] == pytest.approx(record["final"]["test_accuracy"], abs=1.5 / 700)
    assert iid["accuracy"] == pytest.approx(record["final"]["iid_test_accuracy"], abs=1.5 / 700)
    assert held["loss"] == pytest.approx(record["final"]["test_loss"], rel=1e-4)
    assert (held["examples"], held["window"], held["holdout"]) == (700, 2, 1)
    printed = capsys.readouterr().out
    assert "split  window  holdout  seed  examples  accuracy    loss" in printed
    # The summary names the run's model and rounds the recorded accuracy.
    accuracy = record["final"]["test_accuracy"]
    assert (f"token run, model mlp, recorded test accuracy {accuracy:.4f} "
            f"({100 * accuracy:.2f}%)") in printed  # fmt: skip


def test_a_field_the_run_cannot_take_is_refused_before_tensorflow(tmp_path):
    """``--holdout 3`` of a window-2 run: refused from the record, without loading a
    framework or the model (here not even a model, only the file's name)."""
    run = Run.make("token", window=2)
    folder = tmp_path / "run"
    folder.mkdir()
    record = {"format": records.FORMAT, "format_version": records.FORMAT_VERSION,
              "status": "complete", "config": run.to_dict()}  # fmt: skip
    (folder / "record.json").write_text(json.dumps(record))
    (folder / "model.keras").write_bytes(b"")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO / "tools")!r})
        import evaluate
        from pvr_keras.cli import ConfigError
        try:
            evaluate.parse([{str(folder)!r}, "--window", "2", "--holdout", "1", "3"])
        except ConfigError as err:
            print("ConfigError:", err)
        print("loaded:", sorted(m for m in ("keras", "tensorflow", "jax") if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # fmt: skip
    assert "ConfigError: holdout must be in 0..window! = 0..2" in done.stdout, done.stderr[-2000:]
    assert "loaded: []" in done.stdout


def test_other_window_split_and_seed_are_computed_from_the_model(holdout_run, tmp_path):
    run = training.load_run(holdout_run)
    row = run.evaluate(split="train", window=3, holdout=0, seed=9, num_examples=300)
    x, y = data.token_arrays(TokenTask(window=3), 300, split="train", seed=9)
    expected = (run.model.predict(x, verbose=0).argmax(-1) == y).mean()
    # Keras's accuracy (float32), as training scores it: one example of 300 is 3.3e-3.
    assert row["accuracy"] == pytest.approx(expected, abs=1e-6) and row["window"] == 3
    out = tmp_path / "rows.json"
    evaluate.main([str(holdout_run), "--window", "1", "3", "--json", str(out)])
    assert [r["window"] for r in json.loads(out.read_text())] == [1, 3]
    assert np.isfinite([r["loss"] for r in json.loads(out.read_text())]).all()


def test_bad_requests(holdout_run, tmp_path):
    with pytest.raises(cli.ConfigError, match="no record.json and no model.keras"):
        evaluate.main([str(tmp_path)])
    with pytest.raises(cli.ConfigError, match="holdout must be in 0..window! = 0..1"):
        evaluate.main([str(holdout_run), "--window", "1", "--holdout", "2"])
    with pytest.raises(cli.ConfigError, match="--num-examples must be >= 1"):
        evaluate.main([str(holdout_run), "--num-examples", "0"])


@pytest.mark.slow
def test_block_run(block_iid_run):
    out, record, _ = block_iid_run
    row = training.load_run(out).evaluate()
    assert row["accuracy"] == pytest.approx(record["final"]["test_accuracy"], abs=1.5 / 200)
