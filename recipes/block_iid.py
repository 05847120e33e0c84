"""Train a CNN on the 2x2 block-style visual PVR task, IID (Section 4.2, Figures 3 and 7).

    python recipes/block_iid.py                                         # quick, on a CPU
    python recipes/block_iid.py --model vgg11_bn --values cifar10 --backend jax
    python recipes/block_iid.py --preset paper                          # width 64, 60k/10k
    python recipes/block_iid.py --preset paper --devices 4              # data-parallel, 4 GPUs

Each example is an 80x80 image of four 40x40 cells holding jittered MNIST digits (or CIFAR-10
images with ``--values cifar10``); the top-left digit points at a cell (0-3 top right, 4-6
bottom left, 7-9 bottom right) and the label is the class there. Train and test images come
from the matching TFDS splits of ``--data-dir`` (default ``TFDS_DATA_DIR``).

Writes into ``--out``: config.json, record.json (the run record), history.csv,
learning_curve.png and model.keras (so that ``block_holdout.py --iid-run`` can reuse it).
Killed and started again with the same command, it resumes.

Presets. ``paper``: ResNet18 at torchvision width 64, the paper's recipe (Adam 1e-4, batch 50,
10 epochs, constant rate), 60,000 training and 10,000 test examples. ``quick`` (2-core CPU):
ResNet18 at width 8 (178k parameters), 25,000 training examples, 5 epochs of Adam 2e-3 with a
cosine decay, batch 50; accuracies on 2,000 test and 2,000 training examples. ``medium``
(Figure 7 in docs/results): width 16, 60,000 / 10,000 examples, 5 epochs of Adam 2e-3 with a
cosine decay. Measured for ``quick`` on real MNIST, TensorFlow, a 2-core CPU shared with other
jobs (load average 8-9): test accuracy 94.7%, training accuracy 98.0%, 4.5 min of training (about
5 min with start-up); the same config inside ``block_holdout.py``: 95.1% test. With
20,000 examples, 6 epochs at a constant 1e-3 it reached only 90.4%.
"""

import dataclasses

from pvr_keras import config as configs


@dataclasses.dataclass(frozen=True)
class Config(configs.VisualConfig):
    model: str = dataclasses.field(
        default="resnet18", metadata={"choices": ("resnet18", "vgg11_bn"), "help": "architecture"}
    )
    values: str = dataclasses.field(
        default="mnist",
        metadata={"choices": ("mnist", "cifar10"), "help": "images of the value cells"},
    )
    width: int = dataclasses.field(
        default=64, metadata={"help": "base channels of the CNN (torchvision: 64)"}
    )
    out: str = dataclasses.field(
        default="runs/block_iid/{model}_w{width}_{values}_n{num_examples}_s{seed}",
        metadata={"help": "output folder ({field} placeholders are filled in)"},
    )

    def task(self):
        from pvr_keras.tasks import BlockTask

        return BlockTask(values=self.values)

    def validate(self):
        super().validate()
        configs.check_ints(self, ("width",), 1)
        configs.check_task(self.task)
        configs.check_task(lambda: configs.format_out(self))


PAPER = Config()
QUICK = dataclasses.replace(
    PAPER,
    width=8,
    num_examples=25_000,
    test_examples=2_000,
    train_eval_examples=2_000,
    epochs=5,
    learning_rate=2e-3,
    schedule="cosine",
)
# Figure 7 on a 2-core CPU (docs/results/figure7): the paper's 60k/10k examples, the CNNs at
# a quarter of torchvision's width, 5 epochs of Adam 2e-3 with cosine decay (the paper: width
# 64, 10 epochs of Adam 1e-4).
MEDIUM = dataclasses.replace(
    PAPER,
    width=16,
    train_eval_examples=5_000,
    epochs=5,
    learning_rate=2e-3,
    schedule="cosine",
)
PRESETS = {"quick": QUICK, "medium": MEDIUM, "paper": PAPER}

# Fields that describe the run; a block_iid folder can stand in for the IID model of a
# block_holdout run when these agree.
RUN_FIELDS = tuple(
    f.name
    for f in dataclasses.fields(Config)
    if f.name not in ("data_dir", "backend", "out", *configs.HOW_FIELDS)
)


def train_run(cfg, out, *, distribution, holdout=False, verbose="auto"):
    """Trains one block run (IID or the Figure 6 holdout) of ``cfg`` into ``out``.

    The run record's config is ``cfg`` (as a dict, without ``out`` and ``devices``) with
    ``holdout`` added. The trained model is saved as ``out/model.keras``. Needs the Keras
    backend chosen already; ``distribution`` is ``distribute.setup(cfg.devices)``'s placement.
    """
    from pvr_keras import models, training
    from pvr_keras.data import images
    from pvr_keras.training.inputs import block_train_data

    task = cfg.task()
    images.prepare_sources(task.sources, cfg.data_dir, download=cfg.download)  # no-op if done
    recipe = dataclasses.replace(
        training.VISUAL,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        schedule=cfg.schedule,
    )
    data = block_train_data(
        task,
        cfg.num_examples,
        test_examples=cfg.test_examples,
        batch_size=cfg.batch_size,
        seed=cfg.seed,
        holdout=holdout,
        data_dir=cfg.data_dir,
        train_eval_examples=cfg.train_eval_examples,
    )
    # Neither the folder nor the device count is part of the run's identity: a finished run
    # can be moved or reused, a killed one resumed on other devices.
    config = configs.identity(cfg, "out")
    config["holdout"] = holdout
    setting = "holdout" if holdout else "IID"
    return training.train(
        lambda: models.get(
            cfg.model, input_shape=task.image_shape, num_classes=task.num_classes, width=cfg.width
        ),
        data,
        recipe,
        out,
        config=config,
        seed=cfg.seed,
        verbose=verbose,
        title=f"{cfg.model} (width {cfg.width}), 2x2 {cfg.values} blocks, {setting}",
        save_model=True,
        distribution=distribution,
        callbacks=configs.callbacks(cfg, out),
    )


def summary(record, setting):
    final = record["final"]
    return (
        f"{record['config']['model']} width={record['config']['width']} {setting} "
        f"[{record['backend']}]: train accuracy {final['train_eval_accuracy']:.4f}, test "
        f"accuracy {final['test_accuracy']:.4f}, {record['wall_time_s'] / 60:.1f} min"
        f"{' (FAILED run)' if record['failed'] else ''}"
    )


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    out = configs.format_out(cfg)
    configs.start(cfg)
    from pvr_keras.training import distribute

    # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
    placement = distribute.setup(cfg.devices)
    from pvr_keras.data import images

    # Data first: a machine that cannot get it fails here, before anything is written.
    images.prepare_sources(cfg.task().sources, cfg.data_dir, download=cfg.download)
    configs.write(cfg, out)  # refuses a folder of another run, untouched
    record = train_run(cfg, out, distribution=placement)
    print(f"\n{summary(record, 'IID')}\nrecord: {out}/record.json")
    return record


if __name__ == "__main__":
    configs.run(main)
