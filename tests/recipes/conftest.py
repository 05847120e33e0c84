"""A tiny finished block_iid run, shared by the block recipe tests (one training per process)."""

import contextlib
import io
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))

# VGG11-BN at width 1 on 300 examples, one epoch: JAX compiles ResNet18's many shapes slower.
BLOCK_TINY = ["--model", "vgg11_bn", "--width", "1", "--num-examples", "300"]
BLOCK_TINY += ["--test-examples", "200", "--train-eval-examples", "100", "--epochs", "1"]
BLOCK_TINY += ["--learning-rate", "1e-3"]


@pytest.fixture(scope="session")
def block_iid_run(tfds_dir, tmp_path_factory):
    """(run folder, returned record, printed output) of ``block_iid.py`` with ``BLOCK_TINY``."""
    import block_iid

    out = tmp_path_factory.mktemp("block_iid") / "run"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        record = block_iid.main([*BLOCK_TINY, "--data-dir", str(tfds_dir), "--out", str(out)])
    return out, record, printed.getvalue()
