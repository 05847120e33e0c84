"""Shared test setup: quiet TensorFlow logs, no network, and the prepared image data.

Real-pixel tests take the ``tfds_dir`` fixture: the TFDS data dir a user would point to
(``TFDS_DATA_DIR``, else ``~/tensorflow_datasets``) when MNIST and CIFAR-10 are prepared there
(``python tools/prepare_data.py DIR``), else the test is skipped with that instruction. With
``PVR_REQUIRE_DATA=1`` (CI sets it, with ``TFDS_DATA_DIR`` pointing at its prepared copy) a
missing dataset fails the test instead.
"""

import atexit
import os
import pathlib
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# No recipe in a test (or the subprocesses it starts) measures the engines on its first run:
# the fixed rule (engines.choose); tests of the measurement ask for it.
os.environ.setdefault("PVR_ENGINE", "fixed")

# JAX: one compilation cache for the test session and the recipes it starts in subprocesses
# (they inherit the environment). Many tests build the same small models, so XLA compiles
# each step once per session instead of once per test (about a quarter less CPU time for the
# JAX tests). The cache holds only what XLA would compile again, and goes at exit; a
# JAX_COMPILATION_CACHE_DIR of your own is used as it is.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _jax_cache = tempfile.mkdtemp(prefix="pvr-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _jax_cache
    atexit.register(shutil.rmtree, _jax_cache, ignore_errors=True)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Tests never download: the loader's probe says offline unless a test mocks it."""
    from pvr_keras.data import images

    def offline(name, timeout=None):
        return False, "tests never use the network"

    def no_download(name, root):
        raise AssertionError("a test tried to download data")

    monkeypatch.setattr(images, "probe", offline)
    monkeypatch.setattr(images, "_download_and_prepare", no_download)


@pytest.fixture(scope="session")
def tfds_dir():
    """The prepared TFDS data dir (real MNIST and CIFAR-10), found the way users point to it."""
    from pvr_keras.data import images

    root, origin = images.resolve_data_dir()
    missing = []
    for name in images.SOURCES:
        try:
            images.check_prepared(name, root)
        except FileNotFoundError:
            missing.append(name)
    if missing:
        message = (
            f"real-data test: {', '.join(missing)} not prepared in {root} (from {origin}); to "
            f"run it: python tools/prepare_data.py DIR, then TFDS_DATA_DIR=DIR python -m pytest"
        )
        if os.environ.get("PVR_REQUIRE_DATA") == "1":
            pytest.fail(message + " (PVR_REQUIRE_DATA=1: missing data fails)")
        pytest.skip(message)
    return pathlib.Path(root)


# CI runs backend-free tests once, not once per backend (tests/backend_split.py).
from tests.backend_split import pytest_collection_modifyitems, pytest_configure  # noqa: E402, F401
