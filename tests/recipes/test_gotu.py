"""recipes/gotu.py end to end on a tiny budget: the runs of a task's variants, the exact
measures on the unseen points against the saved models, the plot, resume; bad input."""

import csv
import json
import pathlib
import shutil

import numpy as np
import pytest

from pvr_keras import legacy
from pvr_keras.analysis import boolean, interpolation
from pvr_keras.tasks import FunctionTask
from pvr_keras.training import load_run
from tests import scripts
from tests.plots import assert_plot

# 2parity at d = 8: 192 seen points (every one an epoch), 64 unseen.
TINY = ["--num-bits", "8", "--variants", "mlp", "rfrelu", "--seed", "1", "2", "--epochs", "3",
        "--track-every", "2"]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/gotu.py")


@pytest.fixture(scope="module")
def trained(recipe, tmp_path_factory):
    out = tmp_path_factory.mktemp("gotu")
    recipe.main([*TINY, "--out", str(out)])
    return out, json.loads((out / "gotu.json").read_text())


def test_every_variant_and_seed_is_a_run_with_its_settings(trained):
    out, result = trained
    assert [(r["variant"], r["seed"]) for r in result["runs"]] == [
        ("mlp", 1), ("mlp", 2), ("rfrelu", 1), ("rfrelu", 2)
    ]  # fmt: skip
    for r in result["runs"]:
        config = json.loads((out / r["run_dir"] / "record.json").read_text())["config"]
        run = legacy.from_config(config)
        assert run.domain == "any_of:0,1" and run.num_examples == 192 and run.draw == "all"
        assert run.model == {"mlp": "gotu_mlp", "rfrelu": "random_features"}[r["variant"]]
        assert run.learning_rate == {"mlp": 0.003, "rfrelu": 1e-5}[r["variant"]]
        assert run.batch_size == {"mlp": 64, "rfrelu": 256}[r["variant"]]
        assert run.epochs == 3  # the flag given shortens every variant


def test_the_leak_and_unseen_errors_are_those_of_the_saved_models(trained):
    out, result = trained
    cube = boolean.boolean_cube(8).astype(np.float64)
    target = cube[:, 0] * cube[:, 1]
    mdi = cube[:, 0] + cube[:, 1] - 1  # the closed form
    seen = (cube[:, 0] == 1) | (cube[:, 1] == 1)
    for r in result["runs"]:
        model = load_run(out / r["run_dir"]).model
        values = np.asarray(model.predict_on_batch(cube.astype(np.int8)), np.float64)[:, 0]
        assert r["leak"] == pytest.approx(interpolation.leak(values, target, mdi, seen), rel=1e-5)
        assert r["unseen_mse"] == pytest.approx(np.mean((values - target)[~seen] ** 2), rel=1e-5)
        assert r["unseen_mse_to_mdi"] == pytest.approx(np.mean((values - mdi)[~seen] ** 2),
                                                       rel=1e-5, abs=1e-9)  # fmt: skip
        assert r["epochs_tracked"] == 3  # 0 (before the first step), 2 and 3 (the last always)
        assert r["mdi_degree"] == 1  # x0 + x1 - 1
        profile = boolean.degree_profile(values)
        assert r["low_degree_weight"] == pytest.approx(profile[:2].sum() / profile.sum(), rel=1e-4)
    mine = [r["leak"] for r in result["runs"] if r["variant"] == "mlp"]
    row = next(v for v in result["variants"] if v["variant"] == "mlp")
    assert row["leak_mean"] == pytest.approx(np.mean(mine)) and row["seeds"] == 2
    task = {"num_bits": 8, "target": "x0x1", "domain": "any_of:0,1", "draw": "all"}
    assert result["task"] == task
    tracking = result["tracking"]
    by_name = dict(zip(tracking["monomials"], tracking["mdi"], strict=True))
    assert by_name["x0"] == pytest.approx(1) and by_name["1"] == pytest.approx(-1)
    with open(out / "gotu.csv") as f:
        assert [r["variant"] for r in csv.DictReader(f)] == ["mlp", "rfrelu"]
    assert_plot(out / "gotu.png")


@pytest.mark.parametrize("k", [1, 3, 5])
def test_the_mdi_degree_of_parity_on_a_hamming_ball_is_its_radius(recipe, k):
    """The issue's closed form: sum over j <= k of C(H, j) (-2)^j, a polynomial of degree k
    in H (and so in x)."""
    task = FunctionTask(num_bits=9, target="parity:all", domain=f"ball:{k}")
    assert recipe.mdi_degree(task) == k
    assert recipe.low_degree_weight([1.0, 1.0, 2.0], 1) == pytest.approx(0.5)


def test_run_again_trains_nothing(recipe, trained, capsys):
    out, result = trained
    recipe.main([*TINY, "--out", str(out)])
    assert "0 to run" in capsys.readouterr().out
    assert json.loads((out / "gotu.json").read_text())["runs"] == result["runs"]


def test_a_run_whose_folder_is_elsewhere_keeps_its_measures_from_the_last_summary(
    recipe, trained, tmp_path, capsys
):
    # As after tools/import_results.py: the records and the summary, not every run folder.
    out, result = trained
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    gone = result["runs"][1]
    shutil.rmtree(moved / gone["run_dir"])
    recipe.main([*TINY, "--out", str(moved)])
    assert "0 to run" in capsys.readouterr().out
    again = json.loads((moved / "gotu.json").read_text())
    assert [r["measured"] for r in again["runs"]] == [
        "previous summary" if r["run_dir"] == gone["run_dir"] else "run folder"
        for r in result["runs"]
    ]
    strip = [{k: v for k, v in r.items() if k != "measured"} for r in again["runs"]]
    assert strip == [{k: v for k, v in r.items() if k != "measured"} for r in result["runs"]]
    assert again["variants"] == result["variants"]  # its seed still counts, with its leak
    # an entry read back is untrusted: a field of the wrong kind drops that run's measures
    # (in gotu.json and in the measures kept beside it, both read back)
    for name in ("gotu.json", recipe.KEPT_MEASURES):
        summary = json.loads((moved / name).read_text())
        entries = summary["runs"] if name == "gotu.json" else summary
        next(e for e in entries if e["run_dir"] == gone["run_dir"])["leak"] = "0.5"
        (moved / name).write_text(json.dumps(summary))
    recipe.main([*TINY, "--out", str(moved)])
    assert json.loads((moved / "gotu.json").read_text())["runs"][1]["leak"] is None


def test_a_narrower_call_between_keeps_the_measures_of_the_runs_it_leaves_out(
    recipe, trained, tmp_path, capsys
):
    """Imported records (no run folder) analysed by a call of seed 1 only, then of both seeds
    again: the second summary still has the seed-2 run's measures (its gotu.json is gone)."""
    out, result = trained
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    gone = result["runs"][1]  # mlp, seed 2
    shutil.rmtree(moved / gone["run_dir"])
    seed_one = [*TINY[: TINY.index("--seed")], "--seed", "1", *TINY[TINY.index("--seed") + 3 :]]
    recipe.main([*seed_one, "--out", str(moved)])
    narrow = json.loads((moved / "gotu.json").read_text())
    assert gone["run_dir"] not in [r["run_dir"] for r in narrow["runs"]]
    recipe.main([*TINY, "--out", str(moved)])
    assert "0 to run" in capsys.readouterr().out
    again = json.loads((moved / "gotu.json").read_text())
    [entry] = [r for r in again["runs"] if r["run_dir"] == gone["run_dir"]]
    assert entry["measured"] == "previous summary" and entry["leak"] is not None
    assert {k: v for k, v in entry.items() if k != "measured"} == {
        k: v for k, v in gone.items() if k != "measured"
    }


def test_each_variant_says_its_epochs_and_why_when_a_preset_cuts_them(recipe):
    def lines(argv):
        said = []
        parsed = recipe.COMMAND.parse_all(argv)
        runs = recipe.runs_of(parsed, parsed.preset, log=said.append)
        return said, {label: run.epochs for label, run in runs}

    said, epochs = lines(["--preset", "quick", "--task", "threesym", "--variants", "mlp",
                          "rfrelu"])  # fmt: skip
    assert epochs == {"mlp": 20, "rfrelu": 20}  # their 40, cut by the quick preset
    assert said == [
        f"[gotu] threesym {v}: 20 epochs (the quick preset's cap; the variant's own setting is "
        f"40: pass --epochs 40 for it)" for v in ("mlp", "rfrelu")
    ]  # fmt: skip
    said, epochs = lines(["--preset", "medium", "--task", "threesym", "--variants", "rfrelu"])
    assert (said, epochs) == (["[gotu] threesym rfrelu: 40 epochs (its own setting)"],
                              {"rfrelu": 40})  # fmt: skip
    said, _ = lines(["--preset", "quick", "--task", "2parity", "--variants", "transformer"])
    assert said == ["[gotu] 2parity transformer: 20 epochs (its own setting)"]  # at the cap
    said, _ = lines(["--preset", "quick", "--task", "threesym", "--variants", "mlp",
                     "--epochs", "5"])  # fmt: skip
    assert said == ["[gotu] threesym mlp: 5 epochs (--epochs; the variant's own setting is 40)"]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--task", "nope"], "task must be one of"),
        (["--variants", "mlp", "mlp"], "distinct"),
        (["--variants", "rfpoly"], "the variants of 2parity are"),
        (["--window", "2"], "unrecognized arguments"),
        (["--domain", "any_of:0,99"], r"in 0\.\.14"),
        (["--target", "x0x0"], "each bit once"),
        (["--learning-rate", "0.1", "0.2"], "variants and seeds are this study's grid"),
        (["--seed", "1", "1"], "seeds must be distinct"),
    ],
)
def test_bad_input_is_refused_before_any_work(recipe, tmp_path, argv, match, capsys):
    with pytest.raises((ValueError, SystemExit)) as raised:
        recipe.main([*argv, "--out", str(tmp_path / "x")])
    shown = str(raised.value) + capsys.readouterr().err
    assert match in shown or __import__("re").search(match, shown)
    assert not (tmp_path / "x").exists()


def test_the_engine_is_chosen_for_the_grids_model_not_the_kinds_default(
    recipe, tmp_path, monkeypatch
):
    from pvr_keras.cli import runner

    seen = []

    class Chosen(Exception):
        pass

    def start(*args, run=None, **kwargs):
        seen.append(run.model)
        raise Chosen

    monkeypatch.setattr(runner, "start", start)
    with pytest.raises(Chosen):
        recipe.main(["--num-bits", "8", "--variants", "transformer", "--out", str(tmp_path)])
    assert seen == ["gotu_transformer"]  # the kind's default model is bits_mlp


def test_the_engine_is_measured_for_a_run_still_to_train(recipe, trained, tmp_path, monkeypatch):
    """A grid started again measures the engine for its first run not yet recorded, and a
    grid whose runs are all recorded measures nothing (it trains nothing)."""
    import shutil

    from pvr_keras import sweeps
    from pvr_keras.cli import runner

    out, result = trained
    seen = []

    class Chosen(Exception):
        pass

    def start(*args, run=None, **kwargs):
        seen.append(run)
        raise Chosen

    monkeypatch.setattr(runner, "start", start)
    with pytest.raises(Chosen):
        recipe.main([*TINY, "--out", str(out)])
    assert seen == [None]  # every run recorded: no model to measure
    partial = tmp_path / "partial"
    shutil.copytree(out, partial)
    lines = (partial / "results.jsonl").read_text().splitlines()
    (partial / "results.jsonl").write_text("\n".join(lines[:2]) + "\n")  # the MLP's 2 seeds
    assert len(sweeps.ResultsDir(partial).recorded_ids()) == 2
    with pytest.raises(Chosen):
        recipe.main([*TINY, "--out", str(partial)])
    assert seen[1].model == "random_features"  # the first run still to train


def test_the_configs_describe_the_runs_trained(trained):
    # config_gotu.json's run was the kind's default run (bits_mlp on the whole cube), which
    # the variants replace and which trains nowhere.
    out, result = trained
    first = json.loads((out / result["runs"][0]["run_dir"] / "record.json").read_text())
    first = legacy.from_config(first["config"])
    saved = json.loads((out / "config_gotu.json").read_text())
    for config in (saved, result["config"]):
        run = config["run"]
        assert run == first.to_dict()
        assert (run["model"], run["domain"], run["num_bits"]) == ("gotu_mlp", "any_of:0,1", 8)
        assert config["recipe"]["variants"] == ["mlp", "rfrelu"]
        assert config["recipe"]["out"] == str(out)
    assert saved["grid"] == {"seed": [1, 2]}
    # gotu.json holds the whole config of the grid it analysed (an export writes the file
    # from it: a later call, started and stopped, may have rewritten the file)
    assert saved == {k: v for k, v in result["config"].items() if k not in ("task", "variants")}


def test_the_task_placeholder_of_out_is_filled_in(recipe, tmp_path):
    from pvr_keras.cli import ConfigError

    assert recipe.out_folder(recipe.COMMAND.parse_all([]).own) == pathlib.Path("runs/gotu/2parity")
    own = recipe.COMMAND.parse_all(["--task", "threesym", "--out", "x/{task}-w{transformer_width}"])
    assert recipe.out_folder(own.own) == pathlib.Path("x/threesym-w0.125")
    # the quick preset (the MLP, seed 1), shortened: into a folder named after the task
    recipe.main(["--num-bits", "8", "--epochs", "1", "--out", str(tmp_path / "{task}")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2parity"]
    config = json.loads((tmp_path / "2parity" / "config_gotu.json").read_text())
    assert config["recipe"]["out"] == str(tmp_path / "2parity")
    assert (config["run"]["model"], config["run"]["domain"]) == ("gotu_mlp", "any_of:0,1")
    assert config["recipe"]["variants"] == ["mlp"]
    with pytest.raises(ConfigError, match="names a placeholder that is not a field"):
        recipe.main(["--out", str(tmp_path / "{nope}")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2parity"]


def test_2parity40_trains_and_is_tracked_on_a_sample_of_the_cube(recipe, tmp_path, monkeypatch):
    """2parity at d = 40 (their Figure 9): 2^40 points cannot be listed, so fourier.json holds
    estimates on a fixed sample of the cube and says so; the leak and unseen errors are those
    of the saved model on that sample's unseen points; no degree profile. Tiny: 1 epoch on 256
    examples, a sample of 4,096 points (the default's 65,536: the same code, 16x the work)."""
    from pvr_keras.analysis import sampled_tracking

    monkeypatch.setattr(sampled_tracking, "SAMPLE_POINTS", 4096)
    out = tmp_path / "d40"
    recipe.main(["--task", "2parity40", "--epochs", "1", "--num-examples", "256", "--out",
                 str(out)])  # fmt: skip
    result = json.loads((out / "gotu.json").read_text())
    [r] = result["runs"]
    found = json.loads((out / r["run_dir"] / "fourier.json").read_text())
    points = sampled_tracking.SAMPLE_POINTS
    assert found["evaluation"]["kind"] == "sampled" and found["evaluation"]["points"] == points
    assert result["tracking"]["evaluation"] == found["evaluation"]
    assert result["tracking"]["monomials"] == ["1", "x0", "x1", "x0x1"]
    assert result["tracking"]["mdi"] == pytest.approx([-1, 1, 1, 0], abs=1e-12)
    run = legacy.from_config(json.loads((out / r["run_dir"] / "record.json").read_text())["config"])
    assert (run.num_bits, run.draw, run.num_examples, run.test_examples) == (40, "uniform", 256,
                                                                            8192)  # fmt: skip
    x = sampled_tracking.sample_points(40, points, found["evaluation"]["seed"])
    values = np.asarray(load_run(out / r["run_dir"]).model.predict_on_batch(x), np.float64)[:, 0]
    xf = x.astype(np.float64)
    target, mdi = xf[:, 0] * xf[:, 1], xf[:, 0] + xf[:, 1] - 1
    unseen = (x[:, 0] < 0) & (x[:, 1] < 0)
    assert found["evaluation"]["unseen_points"] == unseen.sum()
    gap = (target - mdi)[unseen]
    leak = np.mean((target - values)[unseen] * gap) / np.mean(gap**2)
    assert r["leak"] == pytest.approx(leak, rel=1e-5)
    assert r["unseen_mse"] == pytest.approx(np.mean((values - target)[unseen] ** 2), rel=1e-5)
    assert r["seen_mse"] == pytest.approx(np.mean((values - target)[~unseen] ** 2), rel=1e-5)
    assert r["coefficients"] == pytest.approx([np.mean(values), np.mean(values * xf[:, 0]),
                                               np.mean(values * xf[:, 1]),
                                               np.mean(values * target)], abs=1e-6)  # fmt: skip
    assert r["degree_profile"] is None and r["low_degree_weight"] is None
    assert r["mdi_degree"] == 1  # x0 + x1 - 1, from its expansion
    with open(out / "gotu.csv") as f:
        assert [row["variant"] for row in csv.DictReader(f)] == ["mlp"]
    assert_plot(out / "gotu.png")
    # a summary read back is untrusted: a sample's numbers of the wrong kind drop its tracking
    assert recipe.previous_summary(out)["tracking"] == result["tracking"]
    result["tracking"]["evaluation"]["points"] = "65536"
    (out / "gotu.json").write_text(json.dumps(result))
    assert recipe.previous_summary(out)["tracking"] is None


def test_2parity40_has_the_settings_of_2parity_at_d_40(recipe):
    parsed = recipe.COMMAND.parse_all(["--task", "2parity40", "--preset", "medium"])
    runs = dict(recipe.runs_of(parsed, parsed.preset)[::3])  # seed 1 of each variant
    assert list(runs) == list(recipe.TASKS["2parity"][1])
    parsed15 = recipe.COMMAND.parse_all(["--task", "2parity", "--preset", "medium"])
    for label, run15 in recipe.runs_of(parsed15, parsed15.preset)[::3]:
        run = runs[label]
        assert (run.num_bits, run.target, run.domain, run.draw) == (40, "x0x1", "any_of:0,1",
                                                                    "uniform")  # fmt: skip
        assert run.num_examples == run15.num_examples == 24_576  # 2parity's seen points
        assert run.test_examples == 8192
        for field in ("model", "learning_rate", "epochs", "batch_size", "optimizer"):
            assert getattr(run, field) == getattr(run15, field), (label, field)


def test_a_folder_left_by_a_stopped_attempt_of_a_run_recorded_elsewhere_is_not_measured(
    recipe, trained, tmp_path, capsys
):
    """The run recorded (its line and summary taken in from elsewhere), a folder here from an
    attempt stopped at an earlier epoch: its measures come from the summary, not that folder."""
    out, result = trained
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    kept = result["runs"][1]
    folder = moved / kept["run_dir"]
    record = json.loads((folder / "record.json").read_text())
    record.update(status="running", epochs_completed=record["epochs_completed"] - 1)
    (folder / "record.json").write_text(json.dumps(record))
    tracked = json.loads((folder / "fourier.json").read_text())
    last = max(tracked["epochs"], key=int)
    tracked["epochs"][last]["leak"] = 123.0  # what the stopped attempt had measured
    (folder / "fourier.json").write_text(json.dumps(tracked))
    recipe.main([*TINY, "--out", str(moved)])
    assert "0 to run" in capsys.readouterr().out
    again = json.loads((moved / "gotu.json").read_text())["runs"][1]
    assert again["measured"] == "previous summary"
    assert {k: v for k, v in again.items() if k != "measured"} == {
        k: v for k, v in kept.items() if k != "measured"
    }
