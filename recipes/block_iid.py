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

Presets (``pvr_keras.kinds.block.kind.PRESETS``, shared with ``block_holdout.py``). ``paper``:
ResNet18 at torchvision width 64, the paper's recipe (Adam 1e-4, batch 50, 10 epochs,
constant rate), 60,000 training and 10,000 test examples. ``quick`` (2-core CPU):
ResNet18 at width 8 (178k parameters), 25,000 training examples, 5 epochs of Adam 2e-3 with a
cosine decay, batch 50; accuracies on 2,000 test and 2,000 training examples. ``medium``
(Figure 7 in docs/results): width 16, 60,000 / 10,000 examples, 5 epochs of Adam 2e-3 with a
cosine decay. Measured for ``quick`` on real MNIST, TensorFlow, a 2-core CPU shared with other
jobs (load average 8-9): test accuracy 94.7%, training accuracy 98.0%, 4.5 min of training (about
5 min with start-up); the same config inside ``block_holdout.py``: 95.1% test. With
20,000 examples, 6 epochs at a constant 1e-3 it reached only 90.4%.
"""

import dataclasses

from pvr_keras import cli
from pvr_keras.kinds.block.kind import PRESETS


@dataclasses.dataclass(frozen=True)
class Own:
    out: str = cli.out_field("runs/block_iid/{model}_w{width}_{values}_n{num_examples}_s{seed}")


COMMAND = cli.Command(
    kind="block",
    presets=PRESETS,
    own=Own,
    description=__doc__,
    exclude=("holdout",),
    title=lambda run: f"{run.model} (width {run.width}), 2x2 {run.values} blocks, IID",
)
main = COMMAND.main

if __name__ == "__main__":
    cli.main(main)
