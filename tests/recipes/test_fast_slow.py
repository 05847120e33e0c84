"""recipes/fast_slow.py (Figures 12 and 13) end to end with tiny models."""

import copy
import dataclasses
import importlib
import json
import shutil

import keras
import numpy as np
import pytest

from pvr_keras import analysis, data
from pvr_keras.tasks import TokenTask
from tests import scripts
from tests.plots import assert_plot

TINY = [
    "--widths", "16", "8", "--window", "2", "--num-examples", "1000", "--test-examples", "500",
    "--seeds", "0", "1", "2", "--epochs", "1", "--warmup-epochs", "0", "--min-steps", "0",
    "--batch-size", "256", "--cka-examples", "300",
]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/fast_slow.py")


@pytest.fixture(scope="module")
def trained(recipe, tmp_path_factory):
    """Three tiny seeds trained once; a low threshold makes them all fit (all fast)."""
    out = tmp_path_factory.mktemp("fast_slow")
    summary = recipe.main([*TINY, "--threshold", "0.01", "--out", str(out)])
    return out, summary


@pytest.mark.slow  # trains three tiny models (~10 s each on a loaded CPU)
def test_end_to_end(trained):
    out, summary = trained
    for name in ("fast_slow.json", "fast_slow.csv", "fast_slow_learning_curves.png",
                 "fast_slow_cka.png", "config_fast_slow.json", "results.jsonl",
                 "sweeps/fast_slow.json"):  # fmt: skip
        assert (out / name).is_file(), name
    assert len(list(out.glob("runs/*/model.keras"))) == 3
    saved = json.loads((out / "fast_slow.json").read_text())
    assert saved["rule"].startswith("fit epoch = first epoch with training accuracy")
    assert [s["fit_epoch"] for s in saved["seeds"]] == [1, 1, 1]
    assert {s["speed"] for s in saved["seeds"]} == {"fast"}  # all alike: no slow learner
    assert saved["slow"] is None and (saved["fast1"], saved["fast2"]) == (0, 1)
    assert any("no clear slow learner" in note for note in saved["notes"])
    assert "fast1_slow" not in saved["cka"]
    assert 0 < saved["cka"]["fast1_fast2"] <= 1 and saved["cka"]["examples"] == 300
    assert saved["cka"]["on"] == "training set of seed 1 (no slow learner)"
    assert sorted(saved["cka"]["all_pairs"]) == ["0-1", "0-2", "1-2"]
    assert saved["cka"]["all_pairs"]["0-1"] == pytest.approx(saved["cka"]["fast1_fast2"])
    pairs = saved["cka"]["all_pairs"].values()
    assert saved["cka"]["mean_by_kind"] == {"fast_fast": pytest.approx(sum(pairs) / 3)}
    rows = (out / "fast_slow.csv").read_text().splitlines()
    assert rows[0] == "seed,fit_epoch,speed,final_train_accuracy,final_test_accuracy"
    assert len(rows) == 4
    for name in ("fast_slow_learning_curves.png", "fast_slow_cka.png"):
        assert_plot(out / name)

    # Every CKA value again, from the saved models, by the formula (not pvr_keras.analysis):
    # pre_logits features on the first 300 training examples of seed 1.
    x, y = data.token_arrays(TokenTask(window=2), 300, split="train", seed=1)
    features = {}
    for path in out.glob("runs/*/model.keras"):
        model = keras.saving.load_model(path)
        tap = keras.Model(model.input, model.get_layer("pre_logits").output)
        seed = json.loads((path.parent / "record.json").read_text())["seed"]
        features[seed] = keras.ops.convert_to_numpy(tap(x)).astype(np.float64)
    assert sorted(features) == [0, 1, 2]
    for pair, value in saved["cka"]["all_pairs"].items():
        a, b = map(int, pair.split("-"))
        assert value == pytest.approx(_linear_cka(features[a], features[b]), rel=1e-4), pair
    assert saved["cka"]["fast1_fast2"] == pytest.approx(_linear_cka(features[0], features[1]))
    # the same pairs at each block: first hidden layer by the formula, pre_logits as above
    layers = saved["cka"]["by_layer"]
    assert list(layers) == ["block0", "pre_logits"]  # widths 16, 8: the last is pre_logits
    assert layers["pre_logits"]["all_pairs"] == pytest.approx(saved["cka"]["all_pairs"])
    for path in out.glob("runs/*/model.keras"):
        model = keras.saving.load_model(path)
        seed = json.loads((path.parent / "record.json").read_text())["seed"]
        tap = keras.Model(model.input, model.get_layer("block0").output)
        features[f"block0 {seed}"] = keras.ops.convert_to_numpy(tap(x)).astype(np.float64)
    expected = _linear_cka(features["block0 0"], features["block0 2"])
    assert layers["block0"]["all_pairs"]["0-2"] == pytest.approx(expected, rel=1e-4)
    assert layers["block0"]["fast1_fast2"] == pytest.approx(layers["block0"]["all_pairs"]["0-1"])
    # and each seed's label frequencies, from the same features and labels
    freq = saved["cka"]["label_frequencies"]
    assert sorted(freq) == ["0", "1", "2"]
    for seed, stored in freq.items():
        expected = analysis.label_frequencies(features[int(seed)], y, 10)
        assert stored["class_share"] == pytest.approx(expected["class_share"], rel=1e-4)
        np.testing.assert_allclose(stored["frequency_share"], expected["frequency_share"],
                                   rtol=1e-3, atol=1e-6)  # fmt: skip


def _linear_cka(x, y):
    """Linear CKA (Kornblith et al. 2019): ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)."""
    x, y = x - x.mean(0), y - y.mean(0)
    return np.linalg.norm(y.T @ x) ** 2 / (np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y))


@pytest.mark.slow
def test_a_slow_learner_is_compared_on_its_own_training_set(recipe, trained):
    """The same trained models, with seed 2's curve made to fit late: fast, fast, slow."""
    out, _ = trained
    parsed = recipe.COMMAND.parse_all([*TINY, "--out", str(out)])
    own, runs = parsed.own, recipe.runs_of(parsed)
    lines = copy.deepcopy(_lines(out))
    curves = {0: [0.5, 1.0, 1.0], 1: [0.4, 1.0, 1.0], 2: [0.1, 0.3, 1.0]}  # epochs 1-3
    curves_never = {0: [0.5, 1.0, 1.0], 1: [0.4, 1.0, 1.0], 2: [0.1, 0.3, 0.5]}
    for case, expected_fits in ((curves, True), (curves_never, False)):
        for run in runs:
            lines[run.run_id]["curve_train_eval_accuracy"] = case[run.seed]
            lines[run.run_id]["curve_epoch"] = [1, 2, 3]
        summary = recipe.analyse(dataclasses.replace(own, min_gap=1), runs, lines)
        assert (summary["fast1"], summary["fast2"], summary["slow"]) == (0, 1, 2)
        assert summary["slow_fits_training_set"] is expected_fits
        cka = summary["cka"]
        assert cka["on"] == "training set of seed 2 (the slow learner)"
        assert 0 < cka["fast1_fast2"] <= 1 and 0 < cka["fast1_slow"] <= 1
        assert "fast1_slow_debiased" in cka
        assert cka["all_pairs"]["0-2"] == pytest.approx(cka["fast1_slow"])
        assert set(cka["mean_by_kind"]) == {"fast_fast", "fast_slow"}
        assert any("never fits" in n for n in summary["notes"]) is not expected_fits


def _lines(out):
    return {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


@pytest.mark.slow
def test_a_second_setting_shares_the_folder(recipe, trained):
    """--name: another setting in the same --out trains only its new seeds, writes its own files
    and leaves the first setting's untouched."""
    out, _ = trained
    before = {p.name: p.read_bytes() for p in out.glob("fast_slow*")}
    flags = ["--seeds", "1", "2", "3", "--threshold", "0.01", "--name", "other"]
    summary = recipe.main([*TINY, *flags, "--out", str(out)])
    assert [s["seed"] for s in summary["seeds"]] == [1, 2, 3]
    assert len(list(out.glob("runs/*/model.keras"))) == 4  # seeds 1 and 2 not retrained
    assert len(_lines(out)) == 4
    for name in ("other.json", "other.csv", "other_learning_curves.png", "other_cka.png",
                 "config_other.json", "sweeps/other.json"):  # fmt: skip
        assert (out / name).is_file(), name
    assert json.loads((out / "other.json").read_text())["config"]["grid"]["seed"] == [1, 2, 3]
    assert {p.name: p.read_bytes() for p in out.glob("fast_slow*")} == before
    assert json.loads((out / "sweeps/fast_slow.json").read_text())["run_ids"] == [
        r.run_id for r in recipe.runs_of(recipe.COMMAND.parse_all(TINY))
    ]


@pytest.mark.slow
def test_nothing_fits(recipe, trained):
    out, _ = trained
    parsed = recipe.COMMAND.parse_all([*TINY, "--out", str(out)])
    own, runs = parsed.own, recipe.runs_of(parsed)
    summary = recipe.analyse(dataclasses.replace(own, threshold=1.0), runs, _lines(out))
    assert summary["fast1"] is None and summary["cka"] == {}
    assert any("fewer than two runs" in note for note in summary["notes"])


@pytest.mark.slow
def test_records_without_their_models_are_analysed_without_cka(recipe, trained, tmp_path, capsys):
    """The records taken in elsewhere (tools/import_results.py): no run is trained again, the
    fast/slow labels, csv and figures are written, and CKA is left out with a note (it needs
    every model), instead of failing after the training."""
    out, first = trained
    from pvr_keras.sweeps import ResultsDir

    ResultsDir(tmp_path, create=True).merge(out)
    (tmp_path / "config_fast_slow.json").write_bytes((out / "config_fast_slow.json").read_bytes())
    summary = recipe.main([*TINY, "--threshold", "0.01", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "seeds [0, 1, 2] are recorded" in printed and "0 to run" in printed
    assert not (tmp_path / "runs").exists()
    assert summary["seeds"] == first["seeds"] and summary["cka"] == {}
    assert (summary["fast1"], summary["fast2"]) == (first["fast1"], first["fast2"])
    assert any("CKA not computed: the models of seeds [0, 1, 2]" in n for n in summary["notes"])
    for name in ("fast_slow.json", "fast_slow.csv"):
        assert (tmp_path / name).read_text() != ""
    for name in ("fast_slow_learning_curves.png", "fast_slow_cka.png"):
        assert_plot(tmp_path / name)


@pytest.mark.slow
def test_cka_compares_the_seeds_whose_models_are_there(recipe, trained, tmp_path, capsys):
    """Records of three seeds, models of two (the others' records taken in from elsewhere):
    CKA compares and picks among the two, and says which seed it left out; the table marks
    that seed's label frequencies as absent."""
    out, first = trained
    from pvr_keras.sweeps import ResultsDir

    study = tmp_path / "fast_slow"
    ResultsDir(study, create=True).merge(out)
    (study / "config_fast_slow.json").write_bytes((out / "config_fast_slow.json").read_bytes())
    runs = recipe.runs_of(recipe.COMMAND.parse_all(TINY))
    for run in runs[1:]:
        shutil.copytree(out / "runs" / run.run_id, study / "runs" / run.run_id)
    summary = recipe.main([*TINY, "--threshold", "0.01", "--out", str(study)])
    assert "0 to run" in capsys.readouterr().out
    assert summary["seeds"] == first["seeds"]  # every seed labelled
    assert (summary["fast1"], summary["fast2"], summary["slow"]) == (1, 2, None)
    cka = summary["cka"]
    assert cka["seeds"] == [1, 2] and list(cka["all_pairs"]) == ["1-2"]
    assert cka["on"] == "training set of seed 2 (no slow learner)" and 0 < cka["fast1_fast2"] <= 1
    assert sorted(cka["label_frequencies"]) == ["1", "2"]
    assert any("models of seeds [0] are not in" in n and "here, [1, 2]" in n
               for n in summary["notes"])  # fmt: skip
    scripts.load("tools/generate/results_tables.py")  # its folder on the import path
    table = importlib.import_module("claims.fast_slow").table(study)
    assert "| 0 | 1 | fast |" in table and table.count("no model") == 1
    assert "| 1 (fast) | 1 |" in table  # the CKA matrix has the two compared seeds
    # Seed 0's record now says it never fits (a slow learner by the rule), its model still
    # absent: the picks cannot reach it, and the note says so rather than "no slow learner".
    lines = [json.loads(s) for s in (study / "results.jsonl").read_text().splitlines()]
    for line in lines:
        if line["seed"] == 0:
            line["curve_train_eval_accuracy"] = [0.0] * len(line["curve_train_eval_accuracy"])
    (study / "results.jsonl").write_text("".join(json.dumps(s) + "\n" for s in lines))
    summary = recipe.main([*TINY, "--threshold", "0.01", "--out", str(study)])
    assert [(s["seed"], s["speed"]) for s in summary["seeds"]][-1] == (0, "slow")
    assert (summary["fast1"], summary["fast2"], summary["slow"]) == (1, 2, None)
    assert "the slow learners [0] have no model here" in " ".join(summary["notes"])
    assert not any("no clear slow learner" in n for n in summary["notes"])


def test_presets(recipe):
    paper, _ = recipe.COMMAND.parse(["--preset", "paper"])
    mixer, _ = recipe.COMMAND.parse(["--preset", "paper_mixer"])
    assert (paper.model, paper.window, paper.num_examples, paper.epochs) == ("mlp", 3, 300_000, 200)
    assert (mixer.model, mixer.window, mixer.num_examples) == ("mixer", 6, 5_000_000)
    # medium: Appendix E's setting; its runs are the token_sweep holdout medium's App. E runs.
    medium = recipe.COMMAND.parse_all(["--preset", "medium"])
    runs = recipe.runs_of(medium)
    assert {(r.window, r.holdout, r.holdout_values, r.num_examples) for r in runs} == {
        (3, 6, (1, 2, 3), 300_000)
    }
    assert [r.seed for r in runs] == list(range(6)) and runs[0].model_kwargs == {}
    sweep = scripts.load("recipes/token_sweep.py")
    holdout, _ = sweep.build(sweep.COMMAND.parse_all(["--sweep", "holdout", "--preset", "medium"]))
    assert {r.run_id for r in runs[:2]} <= {r.run_id for r in holdout}
    # medium_main: Figure 12's setting; seeds 0 and 1 are the holdout study's holdout-0 runs.
    main_setting = recipe.COMMAND.parse_all(["--preset", "medium_main"])
    main = recipe.runs_of(main_setting)
    assert {(r.window, r.holdout, r.num_examples) for r in main} == {(3, 0, 300_000)}
    assert main_setting.own.name != medium.own.name
    shared = {r.run_id for r in holdout if r.holdout == 0 and r.window == 3}
    assert {r.run_id for r in main[:2]} == shared


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--seeds", "0"], "at least two distinct seeds"),
        (["--seeds", "1", "1"], "at least two distinct seeds"),
        (["--cka-examples", "3"], "--cka-examples must be an integer >= 4"),
        (["--seeds", "0", "1", "--window", "2", "3"], "the seeds are this study's one grid axis"),
        (["--window", "0"], "window"),
        (["--name", "a/b"], "--name must be letters"),
        (["--name", ""], "--name must be letters"),
    ],
)
def test_bad_config(recipe, tmp_path, flags, match):
    with pytest.raises(ValueError, match=match):
        recipe.main([*TINY, *flags, "--out", str(tmp_path)])


def test_the_widths_flag_is_the_mlps_argument(recipe):
    """``--widths`` (the recipe's older flag) is ``--model.widths``: a flag of the MLP's
    builder only, so another model refuses it as an unknown flag."""
    parsed = recipe.COMMAND.parse_all(["--widths", "16", "8"])
    assert all(r.model_kwargs == {"widths": (16, 8)} for r in recipe.runs_of(parsed))
    with pytest.raises(SystemExit):
        recipe.COMMAND.parse_all(["--model", "mixer", "--widths", "8"])
