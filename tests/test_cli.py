"""pvr_keras.cli: how each kind of field parses from the command line, presets as functions,
help that shows every preset's value, and a run recipe's flags made from its sections."""

import dataclasses
import json
import os

import pytest

from pvr_keras import cli
from tests.bounded import within


@dataclasses.dataclass(frozen=True)
class Config:
    epochs: int = 3
    rate: float = 0.5
    name: str = dataclasses.field(default="a", metadata={"choices": ("a", "b")})
    pointer: bool = True
    claims: bool = False
    backend: str | None = None
    devices: int | None = None
    seeds: tuple[int, ...] = (0, 1)
    widths: tuple[int, ...] | None = None


PRESETS = {
    "quick": lambda given: {},
    "paper": lambda given: dict(epochs=200, pointer=False, seeds=(0, 1, 2, 3)),
}


def parse(*argv):
    return cli.parse(Config, PRESETS, list(argv))


def test_no_flags_is_the_quick_preset_and_preset_picks_another():
    assert parse() == Config()
    assert parse("--preset", "paper") == Config(epochs=200, pointer=False, seeds=(0, 1, 2, 3))


def test_types_are_converted():
    cfg = parse("--epochs", "7", "--rate", "1e-3", "--name", "b")
    assert (cfg.epochs, cfg.rate, cfg.name) == (7, 1e-3, "b")
    assert isinstance(cfg.epochs, int) and isinstance(cfg.rate, float)


def test_booleans_have_a_flag_and_its_negation():
    assert parse("--no-pointer").pointer is False
    assert parse("--claims").claims is True
    assert parse("--preset", "paper", "--pointer").pointer is True  # overrides the preset
    assert parse("--preset", "paper").pointer is False  # absent: the preset's value
    assert parse("--pointer", "--no-pointer").pointer is False  # the last one wins


def test_optional_fields_take_none():
    assert parse("--backend", "jax").backend == "jax"
    assert parse("--backend", "none").backend is None
    assert parse("--devices", "4").devices == 4
    assert parse("--devices", "None").devices is None


def test_tuple_fields_take_several_values():
    assert parse("--seeds", "3", "5", "8").seeds == (3, 5, 8)
    assert parse("--seeds", "4").seeds == (4,)
    assert isinstance(parse("--seeds", "4").seeds, tuple)
    assert parse("--preset", "paper", "--seeds", "9").seeds == (9,)
    assert parse("--widths", "16", "8").widths == (16, 8)
    assert parse("--widths", "none").widths is None  # not (None,)
    paper_widths = cli.parse(Config, {"quick": lambda g: dict(widths=(4,))}, ["--widths", "none"])
    assert paper_widths.widths is None  # overrides a preset's tuple


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "two"], "argument --epochs: invalid int value: 'two'"),
        (["--rate", "fast"], "argument --rate: invalid float value"),
        (["--name", "c"], "argument --name: invalid choice: 'c'"),
        (["--preset", "huge"], "argument --preset: invalid choice: 'huge'"),
        (["--seeds"], "argument --seeds: expected at least one argument"),
        (["--seeds", "1", "x"], "argument --seeds: invalid int value: 'x'"),
        (["--epoch", "3", "--bogus"], "unrecognized arguments: --bogus"),
        (["--pointer=yes"], "ignored explicit argument 'yes'"),
        (["--widths", "8", "none"], "--widths: none must stand alone"),
    ],
)
def test_bad_flags_say_which_and_why(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        parse(*argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_preset_sees_the_flags_given():
    """A preset is a plain function of the flags given (token_pvr's quick preset depends on
    --model); the flags still replace its values."""
    presets = {"quick": lambda given: dict(epochs=9 if given.get("name") == "b" else 1)}
    assert cli.parse(Config, presets, ["--name", "b"]).epochs == 9
    assert cli.parse(Config, presets, []).epochs == 1
    assert cli.parse(Config, presets, ["--name", "b", "--epochs", "3"]).epochs == 3
    assert cli.parse(Config, presets, ["--bogus", "x", "--name=b"][2:]).epochs == 9


def test_help_keeps_the_description_layout_and_says_each_default_once(capsys):
    description = "Title.\n\n    python recipes/x.py --epochs 3     # a command line\n"
    with pytest.raises(SystemExit):
        cli.parse(Config, PRESETS, ["--help"], description)
    text = capsys.readouterr().out
    assert "    python recipes/x.py --epochs 3     # a command line" in text
    assert "(default: None)" not in text and "from --preset" not in text
    flat = " ".join(text.split())
    # Each flag shows its value in each preset, or one default where the presets agree.
    assert "--epochs EPOCHS (quick: 3; paper: 200)" in flat
    assert "--rate RATE (default: 0.5)" in flat
    assert "(default: quick)" in flat
    assert flat.count("(default:") + flat.count("(quick:") == len(dataclasses.fields(Config)) + 1


def test_written_config_reads_back_as_json(tmp_path):
    cfg = parse("--seeds", "3", "4", "--backend", "none")
    path = cli.write(cfg, tmp_path / "out")
    assert path == tmp_path / "out" / "config.json"
    saved = json.loads(path.read_text())
    assert saved == cli.to_dict(cfg)
    assert saved["seeds"] == [3, 4] and saved["backend"] is None and saved["widths"] is None
    assert Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()}) == cfg


@pytest.mark.parametrize("kind", ["fifo", "link", "deep"])
def test_a_config_that_is_no_plain_file_or_nests_too_deeply_is_refused_at_once(tmp_path, kind):
    """``--out D`` with ``D/config.json`` a FIFO (``check_config`` waited for a writer
    forever), a planted link (read through) or JSON 100,000 deep (a RecursionError): a usage
    error naming the file, before any work."""
    cfg = parse("--seeds", "3")
    path = tmp_path / "config.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        (tmp_path / "planted.json").write_text(json.dumps(cli.to_dict(cfg)))
        path.symlink_to(tmp_path / "planted.json")
    else:
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    message = {"fifo": "config.json is not a plain file", "link": "config.json is a symbolic link",
               "deep": r"config.json is not a whole JSON config \(nests deeper"}[kind]  # fmt: skip
    for check in (lambda: cli.check_config(tmp_path, None, cfg), lambda: cli.write(cfg, tmp_path)):
        with within(5), pytest.raises(cli.ConfigError, match=message):
            check()


def test_a_run_recipes_flags_come_from_the_runs_sections():
    """Every field of the kind's runs is a flag (task, architecture, data, train section,
    system), once, plus the recipe's own; run fields route to their sections."""

    @dataclasses.dataclass(frozen=True)
    class Own:
        out: str = "runs/x"

    recipe = cli.Command(kind="token", presets={"quick": lambda g: dict(epochs=3)}, body=None,
                        own=Own)  # fmt: skip
    names = [f.name for f in recipe.fields()]
    assert len(names) == len(set(names))
    assert {
        "window",
        "aggregation",
        "model",
        "width",
        "num_examples",
        "seed",
        "holdout",
        "epochs",
        "optimizer",
        "momentum",
        "backend",
        "devices",
        "out",
    } <= set(names)
    assert "model_kwargs" not in names and "kind" not in names
    run, own = recipe.parse(["--window", "3", "--optimizer", "adam", "--backend", "jax"])
    assert (run.window, run.train.optimizer, run.system.backend, run.epochs) == (
        3,
        "adam",
        "jax",
        3,
    )
    assert own == Own()
    assert "backend" not in run.to_dict()  # how it runs is not what it computes
    with pytest.raises(cli.ConfigError, match="holdout must be in 0..window! = 0..2"):
        recipe.parse(["--window", "2", "--holdout", "3"])
    with pytest.raises(
        cli.ConfigError,
        match="model must be one of mlp, mlp2x, transformer, "
        "mixer .the token models. or a builder reference",
    ):
        recipe.parse(["--model", "resnet50"])  # fmt: skip
    with pytest.raises(
        cli.ConfigError,
        match="mlp, mlp2x, transformer, mixer .the token "
        "models. or a builder reference .*; received 'resnet18' .a model of kind "
        "image.",
    ):
        recipe.parse(["--model", "resnet18"])  # fmt: skip
