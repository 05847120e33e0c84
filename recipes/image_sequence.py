"""Train and evaluate the image-sequence PVR task (Figure 2 of the paper).

    python recipes/image_sequence.py                                      # quick, on a CPU
    python recipes/image_sequence.py --window 2 --aggregation maj_vote --head transformer
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


@dataclasses.dataclass(frozen=True)
class Own:
    """The image_sequence model's fields (its builder's arguments) and the output folder."""

    head: str = dataclasses.field(
        default="mlp",
        metadata={"choices": ("mlp", "transformer", "mixer"), "help": "token-style head"},
    )
    encoder: str = dataclasses.field(
        default="conv",
        metadata={"choices": ("conv", "dense"), "help": "per-image encoder: CNN or one dense"},
    )
    conv_widths: tuple[int, ...] = dataclasses.field(
        default=(32, 64), metadata={"help": "filters of the conv stages (encoder conv)"}
    )
    dim: int = dataclasses.field(default=64, metadata={"help": "embedding width of an image"})
    widths: tuple[int, ...] = dataclasses.field(
        default=(512, 1024, 512, 64), metadata={"help": "hidden widths of the mlp head"}
    )
    depth: int = dataclasses.field(default=4, metadata={"help": "transformer/mixer layers"})
    out: str = dataclasses.field(
        default="runs/image_sequence/{head}_w{window}_{aggregation}_n{num_examples}_s{seed}",
        metadata={"help": "output folder ({field} placeholders are filled in)"},
    )

    def validate(self, run):
        cli.check_ints(self, ("dim", "depth"), 1)
        for name in ("conv_widths", "widths"):
            if any(isinstance(w, bool) or w < 1 for w in getattr(self, name)):
                raise cli.ConfigError(
                    f"--{name.replace('_', '-')} must be positive integers; "
                    f"received {getattr(self, name)}"
                )


def model_kwargs(own, fields):
    """The image_sequence builder's arguments from the recipe's model fields."""
    kwargs = dict(head=own.head, conv_widths=own.conv_widths if own.encoder == "conv" else (),
                  dim=own.dim, widths=own.widths, depth=own.depth)  # fmt: skip
    return {**fields, "model_kwargs": kwargs}


def paper(given):
    """The paper's visual recipe (Adam 1e-4, batch 50, 10 epochs), a conv encoder (32, 64
    filters) and the paper's MLP head widths, 60,000 training and 10,000 test examples."""
    return {}


def quick(given):
    """A dense per-image encoder and a 2-layer transformer head, 100,000 examples, 6 epochs
    of Adam 1e-3 with cosine decay."""
    return dict(head="transformer", depth=2, encoder="dense", num_examples=100_000,
                test_examples=2_000, train_eval_examples=2_000, epochs=6, learning_rate=1e-3,
                schedule="cosine")  # fmt: skip


def train_and_report(ctx):
    from pvr_keras.training import runs

    run, own = ctx.run, ctx.own
    record = runs.run(
        run, ctx.out, input=ctx.input, verbose="auto", distribution=ctx.placement,
        callbacks=ctx.callbacks(),
        title=f"image sequences, {own.head} head, window {run.window} {run.aggregation}",
    )  # fmt: skip
    what = f"image_sequence {own.head} window={run.window} {run.aggregation} n={run.num_examples}"
    print(f"\n{runs.summary_line(record, what)}\nrecord: {ctx.out}/record.json")
    return record


RECIPE = cli.Recipe(
    kind="sequence",
    presets={"quick": quick, "paper": paper},
    body=train_and_report,
    own=Own,
    description=__doc__,
    exclude=("model", "width"),
    own_to_run=model_kwargs,
)
main = RECIPE.main

if __name__ == "__main__":
    cli.main(main)
