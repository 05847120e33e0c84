"""tools/bench_engines.py: one interleaved run over the engines, a row per model and engine,
the same model (parameter count) on each, and the fastest marked."""

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_bench_engines_times_each_engine_on_the_same_model():
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "bench_engines.py"), "--models", "mlp",
         "--engines", "tensorflow", "tensorflow-xla", "jax", "--steps", "1", "--rounds", "1"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| mlp |")]
    assert [row[4] for row in rows] == ["tensorflow", "tensorflow-xla", "jax"], done.stdout
    assert {row[1] for row in rows} == {"1,445,194"}  # the paper's MLP on every engine
    assert sum("**fastest**" in row[5] for row in rows) == 1
    for row in rows:
        assert float(row[3]) > 8  # XLA's FLOP count of a step: ~8.9 GFLOP at batch 1024
        assert float(row[5].split()[0]) > 0 and float(row[7].rstrip(" |")) > 0
    assert "mlp: " in done.stdout and "is fastest" in done.stdout


def test_bench_engines_refuses_bad_flags():
    for flags in (["--steps", "0"], ["--width", "2"], ["--engines", "tpu"]):
        done = subprocess.run(
            [sys.executable, str(REPO / "tools" / "bench_engines.py"), *flags],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2 and "error" in done.stderr, flags
