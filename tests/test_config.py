"""pvr_keras.config: flags generated from a dataclass config and its presets."""

import dataclasses

from pvr_keras import config as configs


@dataclasses.dataclass(frozen=True)
class Small(configs.VisualConfig):
    model: str = dataclasses.field(default="a", metadata={"help": "which model"})


PRESETS = {"quick": Small(epochs=1), "paper": Small()}


def test_flags_override_the_chosen_preset():
    assert configs.parse(Small, PRESETS, []).epochs == 1
    assert configs.parse(Small, PRESETS, ["--preset", "paper"]).epochs == 10
    cfg = configs.parse(Small, PRESETS, ["--preset", "paper", "--epochs", "3", "--model", "b"])
    assert (cfg.epochs, cfg.model, cfg.batch_size) == (3, "b", 50)


def test_help_keeps_the_description_layout_and_says_each_default_once():
    description = "Title.\n\n    python recipes/x.py --epochs 3     # a command line\n"
    text = configs.build_parser(Small, PRESETS, description).format_help()
    assert "    python recipes/x.py --epochs 3     # a command line" in text
    assert "(default: None)" not in text and "from --preset" not in text
    flat = " ".join(text.split())
    # Each flag shows its value in each preset, or one default where the presets agree.
    assert "--epochs EPOCHS (quick: 1; paper: 10)" in flat
    assert "--batch-size BATCH_SIZE (default: 50)" in flat
    assert "--model {a,b} which model (default: a)" in flat or "which model (default: a)" in flat
    assert "(default: quick)" in flat
    assert flat.count("(default:") + flat.count("(quick:") == len(dataclasses.fields(Small)) + 1
