"""Token-stream throughput and memory, against baselines measured in the same run.

    python tools/bench_data.py            # full: includes one 5x10^7-example epoch (~15 s)
    python tools/bench_data.py --quick    # no full epoch

Prints examples/s (labels included, batch 1024) of ``data.token_dataset`` next to
(a) a per-example Python generator computing each label in Python, as a typical hand-written
dataset class does, and (b) a vectorised NumPy reference; the ratios; and the peak RSS of a
process streaming one full epoch of 5x10^7 examples. Targets (2-core CPU): >= 1x NumPy,
>= 20x the generator, peak RSS < 1.5 GB.
"""

import argparse
import os
import random
import resource
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from pvr_keras import data  # noqa: E402
from pvr_keras.tasks import TokenTask  # noqa: E402

BATCH = 1024


def python_generator(task, seed=0):
    """Per-example Python, as a hand-written dataset class would do it."""
    rng = random.Random(seed)
    n = task.num_positions
    while True:
        x = [rng.randrange(task.pointer_values)] + [
            rng.randrange(task.num_values) for _ in range(n)
        ]
        window = [x[1 + (x[0] + j) % n] for j in range(task.window)]
        yield x, sum(window) % task.num_values


def python_batches(task):
    examples = python_generator(task)
    while True:
        rows = [next(examples) for _ in range(BATCH)]
        yield np.array([r[0] for r in rows], np.int32), np.array([r[1] for r in rows], np.int32)


def numpy_batches(task):
    rng = np.random.default_rng(0)
    while True:
        x = rng.integers(0, task.num_values, size=(BATCH, task.seq_len), dtype=np.int32)
        x[:, 0] = rng.integers(0, task.pointer_values, size=BATCH)
        yield x, task.label(x).astype(np.int32)


def tf_batches(task):
    yield from data.token_dataset(task, 50_000_000, batch_size=BATCH)


def in_graph_rate(task, seconds):
    """Production rate with the batches consumed inside TF (as Keras fit on TensorFlow does),
    so no Python runs per batch."""
    import tensorflow as tf

    ds = data.token_dataset(task, 50_000_000, batch_size=BATCH)
    count = tf.function(
        lambda d: d.reduce(tf.constant(0, tf.int64), lambda n, b: n + tf.shape(b[1], tf.int64)[0])
    )
    steps = 200
    count(ds.take(20))  # warm up
    while True:
        t0 = time.perf_counter()
        n = int(count(ds.take(steps)))
        elapsed = time.perf_counter() - t0
        if elapsed > seconds or steps > 10**6:
            return n / elapsed
        steps *= 4


def trivial_batches(task):
    """A tf.data pipeline that only repeats one ready batch: the floor of per-batch Python
    iteration overhead, whatever the pipeline computes."""
    import tensorflow as tf

    x, y = next(numpy_batches(task))
    yield from tf.data.Dataset.from_tensors((x, y)).repeat().prefetch(8)


def rate(batches, seconds):
    it = iter(batches)
    for _ in range(20):  # warm up (graph tracing, prefetch)
        next(it)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        x, _ = next(it)
        n += len(x)
    return n / (time.perf_counter() - t0)


def full_epoch_child(num_examples):
    t0 = time.perf_counter()
    n = 0
    for x, _ in data.token_dataset(TokenTask(window=2), num_examples, batch_size=BATCH):
        n += int(x.shape[0])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} {time.perf_counter() - t0:.1f} {peak:.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 5x10^7 full epoch")
    parser.add_argument("--seconds", type=float, default=4.0, help="timing per contender")
    parser.add_argument("--window", type=int, default=2)
    parser.add_argument("--_epoch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._epoch:
        return full_epoch_child(args._epoch)
    task = TokenTask(window=args.window)
    print(f"token stream, window {args.window} mod_sum, batch {BATCH}, {os.cpu_count()} CPUs")
    rates = {
        "token_dataset (tf.data)": rate(tf_batches(task), args.seconds),
        "token_dataset, consumed in-graph": in_graph_rate(task, args.seconds),
        "ready batch repeated (iteration floor)": rate(trivial_batches(task), args.seconds),
        "NumPy reference (vectorised)": rate(numpy_batches(task), args.seconds),
        "Python generator (per example)": rate(python_batches(task), args.seconds),
    }
    ours = rates["token_dataset (tf.data)"]
    graph = rates["token_dataset, consumed in-graph"]
    print(f"  {'':40s} {'M examples/s':>12s} {'python-loop ratio':>18s} {'in-graph ratio':>15s}")
    for name, value in rates.items():
        print(f"  {name:40s} {value / 1e6:12.3f} {ours / value:17.2f}x {graph / value:14.2f}x")
    print("  (ratio = token_dataset / row; targets: >= 1x NumPy, >= 20x the Python generator)")
    if not args.quick:
        n = 50_000_000
        out = subprocess.run(
            [sys.executable, __file__, "--_epoch", str(n)], capture_output=True, text=True
        )
        count, seconds, peak = out.stdout.split()[-3:]
        print(
            f"  full epoch of {int(count):,} examples in {seconds} s; "
            f"peak RSS {float(peak):.0f} MB (target < 1500 MB)"
        )


if __name__ == "__main__":
    main()
