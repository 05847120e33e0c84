"""tools/probes/bench_engines.py: one interleaved run over the engines, a row per model and engine,
the same model (parameter count) on each, the fastest marked, a recipe run's step beside the
bare step, and a worker that dies named in its row."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_bench_engines_times_each_engine_on_the_same_model():
    # One engine per backend, each the step the library's own runs of an MLP take on a CPU
    # (on TensorFlow with jit_compile=True: tensorflow-xla; plain tensorflow differs only by
    # that flag).
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "probes" / "bench_engines.py"), "--models", "mlp",
         "--engines", "tensorflow-xla", "jax", "--steps", "1", "--rounds", "1",
         "--recipe-steps", "1", "--population", "2"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| mlp |")]
    assert [row[4] for row in rows] == ["tensorflow-xla", "jax", "jax population 2"], done.stdout
    assert {row[1] for row in rows} == {"1,445,194"}  # the paper's MLP on every engine
    assert sum("**fastest**" in row[5] for row in rows) == 1
    population = rows.pop()  # a population's time per run's step; no recipe columns
    assert float(population[5].split()[0]) > 0 and population[8] == ""
    for row in rows:
        assert float(row[3]) > 8  # XLA's FLOP count of a step: ~8.9 GFLOP at batch 1024
        assert float(row[5].split()[0]) > 0 and float(row[7]) > 0
        # The recipe's step (its input, steps per call) and its ratio to the bare step.
        recipe_ms, ratio = row[8].split(), float(row[9].rstrip(" |"))
        assert float(recipe_ms[0]) > 0 and recipe_ms[1].strip("(,") in ("tfdata", "device")
        assert ratio == pytest.approx(float(recipe_ms[0]) / float(row[5].split()[0]), rel=0.05)
    assert "mlp: " in done.stdout and "is fastest" in done.stdout


def test_bench_engines_refuses_bad_flags():
    for flags in (["--steps", "0"], ["--width", "2"], ["--engines", "tpu"]):
        done = subprocess.run(
            [sys.executable, str(REPO / "tools" / "probes" / "bench_engines.py"), *flags],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2 and "error" in done.stderr, flags


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_engines", REPO / "tools" / "probes" / "bench_engines.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Alive:
    """An engine that answers at once (nothing trains)."""

    name = "jax"

    def ask(self, **command):
        if command.get("flops"):
            return {"flops": 2e9}
        if command.get("recipe"):
            return {"seconds": 0.33, "input": "device", "steps_per_execution": 4}
        return {"seconds": 0.9, "params": 123}


def test_a_worker_that_dies_is_named_in_its_row_and_the_other_rows_print(capsys):
    bench = _bench()
    args = bench.parse_args(["--models", "mlp", "--steps", "3", "--rounds", "2"])
    dead = bench.Engine("torch", [sys.executable, "-c", "import sys; sys.exit(4)"])
    dead.process.wait()  # gone before the first question: writing to it is a broken pipe
    try:
        row = bench.bench_model("mlp", [Alive(), dead], args, rates=[])
    finally:
        dead.close()
    assert row["errors"] == {"torch": "the torch worker exited (code 4)"}
    bench.print_table([row], 1e10, (0.0, 0.0), "Test CPU")
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| mlp")]
    torch_row = next(line for line in lines if "| torch |" in line)
    assert "failed: the torch worker exited (code 4)" in torch_row
    jax_row = next(line for line in lines if "| jax |" in line).split(" | ")
    assert jax_row[5].startswith("300 ") and "**fastest**" in jax_row[5]
    assert jax_row[8] == "330 (device, 4 steps/call)" and jax_row[9] == "1.10 |"
