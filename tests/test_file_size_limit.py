"""A file size limit (``ulimit -f``) or a full disk met while writing: one line, exit 1,
nothing half-written left, for the writers that are not ``pvr_keras.files`` (pyarrow,
TensorFlow's TFRecord writer, Keras's HDF5 weights, which crash the process at the limit
unless it is checked first)."""

import pathlib
import resource
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def _limited(command, limit, cwd):
    def limit_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd,
                          preexec_fn=limit_files)  # fmt: skip


def _errors(done):
    return [line for line in done.stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize("fmt", ["text", "parquet", "tfrecord"])
def test_an_export_at_the_file_size_limit_is_one_line_and_leaves_nothing(tmp_path, fmt):
    done = _limited([sys.executable, str(REPO / "tools" / "export_dataset.py"), "--format", fmt,
                     "--size", "small", "token/w3", str(tmp_path / "out")],
                    64 * 1024, tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(_errors(done)) == 1, done.stderr[-2000:]
    assert "no space left" in _errors(done)[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no part, no lock


def test_a_run_at_the_file_size_limit_stops_in_one_line_before_its_checkpoint(tmp_path):
    out = tmp_path / "run"
    done = _limited([sys.executable, str(REPO / "recipes" / "train.py"), "--epochs", "2",
                     "--num-examples", "1000", "--test-examples", "200", "--min-steps", "0",
                     "--width", "0.125", "--backend", "jax", "--out", str(out)],
                    24 * 1024, tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(_errors(done)) == 1, done.stderr[-2000:]
    assert "file size limit" in _errors(done)[0]
    assert not [p.name for p in out.iterdir() if p.name.startswith(".tmp")]
    assert (out / "record.json").is_file()
