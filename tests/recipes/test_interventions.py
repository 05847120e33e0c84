"""recipes/interventions.py end to end with tiny models: positional IIA and DAS."""

import json

import pytest

from tests import scripts
from tests.plots import assert_plot

TINY = [
    "--window", "1", "--num-examples", "600", "--test-examples", "200", "--epochs", "1",
    "--warmup-epochs", "0", "--min-steps", "0", "--batch-size", "128", "--seed", "1",
    "--pairs", "32",
]  # fmt: skip


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("recipes/interventions.py")


@pytest.mark.slow  # trains a tiny Transformer and a tiny MLP (seconds each)
def test_end_to_end_positional_and_das(recipe, tmp_path):
    out = tmp_path / "iv"
    summary = recipe.main([
        *TINY, "--model", "transformer", "mlp", "--width", "0.03125", "--das-dims", "2",
        "--das-pairs", "64", "--das-epochs", "1", "--out", str(out),
    ])  # fmt: skip
    saved = json.loads((out / "interventions.json").read_text())
    assert saved["pairs"] == 32 and saved["changing_pairs"] is True
    by_model = {r["model"]: r for r in saved["runs"]}
    assert set(by_model) == {"transformer", "mlp"}
    grid = by_model["transformer"]["grid"]
    assert grid["method"] == "positional"
    assert grid["layers"] == ["position_embedding", "block0", "block1", "block2", "block3"]
    assert grid["positions"] == list(range(12))
    assert set(grid["iia"]) == {"P", "S0"} and set(grid["own_position"]) == {
        f"V{i}" for i in range(10)
    }
    for rows in grid["iia"].values():
        assert len(rows) == 5 and all(len(r) == 12 for r in rows)
        assert all(0 <= v <= 1 for r in rows for v in r)
    # Position 1 of the embedded input is the pointer itself: patching it there is running
    # the model on the base with the source's pointer, scored against the counterfactual label.
    from pvr_keras import counterfactuals as cf
    from pvr_keras.tasks import TokenTask
    from pvr_keras.training import load_run

    model = load_run(out / "runs" / by_model["transformer"]["id"]).model
    base, source, _, y_cf = cf.pairs(TokenTask(window=1), 32, "P", 0, "test", True)
    moved = base.copy()
    moved[:, 0] = source[:, 0]
    expected = float((model.predict(moved, verbose=0).argmax(1) == y_cf).mean())
    assert grid["iia"]["P"][0][1] == pytest.approx(expected)
    das = by_model["mlp"]["grid"]
    assert das["method"] == "das" and das["layers"][-1] == "pre_logits"
    assert set(das["iia"]) == {"P", "S0"}
    for run in saved["runs"]:
        assert_plot(out / f"interventions_{run['id']}.png")
    rows = (out / "interventions.csv").read_text().splitlines()
    assert rows[0] == "run_id,model,window,seed,method,variable,layer,position,iia"
    assert len(rows) == 1 + 2 * 5 * 12 + 10 * 5 + 2 * len(das["layers"])
    assert summary["runs"][0]["grid"]["iia"] == saved["runs"][0]["grid"]["iia"]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--pairs", "0"], "--pairs must be"),
        (["--aligned", "1.5"], "--aligned"),
        (["--name", "a/b"], "--name"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(flags, message, capsys, tmp_path):
    status = scripts.exit_status("recipes/interventions.py", *flags, "--out", str(tmp_path / "x"))
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err, err
