"""Throughput of paper-sized training epochs on this machine's accelerator (one backend).

    KERAS_BACKEND=jax python tools/probes/gpu_check.py
    KERAS_BACKEND=jax python tools/probes/gpu_check.py --models mlp --inputs device tfdata
    python tools/probes/gpu_check.py --token-examples 20000 --block-examples 500  # CPU smoke

Trains mlp and mixer (paper widths, batch 1024, the paper's SGD recipe) for two epochs of
``--token-examples`` token examples, and resnet18 (width 64, Adam, batch 50) for two epochs of
``--block-examples`` 80x80 block images, and prints examples/s of the second epoch (the first
includes compilation), once per input: ``device`` (JAX only: batches made on the accelerator
by the kinds' ``jax_data`` modules, the default first on JAX) and ``tfdata`` (the
library's tf.data pipelines on the host; TensorFlow is kept off the GPU, which JAX holds).
Without TensorFlow (or, for blocks, the prepared MNIST) the tf.data rows fall back to NumPy
arrays made with the same task rules (the rate then measures the model, not the pipeline),
and say so.

Each token row also gives the achieved training TFLOP/s and its fraction of the accelerator's
dense bf16 peak (a table of known GPUs, or ``--peak-tflops``): training FLOPs per example are
taken as 3x the forward matmul FLOPs (2 per multiply-add of every Dense layer; embeddings,
norms and activations left out), so the fraction is a lower bound on the matmul utilisation.
The models train in float32 unless ``--policy mixed_bfloat16``.

Sized from FLOP counts (3x the forward matmul FLOPs): a training example costs 8.7 MFLOP in
the paper's MLP and 0.83 GFLOP in its MLP-Mixer, so the default two epochs of 10^6 examples
are 17 TFLOP and 1.7 PFLOP per input: about 4 s for the Mixer at 40% of an H200's dense bf16
peak (989 TFLOP/s), 40 s at 4%; ResNet18 on 2 x 60,000 80x80 images is ~0.3 PFLOP. With
compilation, ``gpu_check.sh`` (both backends, then the JAX smoke presets) fits in 8 minutes
on an H200 (its time limits: ``LIMIT`` 120 s per backend, ``SMOKE_LIMIT`` 200 s).
"""

import argparse
import dataclasses
import importlib.util
import math
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from pvr_keras import files, models, training  # noqa: E402
from pvr_keras.tasks import TokenTask  # noqa: E402

HAVE_TF = importlib.util.find_spec("tensorflow") is not None
# Dense bf16 tensor-core peaks (no sparsity), TFLOP/s, by a substring of the device kind.
BF16_PEAK_TFLOPS = {
    "H200": 989.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10": 125.0,
}


class _EpochTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        # JAX dispatches asynchronously and the loop never reads the device between steps: wait
        # for the epoch's last update (one compiled call writes every weight) before the clock.
        keras.ops.convert_to_numpy(self.model.trainable_variables[-1].value)
        self.seconds.append(time.perf_counter() - self.t0)


def _numpy_tokens(task, n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, task.num_values, size=(n, task.seq_len)).astype("int32")
    x[:, 0] = rng.integers(0, task.pointer_values, size=n)
    return x, task.label(x).astype("int32")


def _tf_host_only():
    """Keeps TensorFlow (tf.data, TFDS) off the GPUs: under JAX the accelerator is JAX's."""
    import tensorflow as tf

    try:
        tf.config.set_visible_devices([], "GPU")
    except RuntimeError:
        pass  # TensorFlow already started its devices in this process


def forward_flops(model):
    """Matmul FLOPs of one example's forward pass: 2 x in x out x positions, per Dense."""
    total = 0
    for layer in model.layers:
        if isinstance(layer, keras.layers.Dense):
            shape = layer.input.shape  # (batch, ..., in)
            total += 2 * math.prod(shape[1:-1]) * shape[-1] * layer.units
    return total


def bf16_peak(kind, override):
    if override:
        return override * 1e12
    for name, peak in BF16_PEAK_TFLOPS.items():
        if name in kind:
            return peak * 1e12
    return None


def _fit_rate(model, recipe, n, inputs):
    from pvr_keras.training.loop import resolve_steps_per_execution

    # As the library's runs train: several steps per compiled call (the default).
    per_call = resolve_steps_per_execution(None, recipe.steps_per_epoch(n))
    model = training.compile_model(model, recipe, n, steps_per_execution=per_call)
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


def token_rate(name, n, source):
    task = TokenTask(window=1)
    recipe = dataclasses.replace(training.TOKEN, epochs=2, warmup_epochs=1)
    if source == "device":
        from pvr_keras.kinds.token import jax_data

        inputs = jax_data.token_stream(task, n, epochs=None)
        what = "device input (kinds.token.jax_data)"
    elif HAVE_TF:
        from pvr_keras import data

        inputs, what = data.token_dataset(task, n, epochs=None), "tf.data token_dataset"
    else:
        inputs, what = _numpy_tokens(task, n), "NumPy arrays (no TensorFlow here)"
    model = models.get(name)
    return _fit_rate(model, recipe, n, inputs), what, 3 * forward_flops(model)


def block_rate(n, source):
    recipe = training.VISUAL
    what = "random 80x80 images (no prepared MNIST / TensorFlow here)"
    inputs = None
    if source == "device" or HAVE_TF:
        try:
            from pvr_keras.tasks import BlockTask

            if source == "device":
                from pvr_keras.kinds.block import jax_data

                inputs = jax_data.block_stream(
                    BlockTask(), n, split="train", seed=0, batch_size=50, epochs=None
                )
                what = "device input (kinds.block.jax_data) on MNIST"
            else:
                from pvr_keras import data

                inputs = data.block_dataset(
                    BlockTask(), n, split="train", seed=0, batch_size=50, epochs=None
                )
                what = "tf.data block_dataset on MNIST"
        except Exception as error:  # noqa: BLE001 - report and fall back to synthetic input
            print(f"  (block data unavailable: {type(error).__name__}: {error})")
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = (rng.random((n, 80, 80, 1), dtype=np.float32), rng.integers(0, 10, n))
    model = models.get("resnet18", input_shape=(80, 80, 1))
    return _fit_rate(model, recipe, n, inputs), what


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token-examples", type=int, default=1_000_000)
    parser.add_argument("--block-examples", type=int, default=60_000)
    parser.add_argument("--models", nargs="+", default=["mlp", "mixer", "resnet18"])
    parser.add_argument(
        "--inputs",
        nargs="+",
        choices=("device", "tfdata"),
        default=None,
        help="inputs to time (default: device and tfdata on JAX, tfdata on TensorFlow)",
    )
    parser.add_argument("--policy", default="float32", help="Keras dtype policy")
    parser.add_argument("--peak-tflops", type=float, default=None, help="dense bf16 peak")
    args = parser.parse_args()
    backend = keras.backend.backend()
    inputs = args.inputs or (["device", "tfdata"] if backend == "jax" else ["tfdata"])
    if "device" in inputs and backend != "jax":
        parser.error(f"--inputs device needs the JAX backend; received backend {backend}")
    keras.config.set_dtype_policy(args.policy)
    if backend == "jax":
        import jax

        if HAVE_TF and "tfdata" in inputs:
            _tf_host_only()
        devices = [str(d) for d in jax.devices()]
        kind = jax.devices()[0].device_kind
    else:
        import tensorflow as tf

        devices = [d.name for d in tf.config.list_logical_devices()]
        gpus = tf.config.list_physical_devices("GPU")
        kind = (
            tf.config.experimental.get_device_details(gpus[0]).get("device_name", "")
            if gpus
            else "CPU"
        )
    peak = bf16_peak(kind, args.peak_tflops)
    print(
        f"backend {backend}, keras {keras.__version__}, policy {args.policy}, devices {devices}, "
        f"bf16 peak {'unknown' if peak is None else f'{peak / 1e12:.0f} TFLOP/s'} ({kind})",
        flush=True,
    )
    for name in args.models:
        for source in inputs:
            try:
                row(name, source, args, backend, peak)
            except Exception as error:  # noqa: BLE001 - one failed row (say, out of memory)
                message = f"FAILED: {type(error).__name__}: {str(error).splitlines()[0][:200]}"
                print(f"  {backend:10s} {name:9s} {source:7s} {message}", flush=True)
                summary(backend, name, source, message)


def row(name, source, args, backend, peak):
    """Times one model on one input and prints (and adds to the summary) its line."""
    if name == "resnet18":
        (rate, seconds), what = block_rate(args.block_examples, source)
        size, usage = f"{args.block_examples} block images, batch 50", ""
    else:
        (rate, seconds), what, flops = token_rate(name, args.token_examples, source)
        size = f"{args.token_examples} token examples, batch 1024"
        achieved = rate * flops
        usage = f", {achieved / 1e12:.1f} TFLOP/s"
        if peak:
            usage += f" = {100 * achieved / peak:.1f}% of bf16 peak"
    print(
        f"  {backend:10s} {name:9s} {source:7s} {rate:12,.0f} examples/s{usage}  (epoch "
        f"times {', '.join(f'{s:.1f}' for s in seconds)} s; {size}; {what})",
        flush=True,
    )
    summary(backend, name, source, f"{rate:,.0f} examples/s{usage}")


def summary(*fields):
    """Appends a tab-separated row to ``$GPU_CHECK_SUMMARY`` (gpu_check.sh prints them all as
    one table at the end); nothing without it."""
    path = os.environ.get("GPU_CHECK_SUMMARY")
    if path:
        fd = files.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "a") as f:
            f.write("\t".join(str(x) for x in fields) + "\n")


if __name__ == "__main__":
    main()
