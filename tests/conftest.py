"""Shared test setup: quiet TensorFlow logs, no network, and the prepared image data.

Real-pixel tests take the ``tfds_dir`` fixture: the TFDS data dir a user would point to
(``TFDS_DATA_DIR``, else ``~/tensorflow_datasets``) when MNIST and CIFAR-10 are prepared there
(``python tools/prepare_data.py DIR``), else the test is skipped with that instruction. With
``PVR_REQUIRE_DATA=1`` (CI sets it, with ``TFDS_DATA_DIR`` pointing at its prepared copy) a
missing dataset fails the test instead.
"""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

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
