"""A standalone reproduction: the same XLA program, compiled by JAX and by TensorFlow, on a CPU.

    python tools/probes/repro_xla_cpu.py                  # ~1 min on a 2-core CPU
    python tools/probes/repro_xla_cpu.py --batch 1024 --width 64 --repeats 7

No pvr_keras, no Keras: one MLP-Mixer block's token mixing (the 1/8-width Mixer's shapes:
12 tokens, ``--width`` channels, a 96-wide hidden layer with the exact erf GELU) and its
gradient with respect to both weight matrices, written once in NumPy-like code and run as
``jax.jit`` and as ``tf.function(jit_compile=True)`` (both XLA) and as a plain
``tf.function`` (TensorFlow's graph mode). Each is timed in its own subprocess, interleaved,
median of ``--repeats`` runs of ``--steps`` calls. Results agree to float32 rounding (checked).

Measured 2026-12-04 on a 2-core CPU shared with two training runs (load ~5): see
docs/performance.md, "Choosing the backend". A JAX time several times TensorFlow-XLA's for the
same program is XLA-on-JAX's CPU runtime, not Keras and not the model.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TOKENS, HIDDEN = 12, 96


def _inputs(batch, width):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, TOKENS, width), dtype=np.float32)
    w1 = rng.standard_normal((TOKENS, HIDDEN), dtype=np.float32) * 0.1
    w2 = rng.standard_normal((HIDDEN, TOKENS), dtype=np.float32) * 0.1
    return x, w1, w2


def _run_jax(args):
    import jax
    import jax.numpy as jnp

    ACTIVATIONS_JAX = {"erf": lambda y: jax.nn.gelu(y, approximate=False),
                       "tanh": lambda y: jax.nn.gelu(y, approximate=True),
                       "relu": jax.nn.relu}  # fmt: skip

    def loss(w1, w2, x):
        y = jnp.swapaxes(x, 1, 2) @ w1  # (batch, width, hidden): mixing across tokens
        y = ACTIVATIONS_JAX[args.activation](y) @ w2
        return jnp.mean(jnp.square(jnp.swapaxes(y, 1, 2) + x))

    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    x, w1, w2 = (jnp.asarray(a) for a in _inputs(args.batch, args.width))

    def call():
        value, grads = step(w1, w2, x)
        jax.block_until_ready(grads)
        return float(value)

    return call


def _run_tf(args, jit):
    import tensorflow as tf

    x, w1, w2 = (tf.constant(a) for a in _inputs(args.batch, args.width))
    activations = {"erf": lambda y: tf.nn.gelu(y, approximate=False),
                   "tanh": lambda y: tf.nn.gelu(y, approximate=True),
                   "relu": tf.nn.relu}  # fmt: skip

    @tf.function(jit_compile=jit)
    def step(w1, w2, x):
        with tf.GradientTape() as tape:
            tape.watch([w1, w2])
            y = tf.linalg.matmul(tf.transpose(x, (0, 2, 1)), w1)
            y = tf.linalg.matmul(activations[args.activation](y), w2)
            value = tf.reduce_mean(tf.square(tf.transpose(y, (0, 2, 1)) + x))
        return value, tape.gradient(value, [w1, w2])

    def call():
        value, grads = step(w1, w2, x)
        _ = [g.numpy() for g in grads]
        return float(value)

    return call


def worker(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    call = {"jax": lambda: _run_jax(args), "tf-xla": lambda: _run_tf(args, True),
            "tf-graph": lambda: _run_tf(args, False)}[args.worker]()  # fmt: skip
    value = call()  # compiles
    for line in sys.stdin:
        start = time.perf_counter()
        for _ in range(int(line)):
            call()
        print(json.dumps({"seconds": time.perf_counter() - start, "value": value}), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--activation", choices=("erf", "tanh", "relu"), default="erf",
                        help="the hidden activation (erf: the Mixer's exact GELU)")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--worker", choices=("jax", "tf-xla", "tf-graph"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    for name in ("batch", "width", "steps", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    engines = ("jax", "tf-xla", "tf-graph")
    flags = [f"--batch={args.batch}", f"--width={args.width}", f"--activation={args.activation}"]
    procs = {
        e: subprocess.Popen(
            [sys.executable, __file__, "--worker", e, *flags],
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for e in engines
    }
    times, values = {e: [] for e in engines}, {}
    for _ in range(args.repeats):
        for engine, proc in procs.items():
            proc.stdin.write(f"{args.steps}\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            times[engine].append(answer["seconds"] / args.steps)
            values[engine] = answer["value"]
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    flop = 2 * 2 * 3 * args.batch * args.width * TOKENS * HIDDEN  # two matmuls, fwd + bwd
    print(f"token mixing fwd+bwd ({args.activation}), batch {args.batch}, width {args.width} "
          f"({flop / 1e9:.2f} "
          f"GFLOP of matmul), load {os.getloadavg()[0]:.1f}:")  # fmt: skip
    base = statistics.median(times["tf-xla"])
    for engine in engines:
        ms = 1e3 * statistics.median(times[engine])
        print(f"  {engine:9s} {ms:8.1f} ms  ({ms / 1e3 / base:.2f}x tf-xla)  "
              f"loss {values[engine]:.6f}")  # fmt: skip
    spread = max(values.values()) - min(values.values())
    print(f"losses agree to {spread:.1e}")
    return times


if __name__ == "__main__":
    main()
