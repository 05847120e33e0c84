import json
import pathlib
import sys

import pytest

from pvr_keras import cli, data, tuning
from pvr_keras.tuning import distributed

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import tune  # noqa: E402

TINY = ["--num-examples", "256", "--val-examples", "128", "--epochs", "1"]


@pytest.fixture(autouse=True)
def no_tuner_env(monkeypatch):
    for name in (distributed.ENV_TUNER_ID, distributed.ENV_ORACLE_IP, distributed.ENV_ORACLE_PORT):
        monkeypatch.setenv(name, "")  # records the original, so teardown restores it
        monkeypatch.delenv(name)


def test_random_search_end_to_end_then_resume(tmp_path, capsys):
    args = [*TINY, "--max-trials", "2", "--directory", str(tmp_path)]
    summary = tune.main(args)
    folder = tmp_path / "random_mlp_w1_mod_sum_n256"
    assert summary["project"] == str(folder) and summary["role"] == "single"
    assert summary["trials"] == 2 and summary["status"] == {"COMPLETED": 2}
    saved = json.loads((folder / "best.json").read_text())
    assert saved == json.loads(json.dumps(summary, default=str))
    scores = [b["val_accuracy"] for b in saved["best"]]
    assert scores == sorted(scores, reverse=True)
    # Each trial's score again: its saved model on the validation set (128 examples of the
    # train split drawn with seed 1: the run's validation set, not its test set), accuracy
    # counted here.
    run, own = tune.COMMAND.parse(args)
    hypermodel = tuning.PVRHyperModel(run, val_examples=own.val_examples, models=own.models)
    tuner = tuning.make_tuner(
        "random", hypermodel, directory=str(tmp_path), project_name=folder.name, max_trials=2
    )
    x, y = data.token_arrays(run.task, 128, split="train", seed=run.seed + 1)
    for trial, model in zip(tuner.oracle.get_best_trials(2), tuner.get_best_models(2), strict=True):
        accuracy = float((model.predict(x, verbose=0).argmax(-1) == y).mean())
        assert trial.score == pytest.approx(accuracy, abs=1e-6), trial.trial_id
    assert scores == [t.score for t in tuner.oracle.get_best_trials(2)]
    for best in saved["best"]:
        values = best["values"]
        assert values["optimizer"] in ("sgd", "adam", "adagrad", "lamb")
        assert 1e-3 <= values["learning_rate"] <= 0.4
        assert values["batch_size"] in (128, 256, 512, 1024, 2048, 4096)
    assert json.loads((folder / "config.json").read_text())["recipe"]["max_trials"] == 2
    printed = capsys.readouterr().out
    assert "best val_accuracy" in printed and f"train it: {saved['train_command']}" in printed
    # The printed command trains the best trial's hyperparameters with token_pvr.py.
    import shlex

    import token_pvr  # recipes/ is on sys.path (above)

    argv = shlex.split(saved["train_command"])[2:]
    trained, _ = token_pvr.COMMAND.parse(argv)
    top = saved["best"][0]["values"]
    assert (trained.optimizer, trained.batch_size, trained.model) == (
        top["optimizer"], top["batch_size"], top["model"],
    )  # fmt: skip
    assert trained.learning_rate == top["learning_rate"]  # exactly: the trial's
    assert (trained.num_examples, trained.window, trained.epochs) == (256, 1, 1)
    # The command parses back to the trial's run: what the search trained, not a run of the
    # recipe's preset (e.g. its 800-step minimum would turn a 2-step trial into 800 steps).
    trial = run.replace(model=top["model"], optimizer=top["optimizer"],
                        learning_rate=top["learning_rate"], batch_size=top["batch_size"],
                        min_steps=0)  # fmt: skip
    assert trained.to_dict() == trial.to_dict() and trained.min_steps == 0
    # The same command again: the search is complete, nothing is trained again.
    again = tune.main(args)
    by_id = {b["trial_id"]: (b["val_accuracy"], b["values"]) for b in summary["best"]}
    assert again["trials"] == 2
    assert {b["trial_id"]: (b["val_accuracy"], b["values"]) for b in again["best"]} == by_id
    assert sorted(p.name for p in folder.glob("trial_*")) == ["trial_0", "trial_1"]


def test_another_search_in_the_same_project_is_refused(tmp_path):
    folder = tmp_path / "random_mlp_w1_mod_sum_n256"
    run, own = tune.COMMAND.parse([*TINY, "--window", "2"])
    cli.write_config(folder, run, own)
    with pytest.raises(ValueError, match=r"holds a search of another configuration .*window: 2"):
        tune.main([*TINY, "--directory", str(tmp_path), "--project", folder.name])


def test_distributed_settings_are_checked_first(tmp_path):
    with pytest.raises(ValueError, match="needs both a tuner id"):
        tune.main([*TINY, "--directory", str(tmp_path), "--tuner-id", "tuner0"])
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hyperband", "bayesian"])
def test_other_tuners(tmp_path, kind):
    summary = tune.main(
        [*TINY, "--epochs", "2", "--tuner", kind, "--max-trials", "2", "--directory", str(tmp_path)]
    )
    assert summary["trials"] >= 1 and set(summary["status"]) == {"COMPLETED"}
    assert summary["best"][0]["val_accuracy"] is not None


def test_a_directory_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is under .*file, which is a file"):
        tune.main([*TINY, "--directory", str(tmp_path / "file")])


def test_a_boolean_search_trains_the_mean_squared_error(tmp_path):
    """``--kind boolean``: each trial is a Boolean run trained as ``train.py`` trains it, with
    the mean squared error (the regression's loss), not cross-entropy; keras-tuner records
    that error on the validation set, and scores the trial by its accuracy there."""
    args = ["--kind", "boolean", "--num-examples", "256", "--val-examples", "64", "--epochs",
            "1", "--max-trials", "1", "--directory", str(tmp_path)]  # fmt: skip
    summary = tune.main(args)
    assert summary["status"] == {"COMPLETED": 1}
    folder = pathlib.Path(summary["project"])
    assert folder.name == "random_bits_mlp_boolean_n256"
    assert summary["train_command"].startswith("python recipes/train.py --kind boolean ")
    run, own = tune.parse(args)
    assert run.kind == "boolean" and own.models == ("bits_mlp",)
    tuner = tuning.make_tuner(
        "random", tuning.PVRHyperModel(run, val_examples=64, models=own.models),
        directory=str(tmp_path), project_name=folder.name, max_trials=1,
    )  # fmt: skip
    (trial,) = tuner.oracle.trials.values()
    model = tuner.get_best_models(1)[0]
    assert type(model.loss).__name__ == "MeanSquaredError"
    # The loss keras-tuner recorded for the trial is the trained model's MSE on the
    # run's validation set.
    x, y = data.boolean_arrays(run.task, 64, split="train", seed=run.seed + 1)
    error = model.predict(x, verbose=0).reshape(-1) - y
    assert trial.metrics.get_last_value("val_loss") == pytest.approx((error**2).mean(), rel=1e-4)
    assert trial.score == pytest.approx((abs(error) < 0.5).mean(), abs=1e-6)
