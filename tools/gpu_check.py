"""Throughput of paper-sized training epochs on this machine's accelerator (one backend).

    KERAS_BACKEND=jax python tools/gpu_check.py
    python tools/gpu_check.py --token-examples 20000 --block-examples 500   # smoke test on CPU

Trains mlp and mixer (paper widths, batch 1024, the paper's SGD recipe) for two epochs of
``--token-examples`` token examples, and resnet18 (width 64, Adam, batch 50) for two epochs of
``--block-examples`` 80x80 block images, and prints examples/s of the second epoch (the first
includes compilation). Uses the library's tf.data pipelines when TensorFlow (and, for blocks,
the prepared MNIST) is available, else NumPy arrays made with the same task rules (the rate
then measures the model, not the pipeline), and says which.
"""

import argparse
import dataclasses
import importlib.util
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from pvr_keras import models, training  # noqa: E402
from pvr_keras.tasks import TokenTask  # noqa: E402

HAVE_TF = importlib.util.find_spec("tensorflow") is not None


class _EpochTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.t0)


def _numpy_tokens(task, n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, task.num_values, size=(n, task.seq_len)).astype("int32")
    x[:, 0] = rng.integers(0, task.pointer_values, size=n)
    return x, task.label(x).astype("int32")


def _fit_rate(model, recipe, n, inputs):
    model = training.compile_model(model, recipe, n)
    timer = _EpochTimer()
    if isinstance(inputs, tuple):
        model.fit(*inputs, batch_size=recipe.batch_size, epochs=2, verbose=0, callbacks=[timer])
    else:
        model.fit(
            inputs,
            epochs=2,
            steps_per_epoch=recipe.steps_per_epoch(n),
            verbose=0,
            shuffle=False,
            callbacks=[timer],
        )
    return n / timer.seconds[-1], timer.seconds


def token_rate(name, n):
    task = TokenTask(window=1)
    recipe = dataclasses.replace(training.TOKEN, epochs=2, warmup_epochs=1)
    if HAVE_TF:
        from pvr_keras import data

        inputs, source = data.token_dataset(task, n, epochs=None), "tf.data token_dataset"
    else:
        inputs, source = _numpy_tokens(task, n), "NumPy arrays (no TensorFlow here)"
    return _fit_rate(models.get(name), recipe, n, inputs), source


def block_rate(n):
    recipe = training.VISUAL
    source = "random 80x80 images (no prepared MNIST / TensorFlow here)"
    inputs = None
    if HAVE_TF:
        try:
            from pvr_keras import data
            from pvr_keras.tasks import BlockTask

            inputs = data.block_dataset(
                BlockTask(), n, split="train", seed=0, batch_size=50, epochs=None
            )
            source = "tf.data block_dataset on MNIST"
        except Exception as error:  # noqa: BLE001 - report and fall back to synthetic input
            print(f"  (block data unavailable: {type(error).__name__}: {error})")
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = (rng.random((n, 80, 80, 1), dtype=np.float32), rng.integers(0, 10, n))
    model = models.get("resnet18", input_shape=(80, 80, 1))
    return _fit_rate(model, recipe, n, inputs), source


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token-examples", type=int, default=1_000_000)
    parser.add_argument("--block-examples", type=int, default=60_000)
    parser.add_argument("--models", nargs="+", default=["mlp", "mixer", "resnet18"])
    args = parser.parse_args()
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        devices = [str(d) for d in jax.devices()]
    else:
        import tensorflow as tf

        devices = [d.name for d in tf.config.list_logical_devices()]
    print(f"backend {backend}, keras {keras.__version__}, devices {devices}", flush=True)
    for name in args.models:
        if name == "resnet18":
            (rate, seconds), source = block_rate(args.block_examples)
            size = f"{args.block_examples} block images, batch 50"
        else:
            (rate, seconds), source = token_rate(name, args.token_examples)
            size = f"{args.token_examples} token examples, batch 1024"
        print(
            f"  {backend:10s} {name:9s} {rate:12,.0f} examples/s  (epoch times "
            f"{', '.join(f'{s:.1f}' for s in seconds)} s; {size}; {source})",
            flush=True,
        )


if __name__ == "__main__":
    main()
