"""Train and evaluate one token PVR configuration (Sections 5 and 6.2 of the paper).

    python recipes/token_pvr.py                       # quick: MLP, window 1, mod_sum, on CPU
    python recipes/token_pvr.py --window 2 --aggregation maj_vote --backend jax
    python recipes/token_pvr.py --preset paper --num-examples 1000000
    python recipes/token_pvr.py --devices 4           # data-parallel on 4 GPUs, same batch
    python recipes/token_pvr.py --backend jax --input tfdata   # tf.data instead of device input

Writes into ``--out``: config.json, record.json (the run record), history.csv,
learning_curve.png and model.keras (the trained model; ``recipes/evaluate.py OUT`` evaluates
it on other data). Quick preset: >= 99% test accuracy on window 1 mod_sum in a few minutes on
a 2-core CPU. Killed and started again with the same command, it resumes. Exit status: 0; 3
if the run finished but failed by the paper's rule (NaN loss, or final training accuracy below
20%); 2 for a bad flag; 1 for a crash.
"""

import dataclasses

from pvr_keras import config as configs
from pvr_keras.tasks import AGGREGATIONS, WINDOW_MODES
from pvr_keras.training.recipe import OPTIMIZERS, TOKEN


@dataclasses.dataclass(frozen=True)
class Config:
    model: str = dataclasses.field(
        default="mlp",
        metadata={"choices": ("mlp", "mlp2x", "transformer", "mixer"), "help": "architecture"},
    )
    width: float = dataclasses.field(
        default=1.0,
        metadata={"help": "scale of every model width (1 = the paper's model)"},
    )
    window: int = dataclasses.field(default=1, metadata={"help": "window size (complexity+1)"})
    aggregation: str = dataclasses.field(
        default="mod_sum",
        metadata={"choices": AGGREGATIONS, "help": "how the window's values make the label"},
    )
    window_mode: str = dataclasses.field(
        default="cyclic",
        metadata={"choices": WINDOW_MODES, "help": "windows wrap around, or only fitting ones"},
    )
    pointer: bool = dataclasses.field(
        default=True, metadata={"help": "--no-pointer: pointer always 0 (Appendix D)"}
    )
    holdout: int = dataclasses.field(default=0, metadata={"help": "holdout-k (Section 6.2)"})
    holdout_values: tuple[int, ...] | None = dataclasses.field(
        default=None,
        metadata={"help": "the tuple whose permutations holdout-k holds out (none: 0..window-1)"},
    )
    num_examples: int = dataclasses.field(default=50_000, metadata={"help": "training set size"})
    test_examples: int = dataclasses.field(default=10_000, metadata={"help": "test set size"})
    epochs: int = dataclasses.field(default=20, metadata={"help": "epochs (at least 800 steps)"})
    warmup_epochs: int = dataclasses.field(default=2, metadata={"help": "linear warm-up epochs"})
    min_steps: int = dataclasses.field(
        default=800, metadata={"help": "train at least this many steps (tiny training sets)"}
    )
    batch_size: int = 1024
    optimizer: str = dataclasses.field(
        default="sgd",
        metadata={
            "choices": OPTIMIZERS,
            "help": "Appendix A's optimizers (paper: sgd, momentum 0.9)",
        },
    )
    learning_rate: float = 0.05
    seed: int = 0
    backend: str | None = configs.backend_field()
    devices: int | None = configs.devices_field()
    tensorboard: bool = configs.tensorboard_field()
    input: str | None = dataclasses.field(
        default=None,
        metadata={
            "choices": ("device", "tfdata"),
            "help": "where batches are made: device (JAX: on the accelerator) or tfdata "
            "(none: device on JAX, tfdata on TensorFlow; the same examples either way)",
        },
    )
    out: str = dataclasses.field(
        default="runs/token_pvr/{model}_x{width}_w{window}_{aggregation}_n{num_examples}_s{seed}",
        metadata={"help": "output folder ({field} placeholders are filled in)"},
    )

    def task(self):
        """The ``TokenTask`` of this config."""
        return self.run().task()

    def run(self):
        """The ``training.runs.TokenRun`` this config trains."""
        from pvr_keras.training.runs import TokenRun

        return TokenRun(
            model=self.model, width=self.width, window=self.window,
            aggregation=self.aggregation, window_mode=self.window_mode, pointer=self.pointer,
            holdout=self.holdout, holdout_values=self.holdout_values,
            num_examples=self.num_examples, test_examples=self.test_examples, seed=self.seed,
            epochs=self.epochs, warmup_epochs=self.warmup_epochs, min_steps=self.min_steps,
            batch_size=self.batch_size, learning_rate=self.learning_rate,
            optimizer=self.optimizer,
        )  # fmt: skip

    def validate(self):
        configs.check_ints(self, ("num_examples", "test_examples", "epochs", "batch_size"), 1)
        configs.check_ints(self, ("warmup_epochs", "min_steps", "seed"), 0)
        configs.check_ints(self, ("devices",), 1)
        configs.check_positive(self, ("width", "learning_rate"))
        configs.check_task(self.run)  # the whole run: task, holdout, model, sizes, recipe
        configs.check_task(lambda: configs.format_out(self))


# The quick preset of each model, sized for a 2-core CPU: the Transformer and MLP-Mixer train
# 0.25-width copies (their full width needs ~20 GB of activations at batch 1024) and need
# fewer epochs to reach ~100% on window 1 (measured, TF, loaded 2-core CPU: the 0.25-width
# Mixer had 99.93% test accuracy after epoch 2 and 100% after epoch 3, ~2 min per epoch).
QUICK = {
    "mlp": Config(model="mlp", width=1.0),
    "mlp2x": Config(model="mlp2x", width=1.0),
    "transformer": Config(model="transformer", width=0.25, epochs=4, warmup_epochs=1, min_steps=0),
    "mixer": Config(model="mixer", width=0.25, epochs=4, warmup_epochs=1, min_steps=0),
}


def presets(model):
    """The ``quick`` and ``paper`` presets for ``model``."""
    paper = Config(  # the paper's token recipe, training.TOKEN, on 10^6 examples
        model=model,
        width=1.0,
        num_examples=1_000_000,
        test_examples=100_000,
        epochs=TOKEN.epochs,
        warmup_epochs=TOKEN.warmup_epochs,
        min_steps=TOKEN.min_steps,
        batch_size=TOKEN.batch_size,
        learning_rate=TOKEN.learning_rate,
        optimizer=TOKEN.optimizer,
    )
    return {"quick": QUICK.get(model, Config(model=model)), "paper": paper}


def main(argv=None):
    model = configs.peek(argv, "model", default=Config.model)
    cfg = configs.parse(Config, presets(model), argv, description=__doc__)
    out = configs.format_out(cfg)
    configs.start(cfg)
    from pvr_keras.training import distribute
    from pvr_keras.training.inputs import check_input, default_input

    source = configs.check_task(lambda: check_input(cfg.input or default_input()))

    # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
    placement = distribute.setup(cfg.devices)
    from pvr_keras.training import runs

    configs.write(cfg, out)  # refuses a folder of another run, untouched
    record = runs.token_run(
        cfg.run(),
        out,
        # Neither the device count (the global batch is the same) nor the input (the same
        # examples) changes a result: a killed run may resume on M devices or the other
        # input (configs.HOW_FIELDS). The record says which input ran ("input").
        config=configs.identity(cfg),
        input=source,
        title=f"{cfg.model}, window {cfg.window} {cfg.aggregation}, {cfg.num_examples} examples",
        verbose="auto",
        distribution=placement,
        callbacks=configs.callbacks(cfg, out),
    )
    what = f"{cfg.model} window={cfg.window} {cfg.aggregation} n={cfg.num_examples}"
    print(f"\n{runs.summary_line(record, what)}\nrecord: {out}/record.json")
    return record


if __name__ == "__main__":
    configs.run(main)
