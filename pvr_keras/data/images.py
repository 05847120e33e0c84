"""MNIST and CIFAR-10 from TensorFlow Datasets, decoded once into memory and cached per process.

Offline first: the TFDS data dir is checked on disk before TFDS is asked for anything, and
nothing is ever downloaded, so a dataset that is not prepared fails in well under a second with
a message that says how to prepare it, instead of a long retry loop. The data dir is, in
order: the ``data_dir`` argument, the ``TFDS_DATA_DIR`` environment variable (read at call
time), ``~/tensorflow_datasets``.
"""

import os
import pathlib
import threading

import numpy as np
import tensorflow_datasets as tfds

from pvr_keras.data import keys

SOURCES = ("mnist", "cifar10")

_CACHE = {}
_LOCK = threading.Lock()


def _prepare_hint(name):
    return (
        f"To use {name} offline: on a machine with internet run "
        f"`tfds build {name} --data_dir DIR` (Python 3.11 also needs `pip install "
        f"importlib_resources`), copy DIR to this machine, then pass data_dir=DIR or set "
        f"TFDS_DATA_DIR=DIR."
    )


def resolve_data_dir(data_dir=None):
    """The TFDS data dir used for ``data_dir``: (absolute path, where it came from)."""
    if data_dir is not None:
        return os.path.abspath(os.path.expanduser(os.fspath(data_dir))), "data_dir"
    if os.environ.get("TFDS_DATA_DIR"):
        return os.path.abspath(os.path.expanduser(os.environ["TFDS_DATA_DIR"])), "TFDS_DATA_DIR"
    return os.path.expanduser("~/tensorflow_datasets"), "the TFDS default"


def _check_name(name):
    if name not in SOURCES:
        raise ValueError(f"name must be one of {', '.join(SOURCES)}; received {name!r}")
    return name


def check_prepared(name, data_dir=None):
    """Checks on disk that ``name`` is prepared in the data dir; returns (dir, version).

    Raises:
        FileNotFoundError: the data dir does not exist, or holds no prepared copy of the
            version this TFDS expects (``DIR/name/VERSION/dataset_info.json``).
    """
    _check_name(name)
    root, origin = resolve_data_dir(data_dir)
    if not os.path.isdir(root):
        raise FileNotFoundError(
            f"TFDS data dir {root} (from {origin}) does not exist. {_prepare_hint(name)}"
        )
    version = str(tfds.builder_cls(name).VERSION)
    if not os.path.isfile(os.path.join(root, name, version, "dataset_info.json")):
        found = sorted(p.parent.name for p in pathlib.Path(root, name).glob("*/dataset_info.json"))
        found = f" (found versions: {', '.join(found)})" if found else ""
        raise FileNotFoundError(
            f"{name} {version} is not prepared in TFDS data dir {root} (from {origin}): no "
            f"{os.path.join(root, name, version, 'dataset_info.json')}{found}. "
            f"{_prepare_hint(name)}"
        )
    return root, version


def load_images(name, split, data_dir=None):
    """All images and labels of one split of MNIST or CIFAR-10, as read-only NumPy arrays.

    Decoded once per process and (name, split, data dir) and then served from memory; the
    order is the TFDS order of the split (files not shuffled), so image ``i`` is stable.

    Args:
        name: ``"mnist"`` or ``"cifar10"``.
        split: ``"train"`` or ``"test"``.
        data_dir: a prepared TFDS data dir; default ``TFDS_DATA_DIR`` or
            ``~/tensorflow_datasets``.

    Returns:
        images uint8 (N, H, W, C) ((N, 28, 28, 1) MNIST, (N, 32, 32, 3) CIFAR-10) and labels
        int64 (N,).

    Raises:
        ValueError: unknown name or split.
        FileNotFoundError: the data dir or the prepared dataset is missing (the message says
            how to prepare it offline).

    Example:
        >>> images, labels = load_images("mnist", "test", data_dir="../shared/data/tfds")
        >>> images.shape, images.dtype, labels[:3]
        ((10000, 28, 28, 1), dtype('uint8'), array([2, 0, 4]))
    """
    _check_name(name)
    keys.check_split(split)
    root, version = check_prepared(name, data_dir)
    key = (name, split, root, version)
    with _LOCK:
        if key not in _CACHE:
            builder = tfds.builder(name, data_dir=root, version=version)
            # Fixed-size batches rather than batch_size=-1, which crashes under mock_data.
            batches = list(tfds.as_numpy(builder.as_dataset(split=split, batch_size=8192)))
            images = np.concatenate([b["image"] for b in batches]).astype(np.uint8, copy=False)
            labels = np.concatenate([b["label"] for b in batches]).astype(np.int64, copy=False)
            images.setflags(write=False)
            labels.setflags(write=False)
            _CACHE[key] = (images, labels)
        return _CACHE[key]


def clear_cache():
    """Drops every decoded split from memory (tests use it around ``tfds.testing.mock_data``)."""
    with _LOCK:
        _CACHE.clear()
