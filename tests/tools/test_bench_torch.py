"""tools/probes/bench_torch.py: the same architecture in PyTorch (where it is installed) and a clear
note where it is not."""

import importlib.util
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_bench_torch_compares_or_says_pytorch_is_missing():
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "probes" / "bench_torch.py"), "--models", "mlp",
         "mixer", "--divisor", "32", "--batch-size", "64", "--steps", "1", "--repeats", "1"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    if importlib.util.find_spec("torch") is None:
        assert "PyTorch is not installed" in done.stdout
        return
    lines = [line for line in done.stdout.splitlines() if "PyTorch / ours" in line]
    assert len(lines) == 2
    for line in lines:  # the same architecture: the same parameter count in both
        keras_params, torch_params = line.split(";")[1].split(" Keras and ")
        assert keras_params.strip() == torch_params.split(" PyTorch")[0].strip(), line
