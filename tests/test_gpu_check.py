"""tools/probes/gpu_check.sh on a CPU, in its smoke mode: the first GPU session's script runs end to
end (gpu_check.py, one recipe through smoke_presets.sh) and ends with its summary table."""

import os
import pathlib
import subprocess
import sys

import keras
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_check_runs_in_smoke_mode_and_prints_one_summary_table(tmp_path):
    backend = keras.backend.backend()
    env = dict(
        os.environ, PYTHON=sys.executable, BACKENDS=backend, SMOKE_BACKENDS=backend,
        SMOKE_ONLY="token_pvr_mlp", TMPDIR=str(tmp_path), LIMIT="600", SMOKE_LIMIT="600",
    )  # fmt: skip
    done = subprocess.run(
        ["bash", "tools/probes/gpu_check.sh", "--token-examples", "1024", "--block-examples", "50",
         "--models", "mlp", "resnet18"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    table = out[out.index("summary (") :].splitlines()
    assert table[1].split() == ["backend", "model", "/", "recipe", "input", "result"]
    rows = [line.split() for line in table[2:] if line.strip()]
    inputs = ["device", "tfdata"] if backend == "jax" else ["tfdata"]
    found = {(r[0], r[1], r[2]) for r in rows}
    for model in ("mlp", "resnet18"):
        for source in inputs:
            assert (backend, model, source) in found, table
    smoke = [r for r in rows if r[1] == "token_pvr_mlp"]
    assert smoke and smoke[0][4] == "ok", table
    assert not any("FAILED" in line for line in table), table
    assert "examples/s" in out
