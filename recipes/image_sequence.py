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
with cosine decay, batch 50, window 1. Measured on real MNIST,
TensorFlow, a shared 2-core CPU under load (load average 4-6): test accuracy 93.1%, training
accuracy 98.1%, 3.9-4.5 min of training, 4.1-4.7 min in all (two runs, the same accuracies).
Tried on the way, same machine: the mlp head (256, 64) with the dense encoder reached 90.4%
(200k examples, 3 epochs, 1e-3) and 89.2% (300k, 4 epochs, cosine 2e-3), with a (8, 16) conv
encoder 78.4% (60k, 4 epochs): the MLP has to learn the pointer's selection by itself, and
attention learns it within 2 epochs.
"""

import dataclasses

from pvr_keras import config as configs
from pvr_keras.tasks import AGGREGATIONS


@dataclasses.dataclass(frozen=True)
class Config(configs.VisualConfig):
    head: str = dataclasses.field(
        default="mlp",
        metadata={"choices": ("mlp", "transformer", "mixer"), "help": "token-style head"},
    )
    window: int = dataclasses.field(default=1, metadata={"help": "window size (complexity+1)"})
    aggregation: str = dataclasses.field(
        default="mod_sum",
        metadata={"choices": AGGREGATIONS, "help": "how the window's values make the label"},
    )
    holdout: int = dataclasses.field(default=0, metadata={"help": "holdout-k (Section 6.2)"})
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

    def task(self):
        from pvr_keras.tasks import TokenTask

        return TokenTask(window=self.window, aggregation=self.aggregation)

    def validate(self):
        super().validate()
        task = configs.check_task(self.task)
        configs.check_task(lambda: task.check_holdout(self.holdout))
        configs.check_ints(self, ("dim", "depth"), 1)
        for name in ("conv_widths", "widths"):
            if any(isinstance(w, bool) or w < 1 for w in getattr(self, name)):
                raise configs.ConfigError(
                    f"--{name.replace('_', '-')} must be positive integers; "
                    f"received {getattr(self, name)}"
                )
        configs.check_task(lambda: configs.format_out(self))


PAPER = Config()
QUICK = dataclasses.replace(
    PAPER,
    head="transformer",
    depth=2,
    encoder="dense",
    num_examples=100_000,
    test_examples=2_000,
    train_eval_examples=2_000,
    epochs=6,
    learning_rate=1e-3,
    schedule="cosine",
)
PRESETS = {"quick": QUICK, "paper": PAPER}


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    out = configs.format_out(cfg)
    configs.start(cfg)
    from pvr_keras.training import distribute
    from pvr_keras.training.inputs import check_input, default_input

    source = configs.check_task(lambda: check_input(cfg.input or default_input()))

    # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
    placement = distribute.setup(cfg.devices)
    from pvr_keras.data import images
    from pvr_keras.training import runs

    # Data first: a machine that cannot get it fails here, before anything is written.
    images.prepare_sources(["mnist"], cfg.data_dir, download=cfg.download)
    configs.write(cfg, out)  # refuses a folder of another run, untouched
    record = runs.sequence_run(
        cfg, out, input=source, distribution=placement, callbacks=configs.callbacks(cfg, out)
    )
    what = f"image_sequence {cfg.head} window={cfg.window} {cfg.aggregation} n={cfg.num_examples}"
    print(f"\n{runs.summary_line(record, what)}\nrecord: {out}/record.json")
    return record


if __name__ == "__main__":
    configs.run(main)
