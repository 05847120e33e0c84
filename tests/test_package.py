"""The top level: subpackages on first use, one version, no heavy import by itself."""

import importlib.metadata
import subprocess
import sys

import pytest

import pvr_keras


def test_subpackages_load_on_first_use():
    code = (
        "import sys, pvr_keras; heavy = {'keras', 'tensorflow', 'jax'} & set(sys.modules); "
        "print(sorted(heavy)); t = pvr_keras.tasks.TokenTask(window=2); "
        "print(type(pvr_keras.models.mixer).__name__, pvr_keras.data.token_arrays.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = done.stdout.strip().splitlines()
    assert first == "[]"  # import pvr_keras alone loads no framework
    assert second == "function token_arrays"  # models.mixer is the builder, not the module
    assert set(pvr_keras.__all__) >= {"models", "data", "training", "__version__"}
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pvr_keras.nope  # noqa: B018


def test_one_version():
    assert pvr_keras.__version__ == importlib.metadata.version("pvr-keras")


def test_no_global_matplotlib_backend_at_import():
    """A notebook keeps its backend: importing and plotting leave it as it was."""
    code = (
        "import matplotlib; matplotlib.use('svg'); import tempfile, pathlib; "
        "import pvr_keras.sweeps, pvr_keras.figures as p; "
        "h = {k: [0.1, 0.2] for k in ('train_accuracy', 'train_eval_accuracy', 'test_accuracy',"
        " 'train_loss', 'test_loss')}; h['epoch'] = [1, 2]; "
        "out = pathlib.Path(tempfile.mkdtemp()) / 'c.png'; p.learning_curve(h, out); "
        "print(matplotlib.get_backend(), out.stat().st_size > 1000)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["svg", "True"]
