"""MNIST and CIFAR-10 from TensorFlow Datasets, decoded once into memory and cached per process.

Like any TFDS dataset, a split is read from the TFDS data dir: in order, the ``data_dir``
argument, the ``TFDS_DATA_DIR`` environment variable (read at call time),
``~/tensorflow_datasets``. On first use a dataset that is not prepared there is downloaded and
prepared by TFDS's own ``download_and_prepare``, but only after a short probe (a TCP connection
to the dataset's download host, a few seconds at most) says the machine can reach it: an
air-gapped machine fails at once with a message that says how to prepare the data elsewhere
and copy it, instead of TFDS's multi-minute retry loop. ``download=False`` never touches the
network. ``python tools/prepare_data.py DIR`` prepares both datasets into DIR for copying.
"""

import os
import pathlib
import socket
import threading

import numpy as np
import tensorflow_datasets as tfds

from pvr_keras.data import keys
from pvr_keras.errors import DataNotPrepared

SOURCES = ("mnist", "cifar10")
# Where TFDS's builders download each dataset from (host, port): the probe's targets.
DOWNLOAD_HOSTS = {
    "mnist": ("storage.googleapis.com", 443),
    "cifar10": ("www.cs.toronto.edu", 443),
}
PROBE_TIMEOUT_S = 3.0

_CACHE = {}
_LOCK = threading.Lock()


def _prepare_hint(name):
    return (
        f"To prepare {name} for a machine without internet: on a machine with internet run "
        f"`python tools/prepare_data.py DIR` (or `tfds build {name} --data_dir DIR`), copy DIR "
        f"to this machine, then pass data_dir=DIR (recipes: --data-dir DIR) or set "
        f"TFDS_DATA_DIR=DIR."
    )


def probe(name, timeout=PROBE_TIMEOUT_S):
    """Whether this machine can reach ``name``'s download host: ``(True, "")`` or
    ``(False, reason)``. One TCP connection, at most ``timeout`` seconds (DNS included)."""
    host, port = DOWNLOAD_HOSTS[_check_name(name)]
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout)  # getaddrinfo has no timeout of its own
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, ""
    except OSError as err:
        return False, f"{host}:{port}: {err}"
    finally:
        socket.setdefaulttimeout(previous)


def _download_and_prepare(name, root):
    """TFDS's own download and preparation of ``name`` into the data dir ``root``."""
    builder = tfds.builder(name, data_dir=root)
    builder.download_and_prepare()


def prepare(name, data_dir=None, *, download=True, log=print):
    """Makes sure ``name`` is prepared in the TFDS data dir; returns (dir, version).

    Already prepared: nothing is done (no network). Otherwise, with ``download``, the
    download host is probed and TFDS downloads and prepares the dataset (MNIST ~11 MB,
    CIFAR-10 ~160 MB).

    Raises:
        FileNotFoundError: not prepared, and ``download`` is False or the download host cannot
            be reached (the message says how to prepare the data on another machine).
    """
    try:
        return check_prepared(name, data_dir)
    except FileNotFoundError as missing:
        if not download:
            raise DataNotPrepared(f"{missing} (download=False: not downloading)") from None
        root, origin = resolve_data_dir(data_dir)
        reachable, reason = probe(name)
        if not reachable:
            raise DataNotPrepared(
                f"{missing} Downloading is not possible: {name}'s download host cannot be "
                f"reached from this machine ({reason})."
            ) from None
    log(f"{name}: not prepared in {root} (from {origin}); downloading and preparing it there")
    os.makedirs(root, exist_ok=True)
    _download_and_prepare(name, root)
    return check_prepared(name, data_dir)


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


def prepare_sources(names, data_dir=None, *, download=True):
    """``prepare`` for each of ``names`` (e.g. a task's image sources), before any work: a
    recipe fails here in seconds, or downloads once, before it builds its model."""
    return {name: prepare(name, data_dir, download=download) for name in dict.fromkeys(names)}


def load_images(name, split, data_dir=None, *, download=True):
    """All images and labels of one split of MNIST or CIFAR-10, as read-only NumPy arrays.

    Decoded once per process and (name, split, data dir) and then served from memory; the
    order is the TFDS order of the split (files not shuffled), so image ``i`` is stable.

    Args:
        name: ``"mnist"`` or ``"cifar10"``.
        split: ``"train"`` or ``"test"``.
        data_dir: the TFDS data dir; default ``TFDS_DATA_DIR`` or ``~/tensorflow_datasets``.
        download: on first use, download and prepare the dataset there if the machine can
            reach its download host (``prepare``); ``False`` never touches the network.

    Returns:
        images uint8 (N, H, W, C) ((N, 28, 28, 1) MNIST, (N, 32, 32, 3) CIFAR-10) and labels
        int64 (N,).

    Raises:
        ValueError: unknown name or split.
        FileNotFoundError: the dataset is not prepared and cannot be downloaded (offline, or
            ``download=False``); the message says how to prepare it on another machine.

    Example:
        >>> images, labels = load_images("mnist", "test")
        >>> images.shape, images.dtype, labels[:3]
        ((10000, 28, 28, 1), dtype('uint8'), array([2, 0, 4]))
    """
    _check_name(name)
    keys.check_split(split)
    from pvr_keras.data.tf_setup import configure_devices  # TensorFlow decodes the files

    configure_devices()  # first: under JAX its GPUs are hidden (JAX owns the accelerators)
    root, version = prepare(name, data_dir, download=download)
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
