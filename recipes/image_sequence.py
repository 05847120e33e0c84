"""Train and evaluate the image-sequence PVR task (Figure 2 of the paper).

    python recipes/image_sequence.py                                      # quick, on a CPU
    python recipes/image_sequence.py --window 2 --aggregation maj_vote --model.head transformer
    python recipes/image_sequence.py --preset paper --backend jax
    python recipes/image_sequence.py --preset paper --devices 4           # data-parallel, 4 GPUs

The token task (``TokenTask``: position 0 the pointer, ``window`` values aggregated) with every
token drawn as a random MNIST image of that digit, from the matching TFDS split of
``--data-dir`` (default ``TFDS_DATA_DIR``). The model (``models.image_sequence``) encodes each
28x28 image with a small CNN shared across positions and classifies the sequence of
embeddings with a token-style head (``mlp``, ``transformer`` or ``mixer``).

Writes into ``--out``: config.json, record.json (the run record), history.csv and
learning_curve.png. Killed and started again with the same command, it resumes.

The paper names the task but reports no experiment on it, so there is no paper number to
match. ``paper``: the paper's visual recipe (Adam 1e-4, batch 50, 10 epochs), a conv encoder
(32, 64 filters) and the paper's MLP head widths, 60,000 training and 10,000 test examples.
``quick`` (2-core CPU): a dense per-image encoder (784 -> 64) and a 2-layer transformer head
(dim 64, 4 heads, MLP 256; 152k parameters), 100,000 training examples, 6 epochs of Adam 1e-3
with cosine decay, batch 50, window 1: about 93% test accuracy in under 5 minutes, measured
on a 2-core CPU (the measurements, and the settings tried on the way:
``docs/measurements.md``).
"""

import dataclasses

from pvr_keras import cli

# The image_sequence builder's arguments are flags (--model.head, --model.conv_widths, ...);
# the presets give all five that runs have been recorded with, and the recipe's older flag
# names (--head, --conv-widths, --dim, --widths, --depth) still set them.
ALIASES = {
    "--head": "model.head", "--conv-widths": "model.conv_widths", "--dim": "model.dim",
    "--widths": "model.widths", "--depth": "model.depth",
}  # fmt: skip
PAPER_MODEL = {"model.head": "mlp", "model.conv_widths": (32, 64), "model.dim": 64,
               "model.widths": (512, 1024, 512, 64), "model.depth": 4}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Own:
    encoder: str | None = dataclasses.field(
        default=None,
        metadata={
            "choices": ("conv", "dense"),
            "help": "per-image encoder: CNN (--model.conv_widths) or one dense layer "
            "(none: the preset's)",
        },
    )
    out: str = cli.out_field(
        "runs/image_sequence/{head}_w{window}_{aggregation}_n{num_examples}_s{seed}"
    )


def _encoder(values, given):
    """``--encoder dense`` is no conv stage; ``--encoder conv`` the (32, 64) filters."""
    encoder = given.get("encoder")
    if encoder == "dense":
        values["model.conv_widths"] = ()
    elif encoder == "conv" and not values["model.conv_widths"]:
        values["model.conv_widths"] = PAPER_MODEL["model.conv_widths"]
    return values


def paper(given):
    """The paper's visual recipe (Adam 1e-4, batch 50, 10 epochs), a conv encoder (32, 64
    filters) and the paper's MLP head widths, 60,000 training and 10,000 test examples."""
    return _encoder(dict(PAPER_MODEL), given)


def quick(given):
    """A dense per-image encoder and a 2-layer transformer head, 100,000 examples, 6 epochs
    of Adam 1e-3 with cosine decay."""
    model = {**PAPER_MODEL, "model.head": "transformer", "model.depth": 2,
             "model.conv_widths": ()}  # fmt: skip
    return dict(_encoder(model, given), num_examples=100_000, test_examples=2_000,
                train_eval_examples=2_000, epochs=6, learning_rate=1e-3,
                schedule="cosine")  # fmt: skip


COMMAND = cli.Command(
    kind="sequence",
    presets={"quick": quick, "paper": paper},
    own=Own,
    description=__doc__,
    exclude=("width",),
    aliases=ALIASES,
    placeholders=lambda run: {"head": run.model_kwargs["head"]},
    title=lambda run: (
        f"image_sequence, {run.model_kwargs['head']} head, window {run.window} {run.aggregation}"
    ),
)
main = COMMAND.main

if __name__ == "__main__":
    cli.main(main)
