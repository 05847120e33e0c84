"""Run identities (``runconfig.identity``) and ``pvr_keras.legacy``: the ids and records of
runs stay what they were through the redesign, and ``tools/migrate_runs.py`` brings the
folders of the older recipe configs up to date."""

import hashlib
import json
import os
import pathlib
import sys

import pytest

from pvr_keras import kinds, legacy
from pvr_keras.runconfig import Run
from tests import scripts
from tests.bounded import within

REPO = pathlib.Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
sys.path.insert(0, str(REPO / "recipes"))


def _tool():
    return scripts.load("tools/migrate_runs.py")


def test_every_committed_run_keeps_its_id():
    """Each line of the committed sweep studies names a run whose id today's code computes
    from the line's fields: the studies reproduce and resume under their ids. The gotu
    studies (docs/results/gotu/*/) too: their targets are in their canonical spelling."""
    lines = [json.loads(s) for p in RESULTS.glob("**/results.jsonl")
             for s in p.read_text().splitlines()]  # fmt: skip
    assert len(lines) >= 250
    kinds_seen = {line.get("kind") for line in lines}
    assert {"gotu", "boolean"} <= kinds_seen
    assert sum(line.get("kind") == "gotu" for line in lines) >= 50
    for line in lines:
        assert legacy.from_line(line).run_id == line["id"]
        assert legacy.from_line(line).to_dict() == {
            k: v for k, v in line.items() if k in legacy.from_line(line).to_dict()
        }


def test_ids_are_pinned_and_a_hash_of_the_identity():
    run = Run.make("token", window=3, num_examples=300, seed=2, pointer=False, holdout=4)
    canonical = json.dumps(run.to_dict(), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
    assert run.run_id == f"mlp-w3-mod_sum-nopointer-h4-n300-s2-{digest}"
    assert run.run_id == "mlp-w3-mod_sum-nopointer-h4-n300-s2-47a2b0cb8f"  # recorded in 2026
    appendix_e = Run.make("token", window=3, holdout=6, holdout_values=[1, 2, 3], seed=0,
                          num_examples=300_000, epochs=200)  # fmt: skip
    assert appendix_e.run_id == "mlp-w3-mod_sum-h6-of123-n300000-s0-634e18bb4a"
    assert appendix_e.holdout_values == (1, 2, 3)
    same = Run.make("token", window=3, holdout=6, holdout_values=(0, 1, 2))
    assert same.run_id == Run.make("token", window=3, holdout=6).run_id
    block = Run.make("block", width=16, epochs=5)
    assert block.run_id.startswith("block-resnet18-mnist-width16-n60000-s0-")


def test_fields_outside_the_kinds_identity_appear_only_when_set():
    default = Run.make("token")
    assert set(default.to_dict()) == set(kinds.kind("token").identity)
    assert "kind" not in default.to_dict()  # the token kind: as recorded from the start
    changed = default.replace(momentum=0.5, width=0.5, optimizer="adam", seq_len=10)
    assert {"momentum", "width", "optimizer", "seq_len"} <= set(changed.to_dict())
    assert "-x0.5-adam-" in changed.run_id
    assert Run.make("block").to_dict()["kind"] == "block"
    assert "backend" not in Run.make("token", backend="jax", devices=2).to_dict()
    assert Run.make("token", backend="jax").run_id == default.run_id


def test_the_committed_block_study_is_todays_command():
    """figure7's records (migrated) are the identity of the command docs/results gives."""
    import block_holdout

    for model in ("resnet18", "vgg11_bn"):
        run, _ = block_holdout.COMMAND.parse(["--preset", "medium", "--model", model])
        for sub, holdout in (("holdout", True), ("iid", False)):
            record = json.loads((RESULTS / "figure7" / model / sub / "record.json").read_text())
            assert record["config"] == run.replace(holdout=holdout).to_dict()
            assert record["kind"] == "block"
    assert _tool().migrate([RESULTS], write=False, log=lambda *a: None) == []


# The configs the recipes recorded before the one run config (their own flat fields, the
# backend, the data dir and --out included).
LEGACY_TOKEN_PVR = {
    "model": "mlp", "width": 1.0, "window": 2, "aggregation": "mod_sum", "window_mode": "cyclic",
    "pointer": True, "holdout": 0, "holdout_values": None, "num_examples": 3000,
    "test_examples": 500, "epochs": 1, "warmup_epochs": 2, "min_steps": 0, "batch_size": 1024,
    "optimizer": "sgd", "learning_rate": 0.05, "seed": 0, "backend": "tensorflow",
    "out": "runs/token_pvr/{model}_x{width}_w{window}_{aggregation}_n{num_examples}_s{seed}",
}  # fmt: skip
LEGACY_SEQUENCE = {
    "num_examples": 100000, "test_examples": 2000, "train_eval_examples": 2000, "epochs": 6,
    "batch_size": 50, "learning_rate": 0.001, "schedule": "cosine", "seed": 0, "data_dir": None,
    "backend": "tensorflow", "head": "transformer", "window": 1, "aggregation": "mod_sum",
    "holdout": 0, "encoder": "dense", "conv_widths": [32, 64], "dim": 64,
    "widths": [512, 1024, 512, 64], "depth": 2,
    "out": "runs/image_sequence/{head}_w{window}_{aggregation}_n{num_examples}_s{seed}",
}  # fmt: skip


def test_legacy_configs_migrate_to_the_same_runs_commands():
    import image_sequence
    import token_pvr

    flags = ["--window", "2", "--num-examples", "3000", "--test-examples", "500", "--epochs",
             "1", "--min-steps", "0"]  # fmt: skip
    run, _ = token_pvr.COMMAND.parse(flags)
    assert legacy.migrate(LEGACY_TOKEN_PVR) == run.to_dict()
    quick, _ = image_sequence.COMMAND.parse([])
    assert legacy.migrate(LEGACY_SEQUENCE) == quick.to_dict()
    assert legacy.migrate(run.to_dict()) == run.to_dict()  # current: unchanged
    with pytest.raises(ValueError, match="not fields of a token run: bogus"):
        legacy.migrate({"model": "mlp", "bogus": 1})


@pytest.mark.slow  # one tiny run
def test_a_legacy_run_folder_resumes_after_migrating(tmp_path, capsys):
    import token_pvr

    out = tmp_path / "run"
    flags = ["--window", "2", "--num-examples", "3000", "--test-examples", "500", "--epochs",
             "1", "--min-steps", "0", "--out", str(out)]  # fmt: skip
    done = token_pvr.main(flags)
    # As the older recipe left it: its flat config as the record's and the folder's config.
    record = json.loads((out / "record.json").read_text())
    old = {**LEGACY_TOKEN_PVR, "out": str(out)}
    record["config"] = old
    del record["kind"]
    (out / "record.json").write_text(json.dumps(record, indent=1))
    (out / "config.json").write_text(json.dumps(old, indent=2))
    with pytest.raises(ValueError, match="holds a run of another configuration"):
        token_pvr.main(flags)  # the old identity (backend, out) is not today's
    assert _tool().main([str(tmp_path)]) == 0
    again = token_pvr.main(flags)
    assert again["finished"] == done["finished"] and again["config"] == done["config"]
    assert "run already complete, not training again" in capsys.readouterr().out
    assert _tool().migrate([tmp_path], write=False, log=lambda *a: None) == []
    from pvr_keras import training

    assert training.load_run(out).evaluate()["accuracy"] == pytest.approx(
        done["final"]["test_accuracy"], abs=1e-6
    )


def test_migrate_names_each_unreadable_file_and_migrates_the_rest(tmp_path):
    """A damaged file (a folder named record.json, a JSON list, cut JSON, a FIFO, a link,
    JSON nested 100,000 deep) is named and
    skipped; the good legacy record beside them is still migrated, then the tool fails."""
    good = tmp_path / "good"
    good.mkdir()
    from pvr_keras.training import records

    old = {"format": records.FORMAT, "format_version": records.FORMAT_VERSION,
              "config": dict(LEGACY_TOKEN_PVR)}  # fmt: skip
    (good / "record.json").write_text(json.dumps(old))
    (tmp_path / "a" / "record.json").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.json").write_text("[1, 2]")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "record.json").write_text('{"config": ')
    for name in ("fifo", "link", "deep"):  # a FIFO is never waited on, a link never read
        (tmp_path / name).mkdir()
    os.mkfifo(tmp_path / "fifo" / "record.json")
    (tmp_path / "link" / "record.json").symlink_to(good / "record.json")
    (tmp_path / "deep" / "record.json").write_text("[" * 100_000 + "]" * 100_000)
    said = []
    with within(20), pytest.raises(ValueError, match="6 file.s. could not be read"):
        _tool().migrate([tmp_path], log=said.append)
    for name in ("a/record.json", "b/config.json", "c/record.json", "fifo/record.json",
                 "link/record.json", "deep/record.json"):  # fmt: skip
        assert any(str(tmp_path / name) in line and "skipped" in line for line in said), name
    assert json.loads((good / "record.json").read_text())["config"] == legacy.migrate(
        LEGACY_TOKEN_PVR
    )


# The commands of the committed fast_slow and boolean studies, whose configs were written when
# the seeds (and the quick MLP's widths) were the recipes' own fields.
OWN_SEEDS_STUDIES = [
    ("fast_slow", "fast_slow/config_fast_slow.json", ["--preset", "medium"]),
    ("fast_slow", "fast_slow_main/config_fast_slow_main.json", ["--preset", "medium_main"]),
    ("fast_slow", "fast_slow_quick/config_fast_slow_quick.json",
     ["--preset", "quick", "--name", "fast_slow_quick"]),
    ("fast_slow", "fast_slow_paper/config_fast_slow_paper.json",
     ["--preset", "paper", "--holdout", "6", "--holdout-values", "1", "2", "3", "--name",
      "fast_slow_paper"]),
    ("boolean_holdout", "boolean/config_f3_mlp.json", ["--preset", "medium", "--name", "f3_mlp"]),
]  # fmt: skip


@pytest.mark.parametrize("recipe,config,flags", OWN_SEEDS_STUDIES)
def test_a_study_written_with_own_seeds_resumes_under_todays_flags(recipe, config, flags, tmp_path):
    """Today's command for the study reads its old config as its own (a resumed study is not
    refused), and another seed list is still refused."""
    from pvr_keras import cli

    module = scripts.load(f"recipes/{recipe}.py")
    parsed = module.COMMAND.parse_all(flags)
    name = json.loads((RESULTS / config).read_text())["recipe"]["name"]
    (tmp_path / f"config_{name}.json").write_bytes((RESULTS / config).read_bytes())
    cli.check_config(tmp_path, parsed.run, parsed.own, f"config_{name}.json", grid=parsed.axes)
    other = module.COMMAND.parse_all([*flags, "--seed", "7", "8"])
    with pytest.raises(cli.ConfigError, match="another configuration"):
        cli.check_config(tmp_path, other.run, other.own, f"config_{name}.json", grid=other.axes)


def _old_gotu_study(tmp_path, name="2parity"):
    """The committed gotu study ``name`` as recipes/gotu.py wrote it before gotu.json held its
    grid's whole config: its run the kind's default run (which trains nowhere), no grid, and
    config_gotu.json as a later call left it (other seeds)."""
    folder = tmp_path / name
    folder.mkdir()
    committed = RESULTS / "gotu" / name
    summary = json.loads((committed / "gotu.json").read_text())
    config = json.loads((committed / "config_gotu.json").read_text())
    default = {"kind": "gotu", "model": "bits_mlp", "num_bits": 15, "target": "x0x1",
               "domain": "all", "num_examples": 24576, "seed": 2}  # fmt: skip
    recipe = {**config["recipe"], "variants": None}
    summary["config"] = {"task": name, "run": default, "recipe": recipe,
                         "variants": summary["config"]["variants"]}  # fmt: skip
    config = {**config, "run": default, "grid": {"seed": [2, 3, 4]}, "recipe": recipe}
    (folder / "gotu.json").write_text(json.dumps(summary, indent=1) + "\n")
    (folder / "config_gotu.json").write_text(json.dumps(config, indent=2) + "\n")
    return folder, committed


def test_an_old_gotu_study_gets_the_config_of_the_grid_it_analysed(tmp_path):
    folder, committed = _old_gotu_study(tmp_path)
    assert len(_tool().migrate([tmp_path], write=False, log=lambda *a: None)) == 2
    _tool().migrate([tmp_path], log=lambda *a: None)
    for name in ("gotu.json", "config_gotu.json"):  # as today's recipe writes them
        assert (folder / name).read_bytes() == (committed / name).read_bytes(), name
    config = json.loads((folder / "config_gotu.json").read_text())
    assert config["run"]["model"] == "gotu_mlp" and config["grid"] == {"seed": [1, 2, 3]}
    assert _tool().migrate([tmp_path], write=False, log=lambda *a: None) == []


def test_an_old_gotu_study_of_other_runs_is_refused_untouched(tmp_path):
    """Today's grid of the summary's variants and seeds must be the summary's runs: a run id
    it does not make (here a hash changed) is named, and neither file is written."""
    folder, _ = _old_gotu_study(tmp_path)
    summary = json.loads((folder / "gotu.json").read_text())
    summary["runs"][0]["run_dir"] = summary["runs"][0]["run_dir"][:-10] + "0123456789"
    (folder / "gotu.json").write_text(json.dumps(summary, indent=1) + "\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    said = []
    with pytest.raises(ValueError, match="1 file.s. could not be read"):
        _tool().migrate([tmp_path], log=said.append)
    assert any("0123456789" in line and "skipped" in line for line in said), said
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("where,value", [("variants", ["mlp", "--trust-code"]),
                                         ("seed", "2 --trust-code"), ("out", 7)])  # fmt: skip
def test_an_old_gotu_study_with_a_value_of_another_kind_is_refused_untouched(
    tmp_path, where, value
):
    """The summary is read from disk: a variant, seed or folder that is not of its kind never
    becomes a flag of the rebuilt command; the study is named and neither file is written."""
    folder, _ = _old_gotu_study(tmp_path)
    summary = json.loads((folder / "gotu.json").read_text())
    if where == "seed":
        summary["runs"][0]["seed"] = value
    elif where == "out":
        summary["config"]["recipe"]["out"] = value
    else:
        summary["config"]["variants"] = value
    (folder / "gotu.json").write_text(json.dumps(summary, indent=1) + "\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    said = []
    with pytest.raises(ValueError, match="1 file.s. could not be read"):
        _tool().migrate([tmp_path], log=said.append)
    assert any("not of their kinds" in line and "skipped" in line for line in said), said
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
