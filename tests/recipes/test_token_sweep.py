"""recipes/token_sweep.py: the grids of every sweep and preset, a tiny sweep end to end, kill."""

import json
import math
import os
import pathlib
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from tests import scripts
from tests.plots import assert_plot

REPO = pathlib.Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "token_sweep.py"
TINY = [
    "--models", "mlp", "--windows", "1", "--sizes", "1000", "2000", "--seeds", "0",
    "--epochs", "1", "--warmup-epochs", "0", "--min-steps", "0", "--test-examples", "500",
]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/token_sweep.py")


def _build(recipe, *flags):
    return recipe.build(recipe.COMMAND.parse_all(list(flags)))


def test_paper_grids(recipe):
    runs, figure = _build(recipe, "--preset", "paper", "--sweep", "size_window")
    assert len(runs) == 4 * 4 * 9 * 3 + 2 * 4 * 3 * 3  # Figures 9/10, plus Figure 11's sizes
    assert {r.model for r in runs} == {"mlp", "mlp2x", "transformer", "mixer"}
    assert min(r.num_examples for r in runs) == 100
    assert max(r.num_examples for r in runs) == 50_000_000
    big = {r.model for r in runs if r.num_examples > 1_000_000}
    assert big == {"mlp", "mixer"}
    assert all((r.epochs, r.batch_size, r.min_steps, r.warmup_epochs) == (200, 1024, 800, 10)
               for r in runs)  # fmt: skip
    assert figure["panels"] == ["model"] and figure["x"] == "num_examples"

    # Axes given on the command line: their grid only, without Figure 11's extra sizes.
    runs, _ = _build(recipe, "--preset", "paper", "--sweep", "size_window", "--models", "mixer",
                     "--windows", "4", "--sizes", "500000", "5000000", "--seeds", "0")  # fmt: skip
    assert sorted(r.num_examples for r in runs) == [500_000, 5_000_000]

    runs, _ = _build(recipe, "--preset", "paper", "--sweep", "aggregations")
    assert {r.aggregation for r in runs} == {"mod_sum", "median", "maj_vote", "min", "max"}
    runs, figure = _build(recipe, "--preset", "paper", "--sweep", "pointer")
    assert {r.pointer for r in runs} == {False, True} and {r.model for r in runs} == {"mixer"}
    assert figure["panels"] == ["pointer"]

    runs, figure = _build(recipe, "--preset", "paper", "--sweep", "holdout")
    ks = {w: sorted({r.holdout for r in runs if r.window == w}) for w in (2, 3)}
    assert ks == {2: [0, 1, 2], 3: list(range(7))}  # k = 0..window!
    # + Appendix E: window 3, the 6 permutations of (1, 2, 3) held out, every seed.
    assert len(runs) == (3 + 7 + 1) * 5 and {r.num_examples for r in runs} == {300_000}
    assert figure["discard_below"] == 0.6  # the paper's rule for Figure 14
    appendix_e = [r for r in runs if r.holdout_values is not None]
    assert {(r.window, r.holdout, r.holdout_values) for r in appendix_e} == {(3, 6, (1, 2, 3))}


def test_medium_grids(recipe):
    runs, _ = _build(recipe, "--preset", "medium", "--sweep", "holdout")
    found = sorted((r.window, r.holdout, r.holdout_values or ()) for r in runs if r.seed == 0)
    assert found == [(2, 0, ()), (2, 1, ()), (2, 2, ()), (3, 0, ()), (3, 1, ()), (3, 6, ()),
                     (3, 6, (1, 2, 3))]  # fmt: skip
    assert {r.seed for r in runs} == {0, 1} and {r.model for r in runs} == {"mlp"}
    assert all(r.model_kwargs == {} for r in runs)  # the paper's MLP
    assert {(r.window, r.epochs, r.warmup_epochs) for r in runs} == {(2, 30, 2), (3, 80, 3)}
    assert all((r.batch_size, r.num_examples, r.min_steps) == (1024, 300_000, 800) for r in runs)
    # A grid axis given on the command line leaves Appendix E's extra runs out.
    runs, _ = _build(recipe, "--preset", "medium", "--sweep", "holdout", "--windows", "2")
    assert {r.window for r in runs} == {2} and len(runs) == 3 * 2
    runs, _ = _build(recipe, "--preset", "medium", "--sweep", "holdout", "--epochs", "5")
    assert {r.epochs for r in runs} == {5}  # a flag beats the per-window recipe

    runs, _ = _build(recipe, "--preset", "medium", "--sweep", "size_window")
    mlp = [r for r in runs if r.model == "mlp"]
    assert {(r.window, r.num_examples) for r in mlp} == {
        (w, n) for w in (2, 3) for n in (10_000, 30_000, 100_000, 300_000)
    }
    others = {(r.model, r.window, r.num_examples, r.model_arguments()["dim"]) for r in runs
              if r.model != "mlp"}  # fmt: skip
    assert others == {
        (m, 2, n, 64) for m in ("transformer", "mixer") for n in (10_000, 30_000, 100_000)
    }
    assert all("-x0.125-" in r.run_id for r in runs if r.model != "mlp")
    # The MLP at window 2 on the paper's own 200-epoch recipe at the small sizes, beside the
    # medium schedule's runs of the same sizes (other ids, so both are kept).
    paper = sorted((r.window, r.num_examples, r.seed) for r in mlp if r.epochs == 200)
    assert paper == [(2, n, s) for n in (10_000, 30_000) for s in (0, 1)]
    assert {r.warmup_epochs for r in mlp if r.epochs == 200} == {10}
    assert {(r.window, r.epochs) for r in mlp if r.epochs != 200} == {(2, 30), (3, 80)}
    assert len({r.run_id for r in runs}) == len(runs) == 16 + 6 + 4
    runs, _ = _build(recipe, "--preset", "medium", "--sweep", "size_window", "--epochs", "5")
    assert {r.epochs for r in runs} == {5}  # a flag beats an extra's recipe too
    with pytest.raises(ValueError, match="pointer sweep has presets paper, quick"):
        _build(recipe, "--preset", "medium", "--sweep", "pointer")


def test_quick_grids_are_small(recipe):
    for sweep in recipe.SWEEPS:
        runs, _ = _build(recipe, "--sweep", sweep)
        assert len(runs) <= 20, sweep
        assert all(r.model == "mlp" and r.batch_size == 128 for r in runs)
        assert max(r.num_examples for r in runs) <= 30_000
    runs, _ = _build(recipe, "--sweep", "size_window")
    assert {r.window for r in runs} == {1, 2} and min(r.num_examples for r in runs) == 2000
    assert all((r.min_steps, r.model_kwargs) == (600, {}) for r in runs)  # the paper's MLP
    runs, _ = _build(recipe, "--sweep", "holdout")
    assert all(r.model_kwargs == {"widths": (128, 256, 128, 64)} for r in runs)
    assert sorted((r.seed, r.holdout) for r in runs) == [(s, k) for s in (0, 1) for k in range(3)]
    assert {(r.window, r.epochs) for r in runs} == {(2, 50)}


def test_flags_replace_grid_defaults(recipe):
    runs, _ = _build(
        recipe, "--sweep", "holdout", "--windows", "2", "--holdouts", "1", "2", "--seeds", "0"
    )
    assert sorted(r.holdout for r in runs) == [1, 2]
    runs, _ = _build(recipe, *TINY)
    assert [(r.num_examples, r.epochs, r.test_examples) for r in runs] == [
        (1000, 1, 500),
        (2000, 1, 500),
    ]


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--sweep", "holdout", "--windows", "2", "--holdouts", "3"], "holdout must be in"),
        (["--holdouts", "1"], "holdouts is for the holdout sweep"),
        (["--models", "resnet18"], "model must be one of mlp, mlp2x, transformer, mixer .the"),
        (["--sizes", "0"], "num_examples"),
        (["--shard", "2/2"], "shard"),
        (["--models", "mlp", "mixer", "--widths", "8"], "widths is for the mlp model only"),
    ],
)
def test_bad_config(recipe, flags, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        recipe.main([*flags, "--dry-run", "--out", str(tmp_path)])


def test_dry_run_trains_nothing(recipe, tmp_path, capsys):
    result = recipe.main(["--preset", "paper", "--dry-run", "--out", str(tmp_path / "r")])
    assert result["total"] == 504 and not (tmp_path / "r").exists()
    assert "mixer: 144 runs, 1.55e+11 training examples" in capsys.readouterr().out


@pytest.mark.slow  # two tiny runs and the figures: ~10 s each on a loaded CPU
def test_tiny_sweep_end_to_end(recipe, tmp_path, capsys):
    out = tmp_path / "results"
    summary = recipe.main([*TINY, "--out", str(out)])
    assert len(summary["trained"]) == 2 and summary["recorded_before"] == 0
    frame = pd.read_json(out / "results.jsonl", lines=True)
    assert sorted(frame["num_examples"]) == [1000, 2000] and frame["id"].is_unique
    assert set(frame["sweep"]) == {"size_window"} and frame["test_accuracy"].between(0, 1).all()
    assert (out / "figures" / "size_window.csv").is_file()
    for name in ("size_window_test_accuracy.png", "size_window_train_accuracy.png"):
        assert_plot(out / "figures" / name)
    config = json.loads((out / "config_size_window.json").read_text())
    assert config["grid"]["num_examples"] == [1000, 2000]  # the axes given several values
    assert config["run"]["num_examples"] == 1000 and "sizes" not in config["recipe"]
    printed = capsys.readouterr().out
    assert "[size_window] 2/2 runs done" in printed and "ETA" in printed
    again = recipe.main([*TINY, "--out", str(out)])  # started again: nothing left to run
    assert again["trained"] == [] and again["recorded_before"] == 2
    # A larger grid into the same results directory grows the sweep (its config follows).
    grown = recipe.main([*TINY, "--sizes", "1000", "2000", "3000", "--out", str(out)])
    assert len(grown["trained"]) == 1 and grown["recorded_before"] == 2
    config = json.loads((out / "config_size_window.json").read_text())
    assert config["grid"]["num_examples"] == [1000, 2000, 3000]


@pytest.mark.slow
def test_sigkill_then_rerun_completes_without_duplicates(recipe, tmp_path, capsys):
    """A real sweep process killed with SIGKILL after its first record, then started again
    (here, in the test's process)."""
    out = tmp_path / "results"
    flags = [*TINY, "--sizes", "1000", "2000", "3000", "--epochs", "3", "--no-figures",
             "--out", str(out)]  # fmt: skip
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.Popen([sys.executable, str(RECIPE), *flags], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    results = out / "results.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and not (results.exists() and results.read_bytes()):
        time.sleep(0.1)
    time.sleep(1.0)  # into the second run
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed = pd.read_json(results, lines=True)
    assert 1 <= len(killed) < 3
    capsys.readouterr()
    recipe.main(flags)
    assert f"{len(killed)} already recorded" in capsys.readouterr().out
    frame = pd.read_json(results, lines=True)
    assert sorted(frame["num_examples"]) == [1000, 2000, 3000] and frame["id"].is_unique
    assert all(math.isfinite(a) for a in frame["test_accuracy"])
    assert not list((out / "claims").glob("*.claim"))


@pytest.mark.slow  # one tiny holdout run: ~10 s
def test_holdout_run_records_iid_and_held_out_accuracy(recipe, tmp_path):
    """A holdout run saves its model and records its accuracy on the held-out test windows
    and on an IID test set; both recomputed here from the saved model."""
    import keras

    from pvr_keras import data
    from pvr_keras.tasks import TokenTask

    out = tmp_path / "results"
    flags = [*TINY, "--sweep", "holdout", "--windows", "3", "--holdouts", "6", "--sizes", "2000"]
    recipe.main([*flags, "--no-figures", "--out", str(out)])
    [line] = pd.read_json(out / "results.jsonl", lines=True).to_dict("records")
    model = keras.saving.load_model(out / line["run_dir"] / "model.keras", safe_mode=True)
    task = TokenTask(window=3)
    for holdout, key in ((6, "test_accuracy"), (0, "iid_test_accuracy")):
        x, y = data.token_arrays(task, 500, split="test", seed=0, holdout=holdout)
        accuracy = (model.predict(x, verbose=0).argmax(-1) == y).mean()
        assert line[key] == pytest.approx(accuracy, abs=1e-6), key
