"""pvr_keras.config: how each kind of field parses from the command line."""

import dataclasses
import json

import pytest

from pvr_keras import config as configs


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


PRESETS = {"quick": Config(), "paper": Config(epochs=200, pointer=False, seeds=(0, 1, 2, 3))}


def parse(*argv):
    return configs.parse(Config, PRESETS, list(argv))


def test_no_flags_is_the_quick_preset_and_preset_picks_another():
    assert parse() == PRESETS["quick"]
    assert parse("--preset", "paper") == PRESETS["paper"]


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
    paper_widths = configs.parse(Config, {"quick": Config(widths=(4,))}, ["--widths", "none"])
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


def test_peek_reads_one_flag_before_the_full_parse():
    assert configs.peek(["--name", "b", "--epochs", "2"], "name", "a") == "b"
    assert configs.peek(["--epochs", "2"], "name", "a") == "a"
    assert configs.peek(["--bogus", "--name=b"], "name", "a") == "b"  # unknown flags ignored


def test_written_config_reads_back_as_json(tmp_path):
    cfg = parse("--seeds", "3", "4", "--backend", "none")
    path = configs.write(cfg, tmp_path / "out")
    assert path == tmp_path / "out" / "config.json"
    saved = json.loads(path.read_text())
    assert saved == configs.to_dict(cfg)
    assert saved["seeds"] == [3, 4] and saved["backend"] is None and saved["widths"] is None
    assert Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()}) == cfg
