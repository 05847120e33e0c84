"""Our training step against a plain PyTorch loop on the same model and batch (optional).

    pip install -e ".[bench]"              # PyTorch, CPU build
    python tools/probes/bench_torch.py  # the 1/8-width MLP-Mixer and Transformer, batch 1024
    python tools/probes/bench_torch.py --models mlp --divisor 1

Builds each token model twice, once with ``pvr_keras.models`` (JAX backend) and once as the
same architecture written in PyTorch here (same widths, tokens, class token, pre-LN blocks,
exact GELU, SGD momentum 0.9), and times one training step at ``--batch-size`` 1024, medians
of ``--repeats`` runs of ``--steps`` steps after a warm-up, interleaved: a jitted JAX step
(``tools/probes/bench_train.py``'s hand-written step on the Keras model's stateless call), Keras
``fit`` (the library's compile), and a plain eager PyTorch step (``torch.get_num_threads()``
threads). It prints ms per step and the ratio PyTorch / ours (above 1: we are faster).
Without PyTorch installed it says so and exits 0. To compare plain PyTorch with the
library's default engine (on a CPU: TensorFlow with XLA for these models) and with every other
engine, run ``tools/probes/bench_engines.py``, which builds its PyTorch models from this file.

Measured 2026-12-02 on a 2-core CPU shared with other jobs (torch 2.13.0, 2 threads; one
run, steps 2, repeats 2): the 1/8-width MLP-Mixer (144,506 parameters in both) 1375 ms per
jitted JAX step and 1446 ms per fit step against 684 ms for PyTorch: PyTorch is 2.0x faster
(its exact GELU and its 12-wide token-mixing GEMMs; ``tools/probes/bench_train.py``'s docstring has
our step's breakdown); the 1/8-width Transformer (136,138 parameters) 425 ms and 383 ms
against 1104 ms: we are 2.6x faster.
"""

import argparse
import importlib.util
import os
import pathlib
import statistics
import sys
import time

os.environ["KERAS_BACKEND"] = "jax"  # the hand-written step is a JAX one
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = pathlib.Path(__file__).resolve().parent


def _bench_train():
    import bench_train  # beside this file (a script's folder is on its import path)

    return bench_train


WIDTHS = {  # the paper's widths; divided by --divisor
    "mixer": {"dim": 512, "token_dim": 768, "channel_dim": 2048},
    "transformer": {"dim": 512, "mlp_dim": 1024},
    "mlp": {"widths": (512, 1024, 512, 64)},
}


def widths(name, divisor):
    out = {}
    for key, value in WIDTHS[name].items():
        scaled = tuple(v // divisor for v in value) if isinstance(value, tuple) else None
        out[key] = scaled if scaled is not None else value // divisor
    if name == "mlp":
        out["embed_dim"] = max(1, 64 // divisor)
    return out


def torch_model(name, kw, seq_len=11, vocab=10, classes=10):
    """The architecture of ``pvr_keras.models.<name>`` in PyTorch."""
    import torch
    from torch import nn

    class Mixer(nn.Module):
        def __init__(self, dim, token_dim, channel_dim, depth=4):
            super().__init__()
            tokens = seq_len + 1
            self.embed = nn.Embedding(vocab, dim)
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.blocks = nn.ModuleList()
            for _ in range(depth):
                self.blocks.append(nn.ModuleList([
                    nn.LayerNorm(dim), nn.Sequential(nn.Linear(tokens, token_dim), nn.GELU(),
                                                     nn.Linear(token_dim, tokens)),
                    nn.LayerNorm(dim), nn.Sequential(nn.Linear(dim, channel_dim), nn.GELU(),
                                                     nn.Linear(channel_dim, dim)),
                ]))  # fmt: skip
            self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

        def forward(self, x):
            x = self.embed(x)
            x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1)
            for norm1, token, norm2, channel in self.blocks:
                x = x + token(norm1(x).transpose(1, 2)).transpose(1, 2)
                x = x + channel(norm2(x))
            return self.head(self.norm(x[:, 0]))

    class Transformer(nn.Module):
        def __init__(self, dim, mlp_dim, depth=4, heads=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.zeros(1, seq_len + 1, dim))
            layer = nn.TransformerEncoderLayer(dim, heads, mlp_dim, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)  # fmt: skip
            self.body = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

        def forward(self, x):
            x = self.embed(x)
            x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1) + self.pos
            return self.head(self.norm(self.body(x)[:, 0]))

    class MLP(nn.Module):
        def __init__(self, widths, embed_dim):
            super().__init__()
            self.embed = nn.Embedding(vocab, embed_dim)
            layers, width = [], seq_len * embed_dim
            for w in widths:
                layers += [nn.Linear(width, w), nn.ReLU()]
                width = w
            self.body, self.head = nn.Sequential(*layers), nn.Linear(width, classes)

        def forward(self, x):
            return self.head(self.body(self.embed(x).flatten(1)))

    return {"mixer": Mixer, "transformer": Transformer, "mlp": MLP}[name](**kw)


def _torch_stepper(net, tx, ty, bench):
    """``steps -> seconds`` of plain eager PyTorch SGD-momentum steps on one batch."""
    import torch

    optimizer = torch.optim.SGD(net.parameters(), lr=bench.LEARNING_RATE,
                                momentum=bench.MOMENTUM,
                                weight_decay=bench.WEIGHT_DECAY)  # fmt: skip
    loss_fn = torch.nn.CrossEntropyLoss()

    def steps_of(steps):
        start = time.perf_counter()
        for _ in range(steps):
            optimizer.zero_grad()
            loss = loss_fn(net(tx), ty)
            loss.backward()
            optimizer.step()
        return time.perf_counter() - start

    steps_of.params = sum(p.numel() for p in net.parameters())
    return steps_of


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["mixer", "transformer"],
                        choices=sorted(WIDTHS))  # fmt: skip
    parser.add_argument("--divisor", type=int, default=8, help="divide the paper's widths")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    for name in ("divisor", "batch_size", "steps", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if importlib.util.find_spec("torch") is None:
        print("PyTorch is not installed (pip install -e '.[bench]'): nothing to compare")
        return None
    import keras
    import torch

    from pvr_keras import models

    bench = _bench_train()
    x, y = bench.make_batch(args.batch_size)
    tx, ty = torch.from_numpy(x).long(), torch.from_numpy(y).long()
    rows = []
    for name in args.models:
        kw = widths(name, args.divisor)
        model = models.get(name, **kw)
        bench.keras_setup(model)
        jax_state = None
        torch_steps = _torch_stepper(torch_model(name, kw), tx, ty, bench)
        times = {"jax step": [], "keras fit": [], "pytorch": []}
        for repeat in range(args.repeats + 1):  # the first is the warm-up
            (wall, _), jax_state = bench.jax_hand_steps(model, x, y, args.steps, jax_state)
            fit_wall, _ = bench.keras_fit_steps(model, x, y, args.steps)
            torch_wall = torch_steps(args.steps)
            if repeat:
                times["jax step"].append(wall / args.steps)
                times["keras fit"].append(fit_wall / args.steps)
                times["pytorch"].append(torch_wall / args.steps)
        ms = {k: 1e3 * statistics.median(v) for k, v in times.items()}
        params = (model.count_params(), torch_steps.params)
        rows.append((name, params, ms))
        print(
            f"{name} (widths / {args.divisor}; {params[0]:,} Keras and {params[1]:,} PyTorch "
            f"parameters), batch {args.batch_size}, {keras.backend.backend()}, torch "
            f"{torch.__version__} on {torch.get_num_threads()} threads: jitted JAX step "
            f"{ms['jax step']:.0f} ms, Keras fit {ms['keras fit']:.0f} ms, PyTorch eager "
            f"{ms['pytorch']:.0f} ms; PyTorch / ours: {ms['pytorch'] / ms['jax step']:.2f}x "
            f"(step), {ms['pytorch'] / ms['keras fit']:.2f}x (fit)",
            flush=True,
        )
    return rows


if __name__ == "__main__":
    main()
    sys.exit(0)
