"""Benchmark: examples/s of ``block_dataset`` against per-example NumPy composition.

Both produce batches of 50 2x2 MNIST block images (80x80x1 float32 in [0, 1], each digit
jittered inside its 40x40 cell) with their labels, from the same in-memory MNIST train split.
The baseline is what a typical hand-written dataset class does: for every example draw four
image indices and offsets, paste the digits into a zero canvas, compute the label, then stack
the batch. Both run in the same process, one after the other.

    python tools/bench_block.py                       # uses ../shared/data/tfds
    python tools/bench_block.py --data-dir DIR --examples 100000 --repeats 3
"""

import argparse
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from pvr_keras import data  # noqa: E402
from pvr_keras.tasks import BlockTask  # noqa: E402

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "tfds"


class NumpyBlockDataset:
    """Per-example composition, as a hand-written (PyTorch-style) dataset class does it."""

    def __init__(self, task, images, labels, seed):
        self.task, self.images, self.labels = task, images, labels
        self.rng = np.random.default_rng(seed)
        self.digit_to_cell = task.digit_to_value_cell + 1

    def example(self):
        task, cell, size = self.task, self.task.cell, self.images.shape[1]
        index = self.rng.integers(0, len(self.images), task.num_cells)
        offsets = self.rng.integers(0, cell - size + 1, (task.num_cells, 2))
        canvas = np.zeros(task.image_shape, np.float32)
        for k in range(task.num_cells):
            top = (k // task.grid) * cell + offsets[k, 0]
            left = (k % task.grid) * cell + offsets[k, 1]
            canvas[top : top + size, left : left + size] = self.images[index[k]] / 255.0
        cells = self.labels[index]
        return canvas, cells[self.digit_to_cell[cells[0]]]

    def batches(self, num_examples, batch_size):
        for start in range(0, num_examples, batch_size):
            pairs = [self.example() for _ in range(min(batch_size, num_examples - start))]
            yield np.stack([p[0] for p in pairs]), np.array([p[1] for p in pairs], np.int32)


def _measure(batches, warmup=5):
    """(examples/s wall clock, CPU microseconds per example) over (x, y) batches.

    CPU time (all threads of this process) is reported beside wall time because on a shared
    machine the wall clock mostly measures the neighbours.
    """
    count, start, cpu = 0, None, None
    for i, (x, y) in enumerate(batches):
        np.asarray(x), np.asarray(y)  # materialise on the host, as a training loop would
        if i == warmup - 1:
            start, cpu = time.perf_counter(), time.process_time()
        elif i >= warmup:
            count += len(y)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return count / wall, cpu / count * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get("TFDS_DATA_DIR", DEFAULT_DATA))
    parser.add_argument("--examples", type=int, default=50_000)
    parser.add_argument("--baseline-examples", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    task = BlockTask()
    images, labels = data.load_images("mnist", "train", data_dir=args.data_dir)
    print(
        f"2x2 MNIST blocks, batch {args.batch_size}, {os.cpu_count()} CPUs, best of {args.repeats}"
    )

    results = {"tf": [], "np": []}
    for _ in range(args.repeats):  # interleaved, so both see the same machine load
        ds = data.block_dataset(
            task, args.examples, split="train", seed=0, batch_size=args.batch_size,
            data_dir=args.data_dir,
        )  # fmt: skip
        results["tf"].append(_measure(ds.as_numpy_iterator()))
        baseline = NumpyBlockDataset(task, images, labels, seed=0)
        results["np"].append(_measure(baseline.batches(args.baseline_examples, args.batch_size)))
    (tf_rate, _), (np_rate, _) = (max(results[k]) for k in ("tf", "np"))
    tf_cpu, np_cpu = (min(r[1] for r in results[k]) for k in ("tf", "np"))
    print(
        f"block_dataset (tf.data, batched ops): {tf_rate:9,.0f} examples/s {tf_cpu:6.1f} us CPU/ex"
    )
    print(
        f"per-example NumPy composition:        {np_rate:9,.0f} examples/s {np_cpu:6.1f} us CPU/ex"
    )
    print(
        f"ratio: {tf_rate / np_rate:.1f}x examples/s, {np_cpu / tf_cpu:.1f}x less CPU per example"
    )
    print(f"load average (1 min) during the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
