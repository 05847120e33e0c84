"""Shared test setup: quiet TensorFlow logs, paths to the shared offline data."""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_TFDS = REPO.parent / "shared" / "data" / "tfds"


@pytest.fixture(scope="session")
def tfds_dir():
    """The prepared TFDS data dir beside the repo (real MNIST and CIFAR-10)."""
    if not (SHARED_TFDS / "mnist").is_dir():
        pytest.fail(f"prepared TFDS data not found at {SHARED_TFDS}")
    return SHARED_TFDS


# CI runs backend-free tests once, not once per backend (tests/backend_split.py).
from tests.backend_split import pytest_collection_modifyitems, pytest_configure  # noqa: E402, F401
