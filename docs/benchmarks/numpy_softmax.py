"""A model trained outside Keras, scored through the benchmark's predictions path.

    python docs/benchmarks/numpy_softmax.py OUT          # every token entry of the quick suite
    python tools/benchmark.py --predictions OUT/token_w1.npy --config token/w1 --size small

Softmax regression in plain NumPy on the pointer-value features of a token sequence: one-hot
of (pointer, position, value at that position), 1,000 features, plus the 100 one-hot tokens.
The value at the pointer is linear in them, so window 1 is learnable; a sum of two values
mod 10 is not. It trains on a config's small training split (``benchmarks.source``), predicts
its small test split, saves the class ids as ``OUT/<config>.npy`` with
``benchmarks.save_predictions`` (beside it ``OUT/<config>.npy.json`` says which config,
version, split and size they are for: tools/benchmark.py checks it) and the scores as
``OUT/numpy_softmax.json`` (the benchmark table's layout, for the leaderboard).
"""

import json
import pathlib
import sys
import time

import numpy as np

from pvr_keras import benchmarks

ENTRIES = {"w1": "token/w1", "w2": "token/w2", "w3": "token/w3", "w4": "token/w4",
           "w2-median": "token/w2-median", "w2-holdout1": "token/w2-holdout1",
           "w2-nopointer": "token/w2-nopointer"}  # fmt: skip


def features(tokens):
    """(N, 11) tokens -> (N, 1100) float32: pointer x position x value, and the tokens."""
    n = len(tokens)
    values = tokens[:, 1:]
    out = np.zeros((n, 10, 10, 10), np.float32)  # pointer, position, value
    rows = np.repeat(np.arange(n), 10)
    positions = np.tile(np.arange(10), n)
    out[rows, np.repeat(tokens[:, 0], 10), positions, values.ravel()] = 1.0
    onehot = np.eye(10, dtype=np.float32)[tokens].reshape(n, -1)
    return np.concatenate([out.reshape(n, -1), onehot], axis=1)


def train(x, y, steps=300, learning_rate=2.0, seed=0):
    """Full-batch gradient descent on the softmax cross-entropy."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.01, (x.shape[1], 10)).astype(np.float32)
    b = np.zeros(10, np.float32)
    target = np.eye(10, dtype=np.float32)[y]
    for _ in range(steps):
        logits = x @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = (p - target) / len(x)
        w -= learning_rate * (x.T @ grad)
        b -= learning_rate * grad.sum(axis=0)
    return w, b


def main(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = {}
    for entry, name in ENTRIES.items():
        start = time.perf_counter()
        train_rows = benchmarks.source(name, "train", size="small")[:]
        w, b = train(features(train_rows["tokens"]), train_rows["label"])
        test = benchmarks.source(name, "test", size="small")[:]
        predictions = (features(test["tokens"]) @ w + b).argmax(axis=1)
        benchmarks.save_predictions(out / f"{name.replace('/', '_')}.npy", predictions, name,
                                    "test", size="small")  # fmt: skip
        report = benchmarks.score(name, predictions, size="small")
        fit = (features(train_rows["tokens"]) @ w + b).argmax(axis=1) == train_rows["label"]
        entries[entry] = {
            "test_accuracy": report["held_out"] if report.get("held_out") is not None
            else report["accuracy"],
            "train_accuracy": float(fit.mean()),
            "iid_test_accuracy": None, "failed": False,
            "minutes": round((time.perf_counter() - start) / 60, 2),
            "config": name, "sha256": report["sha256"],
        }  # fmt: skip
        print(f"{name}: test accuracy {entries[entry]['test_accuracy']:.3f}")
    table = {"suite": "quick", "kind": "token", "model": "docs/benchmarks/numpy_softmax.py",
             "label": "numpy softmax (outside Keras)", "entries": entries}  # fmt: skip
    (out / "numpy_softmax.json").write_text(json.dumps(table, indent=1) + "\n")
    return table


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/numpy_softmax")
