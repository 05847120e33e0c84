"""The generic command line: a run flag given several values is a grid axis, a builder's own
arguments are ``--model.ARG`` flags, ``--out`` names a user builder by its name, and every
older flag name of the recipes still reads as the flag it became."""

import json

import pytest

from pvr_keras import cli
from pvr_keras.runconfig import Run
from tests import scripts

TINY = ["--num-examples", "300", "--test-examples", "200", "--train-eval-examples", "200",
        "--epochs", "1", "--min-steps", "0", "--batch-size", "100"]  # fmt: skip
USER_NET = """
import keras


def tiny_net(seq_len, vocab, num_classes, hidden: int = 8, name="tiny"):
    inputs = keras.Input((seq_len,), dtype="int32")
    x = keras.layers.Embedding(vocab, 4)(inputs)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(hidden, activation="relu")(x)
    return keras.Model(inputs, keras.layers.Dense(num_classes)(x), name=name)
"""


@pytest.fixture(scope="module")
def token_pvr():
    return scripts.load("recipes/token_pvr.py")


@pytest.fixture(scope="module")
def token_sweep():
    return scripts.load("recipes/token_sweep.py")


def test_several_values_make_a_grid_and_one_value_a_run(token_pvr):
    parsed = token_pvr.COMMAND.parse_all(["--window", "1", "2", "--seed", "0", "1"])
    assert parsed.axes == {"seed": (0, 1), "window": (1, 2)}
    runs = parsed.runs()
    assert [(r.seed, r.window) for r in runs] == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert parsed.run == runs[0]  # the first of the grid
    one = token_pvr.COMMAND.parse_all(["--window", "2"])
    assert one.axes == {} and one.runs() == [one.run] and one.run.window == 2
    assert isinstance(one.run.window, int)


def test_a_grid_recipe_trains_every_run_as_one_sweep(token_pvr, tmp_path):
    out = tmp_path / "grid"
    result = token_pvr.main([*TINY, "--window", "1", "2", "--seed", "0", "1", "--out", str(out)])
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((x["window"], x["seed"]) for x in lines) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert all((out / x["run_dir"] / "record.json").is_file() for x in lines)
    assert result["total"] == 4 and len(result["trained"]) == 4
    again = token_pvr.main([*TINY, "--window", "1", "2", "--seed", "0", "1", "--out", str(out)])
    assert again["trained"] == [] and again["recorded_before"] == 4  # resumes: nothing to do


def test_a_grid_fills_out_placeholders_with_its_values(token_pvr):
    parsed = token_pvr.COMMAND.parse_all(["--window", "1", "2", "--seed", "3"])
    out = token_pvr.COMMAND.out_folder(parsed.run, parsed.own, parsed.axes)
    assert out.name == "mlp_x1.0_w1-2_mod_sum_n50000_s3"


def test_a_grid_is_refused_where_the_recipe_trains_two_runs_per_configuration():
    block_holdout = scripts.load("recipes/block_holdout.py")
    with pytest.raises(cli.ConfigError, match="--seed ask for a grid"):
        block_holdout.main(["--seed", "0", "1", "--out", "/nonexistent/x"])


def test_model_flags_reach_a_user_builder(token_pvr, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_nets.py").write_text(USER_NET)
    flags = ["--model", "my_nets.py:tiny_net", "--model.hidden", "64"]
    parsed = token_pvr.COMMAND.parse_all(flags)
    assert parsed.run.model_kwargs == {"hidden": 64}
    assert parsed.run.model_arguments()["hidden"] == 64
    assert parsed.run.to_dict()["model_kwargs"] == {"hidden": 64}  # in the identity
    assert parsed.run.run_id != token_pvr.COMMAND.parse_all(flags[:2]).run.run_id
    # Typed from the annotation: a float is refused; an unknown argument is not a flag.
    with pytest.raises(SystemExit):
        token_pvr.COMMAND.parse_all([*flags[:2], "--model.hidden", "6.5"])
    with pytest.raises(SystemExit):
        token_pvr.COMMAND.parse_all([*flags[:2], "--model.depth", "3"])
    # The default --out names the builder, not the path of its file.
    out = token_pvr.COMMAND.out_folder(parsed.run, parsed.own)
    assert out.parts[:2] == ("runs", "token_pvr") and out.name.startswith("tiny_net_x1.0_w1")


def test_model_flags_train_the_builder_with_their_value(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_nets.py").write_text(USER_NET)
    train = scripts.load("recipes/train.py")
    params = {}
    for hidden in (8, 64):
        out = tmp_path / f"h{hidden}"
        record = train.main([*TINY, "--model", "my_nets.py:tiny_net", "--model.hidden",
                             str(hidden), "--out", str(out)])  # fmt: skip
        assert record["config"]["model_kwargs"] == {"hidden": hidden}
        params[hidden] = record["num_params"]
    # Dense(hidden) after 11 x 4 embedded features (window 1: the pointer and 10 values),
    # then Dense(10): 44h + h + 10h parameters that depend on hidden.
    assert params[64] - params[8] == (64 - 8) * (11 * 4 + 1 + 10)


def test_a_registered_builders_arguments_are_flags(token_pvr):
    run = token_pvr.COMMAND.parse_all(["--model.widths", "32", "16"]).run
    assert run.model_kwargs == {"widths": (32, 16)}
    mixer = token_pvr.COMMAND.parse_all(["--model", "mixer", "--model.depth", "2"]).run
    assert mixer.model_kwargs == {"depth": 2} and mixer.width == 0.25  # the quick preset's
    assert mixer.model_arguments()["depth"] == 2 and mixer.model_arguments()["dim"] == 128
    with pytest.raises(cli.ConfigError, match="the widths dim in model_kwargs, not both"):
        token_pvr.COMMAND.parse_all(["--model", "mixer", "--model.dim", "64"])


# Every flag name the recipes had before the generic command line, and what it is now.
OLD_FLAGS = {
    "token_sweep.py": [
        (["--models", "mlp", "mixer"], ["--model", "mlp", "mixer"]),
        (["--windows", "2", "3"], ["--window", "2", "3"]),
        (["--sizes", "1000", "3000"], ["--num-examples", "1000", "3000"]),
        (["--aggregations", "min", "max"], ["--aggregation", "min", "max"]),
        (["--seeds", "0", "4"], ["--seed", "0", "4"]),
        (
            ["--sweep", "holdout", "--holdouts", "1", "2"],
            ["--sweep", "holdout", "--holdout", "1", "2"],
        ),
        (["--widths", "16", "8"], ["--model.widths", "16", "8"]),
        (["--seeds", "3"], ["--seed", "3"]),
    ],
    "image_sequence.py": [
        (["--head", "mixer"], ["--model.head", "mixer"]),
        (["--conv-widths", "4", "8"], ["--model.conv_widths", "4", "8"]),
        (["--dim", "16"], ["--model.dim", "16"]),
        (["--widths", "16", "8"], ["--model.widths", "16", "8"]),
        (["--depth", "3"], ["--model.depth", "3"]),
    ],
}


@pytest.mark.parametrize(
    "recipe,old,new", [(r, o, n) for r, pairs in OLD_FLAGS.items() for o, n in pairs]
)
def test_older_flag_names_keep_working(recipe, old, new):
    module = scripts.load(f"recipes/{recipe}")
    before, after = module.COMMAND.parse_all(old), module.COMMAND.parse_all(new)
    assert [r.run_id for r in before.runs()] == [r.run_id for r in after.runs()]
    assert before.runs() != module.COMMAND.parse_all([]).runs()  # the flag did something


def test_image_sequence_keeps_its_run_identities_and_encoder_flag():
    """The presets give the builder every argument its runs were recorded with."""
    module = scripts.load("recipes/image_sequence.py")
    quick = module.COMMAND.parse_all([]).run
    assert quick.model_kwargs == {"head": "transformer", "conv_widths": (), "dim": 64,
                                  "widths": (512, 1024, 512, 64), "depth": 2}  # fmt: skip
    paper = module.COMMAND.parse_all(["--preset", "paper"]).run
    assert paper.model_kwargs["conv_widths"] == (32, 64) and paper.model_kwargs["head"] == "mlp"
    conv = module.COMMAND.parse_all(["--encoder", "conv"]).run
    assert conv.model_kwargs["conv_widths"] == (32, 64)
    dense = module.COMMAND.parse_all(["--preset", "paper", "--encoder", "dense"]).run
    assert dense.model_kwargs["conv_widths"] == ()


def test_the_running_studies_are_todays_commands(token_sweep):
    """The committed Figure 14 (window 3) and Figure 11 runs are runs of the commands in
    tools/studies/holdout_w3_paper.sh and tools/studies/figure11_reduced.sh (older flag names)."""
    from pvr_keras import legacy

    def ids(*flags):
        runs, _ = token_sweep.build(token_sweep.COMMAND.parse_all(list(flags)))
        return {r.run_id for r in runs}

    holdout = ids("--sweep", "holdout", "--preset", "paper", "--windows", "3", "--holdouts",
                  "1", "6", "--seeds", "0", "1", "2")  # fmt: skip
    assert len(holdout) == 6
    results = scripts.REPO / "docs" / "results"
    lines = [json.loads(x) for x in (results / "holdout_paper" / "results.jsonl").read_text()
             .splitlines()]  # fmt: skip
    window3 = [x for x in lines if x["window"] == 3 and x["num_examples"] == 300_000]
    assert window3 and {x["id"] for x in window3} <= holdout
    assert all(legacy.from_line(x).run_id == x["id"] for x in window3)
    common = ("--sweep", "size_window", "--preset", "paper", "--seeds", "0", "--test-examples",
              "10000", "--epochs", "20", "--warmup-epochs", "2")  # fmt: skip
    figure11 = ids(*common, "--models", "mixer", "--width", "0.125", "--windows", "3",
                   "--sizes", "50000", "--min-steps", "9780", "--seeds", "1", "2")  # fmt: skip
    lines = [json.loads(x) for x in (results / "figure11" / "results.jsonl").read_text()
             .splitlines()]  # fmt: skip
    seeds = {x["id"] for x in lines if x["window"] == 3 and x["num_examples"] == 50_000
             and x["seed"] in (1, 2)}  # fmt: skip
    assert seeds and seeds <= figure11


def test_a_preset_may_give_an_axis():
    recipe = cli.Command(kind="token", own=scripts.load("recipes/token_pvr.py").Own,
                        presets={"two": lambda given: {"seed": (5, 6)}})  # fmt: skip
    parsed = recipe.parse_all([])
    assert [r.seed for r in parsed.runs()] == [5, 6]
    assert recipe.parse_all(["--seed", "7"]).axes == {}  # a flag replaces the preset's grid
    assert Run.make("token", seed=5) == parsed.run


@pytest.mark.parametrize(
    "argument",
    ["k={[1]: 2}", "k={1, [2]}", "k: " + "-" * 900 + "1 = 3"],
)
def test_a_builder_argument_python_could_not_build_is_a_plain_flag(
    token_pvr, tmp_path, monkeypatch, capsys, argument
):
    # Read from the source for --help: a default with an unhashable key or member, or an
    # annotation nested too deep for ast, reads as none (as a non-literal would), never a
    # traceback.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "odd.py").write_text(f"def f(seq_len, vocab, num_classes, {argument}):\n  pass\n")
    with pytest.raises(SystemExit) as exit:
        token_pvr.COMMAND.parse_all(["--model", "odd.py:f", "--help"])
    assert exit.value.code == 0
    assert "--model.k" in capsys.readouterr().out


def test_a_builder_file_too_deep_for_ast_offers_no_flags_of_its_own(
    token_pvr, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    deep = "-" * 5000 + "1"
    (tmp_path / "deep.py").write_text(
        f"def f(seq_len, vocab, num_classes, zz: int = 8, k={deep}):\n  pass\n"
    )
    with pytest.raises(SystemExit) as exit:
        token_pvr.COMMAND.parse_all(["--model", "deep.py:f", "--help"])
    assert exit.value.code == 0
    assert "--model.zz" not in capsys.readouterr().out  # read none: the run's check says why


class _Measured(Exception):
    """Raised by the stand-in for ``engines.choose_population``: nothing trains."""


@pytest.mark.parametrize("recipe", ["token_pvr", "token_sweep"])
def test_a_grid_measures_the_population_its_first_runs_left_will_train(
    recipe, tmp_path, monkeypatch, request
):
    """Seeds 0-3 asked in populations of 8 with seeds 0 and 1 recorded: two left, so a
    population of 2 is measured, for the first run left (seed 2); with three recorded, one
    run left is a population of one (none measured); a fresh folder measures 4."""
    from pvr_keras import engines, sweeps

    module = request.getfixturevalue(recipe)
    asked = []

    def choose_population(size, backend=None, *, first=None, run=None, **kwargs):
        asked.append((size, first, run.seed))
        raise _Measured

    monkeypatch.setattr(engines, "choose_population", choose_population)
    if recipe == "token_pvr":
        flags = [*TINY, "--seed", "0", "1", "2", "3", "--population", "8"]
    else:
        flags = ["--sweep", "size_window", "--models", "mlp", "--windows", "1", "--sizes",
                 "300", "--seeds", "0", "1", "2", "3", "--population", "8"]  # fmt: skip
    out = tmp_path / "grid"
    grid = module.COMMAND.parse_all([*flags, "--out", str(out)]) if recipe == "token_pvr" else None
    with pytest.raises(_Measured):
        module.main([*flags, "--out", str(tmp_path / "fresh")])
    runs = grid.runs() if grid else _sweep_runs(module, [*flags, "--out", str(out)])
    results = sweeps.ResultsDir(out, create=True)
    for recorded in (2, 3):
        for run in runs[:recorded]:
            results.append({"id": run.run_id})
        with pytest.raises(_Measured):
            module.main([*flags, "--out", str(out)])
    assert asked == [(8, 4, 0), (8, 2, 2), (8, 1, 3)]


def _sweep_runs(module, flags):
    """The runs of a token_sweep command line, as its ``main`` builds them."""
    return module.build(module.COMMAND.parse_all(flags))[0]


@pytest.mark.parametrize("recipe", ["token_pvr", "token_sweep"])
def test_a_grid_of_several_models_says_which_train_on_an_engine_measured_for_another(
    recipe, tmp_path, monkeypatch, capsys, request
):
    from pvr_keras import engines, sweeps

    module = request.getfixturevalue(recipe)

    def choose(backend=None, *, run=None, **kwargs):
        engines._choice = {"backend": "tensorflow", "why": "measured", "family": run.model}
        return "tensorflow", "measured"

    def stop(*args, **kwargs):
        raise _Measured

    monkeypatch.setattr(engines, "choose", choose)
    monkeypatch.setattr(sweeps, "run_sweep", stop)
    for models, said in ((["mlp", "transformer", "mixer"], True), (["mlp"], False)):
        if recipe == "token_pvr":
            flags = [*TINY, "--model", *models, "--seed", "0", "1"]
        else:
            flags = ["--sweep", "size_window", "--models", *models, "--windows", "1",
                     "--sizes", "300", "--seeds", "0", "1"]  # fmt: skip
        with pytest.raises(_Measured):
            module.main([*flags, "--out", str(tmp_path / "-".join(models))])
        out = capsys.readouterr().out
        line = ("engine: measured for mlp, the first run still to train; the grid's runs of "
                "mixer, transformer train on it too")  # fmt: skip
        assert (line in out) == said, out
