"""pvr_keras.runconfig: one run config of sections, every field by one flat name."""

import dataclasses

import pytest

from pvr_keras import kinds
from pvr_keras.runconfig import SECTIONS, TOKEN, VISUAL, Run, section_fields


def test_every_field_has_one_name_and_a_section():
    for kind in kinds.kind_names():
        owner = section_fields(kinds.kind(kind))
        assert owner["kind"] == "kind" and owner["model"] == "architecture"
        assert owner["epochs"] == "train" and owner["seed"] == "data"
        assert owner["backend"] == "system"
        declared = [f.name for cls in SECTIONS.values() for f in dataclasses.fields(cls)]
        declared += [f.name for f in dataclasses.fields(kinds.kind(kind).task)]
        assert len(declared) == len(set(declared)), kind  # no field declared twice
    assert section_fields(kinds.kind("token"))["window"] == "task"


def test_flat_fields_read_and_replace_through_the_sections():
    run = Run.make("token", model="mixer", width=0.125, window=2, epochs=30, backend="jax")
    assert (run.model, run.width, run.window, run.epochs, run.backend) == (
        "mixer", 0.125, 2, 30, "jax",
    )  # fmt: skip
    assert run.architecture.model == "mixer" and run.task.window == 2 and run.train.epochs == 30
    other = run.replace(seed=3, epochs=80, aggregation="median")
    assert (other.seed, other.epochs, other.aggregation, other.model) == (3, 80, "median", "mixer")
    assert run.epochs == 30  # a new run; this one is unchanged
    assert Run.make("token").train == TOKEN and Run.make("block").train == VISUAL
    assert Run.make("block").model == "resnet18" and Run.make("block").width == 64
    flat = run.flat(system=False)
    assert "backend" not in flat and flat["window"] == 2 and flat["kind"] == "token"


@pytest.mark.parametrize(
    ("kind", "fields", "match"),
    [
        ("token", {"windows": 2}, "unknown run fields windows; the token kind's fields are"),
        ("token", {"model": "resnet18"}, "received 'resnet18' .a model of kind image."),
        ("token", {"window": 2, "holdout": 3}, r"holdout must be in 0..window! = 0..2"),
        ("token", {"seed": -1}, r"seed must be an integer in \[0, 9223372036854775808\)"),
        ("token", {"seed": 2**63}, "seed must be an integer in"),
        ("token", {"num_examples": 0}, "num_examples must be an integer"),
        ("token", {"num_examples": 2**31}, "num_examples must be an integer in"),
        ("token", {"width": 0.5, "model_kwargs": {"widths": [8]}}, "in model_kwargs, not both"),
        ("token", {"width": float("nan")}, "width must be a number > 0"),
        ("token", {"model_kwargs": [1]}, "model_kwargs must be a dict"),
        ("token", {"epochs": 0}, "epochs must be a positive integer"),
        ("token", {"backend": "torch"}, "backend must be one of tensorflow, jax"),
        ("block", {"width": 16.5}, r"width of resnet18 is its width \(an integer\)"),
        ("block", {"holdout": 2}, "holdout of a block task is 0 or 1"),
        ("block", {"grid": 3, "holdout": 1}, "defined for 2x2 grids only"),
        ("sequence", {"num_values": 12, "seq_len": 12}, "num_values must be at most 10"),
        ("sequence", {"width": 2}, "image_sequence declares no widths to scale"),
        # Issue 35: an OverflowError, and values taken as something else.
        ("token", {"width": 1e308}, "width must be at most 1073741824"),
        ("token", {"batch_size": 2**70}, r"batch_size must be below 2\*\*31"),
        ("token", {"min_steps": 10**23}, r"min_steps must be below 2\*\*31"),
        ("block", {"data_dir": 3}, "data_dir must be a folder path"),
        ("block", {"data_dir": "a\0b"}, "data_dir must be a folder path"),
        ("block", {"data_dir": ""}, "data_dir must be a folder path"),
        ("block", {"download": "no"}, "download must be True or False; received 'no'"),
        ("token", {"tensorboard": 1}, "tensorboard must be True or False; received 1"),
    ],
)
def test_bad_runs_say_what_is_wrong(kind, fields, match):
    with pytest.raises(ValueError, match=match):
        Run.make(kind, **fields)


def test_normalised_values_are_one_configuration():
    assert Run.make("token", learning_rate=1).run_id == Run.make("token", learning_rate=1.0).run_id
    assert Run.make("block", width=16.0).width == 16 and isinstance(Run.make("block").width, int)
    assert Run.make("block", holdout=1).holdout is True
    with pytest.raises(ValueError, match="kind cannot be replaced"):
        Run.make("token").replace(kind="block")


def test_model_arguments_are_the_tasks_then_the_widths():
    run = Run.make("token", model="mixer", width=0.25, seq_len=12, num_values=11)
    args = run.model_arguments()
    assert (args["seq_len"], args["vocab"], args["num_classes"], args["dim"]) == (12, 11, 11, 128)
    block = Run.make("block", model="vgg11_bn", width=8, values="cifar10").model_arguments()
    assert block == {"input_shape": (80, 80, 3), "num_classes": 10, "width": 8}


def test_a_kinds_default_width_is_not_blamed_on_your_model(tmp_path):
    """The block kind's default width (64: ResNet18's base channels) is not a width your own
    builder was given: a builder that declares no widths runs at width 1; a width you give
    it is still refused."""
    nets = tmp_path / "mine.py"
    nets.write_text("def tiny(input_shape, num_classes=10):\n    return None\n")
    assert Run.make("block", model=f"{nets}:tiny").architecture.width == 1.0
    with pytest.raises(ValueError, match="declares no widths to scale"):
        Run.make("block", model=f"{nets}:tiny", width=32)
