"""The manifest of the token and Boolean splits: the SHA-256 of each split's canonical bytes,
per config, version and size, committed beside the catalog (``manifest.json``) and written by
``tools/benchmark_manifest.py``.

Canonical bytes of a split: its inputs, then its labels, each as a C-order little-endian
array of the source's dtype (token ``tokens`` int32 (N, seq_len) and ``label`` int32 (N,);
Boolean ``bits`` int8 (N, d) and ``label`` float32 (N,)), hashed in chunks of examples in
index order (the bytes do not depend on the chunking). Image configs have no manifest entry:
their pixels come from the user's MNIST / CIFAR-10 copy.
"""

import hashlib
import json
import pathlib

import numpy as np

from pvr_keras.benchmarks import catalog

PATH = pathlib.Path(__file__).with_name("manifest.json")
HASHED = ("token", "boolean")
CHUNK = 65_536
FIELDS = {"token": ("tokens", "label"), "boolean": ("bits", "label")}


def _little_endian(array):
    array = np.ascontiguousarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def canonical_bytes(family, rows):
    """(inputs bytes, labels bytes) of a batch of a source's rows."""
    inputs, labels = FIELDS[family]
    return _little_endian(rows[inputs]), _little_endian(rows[labels])


def hash_rows(family, chunks):
    """SHA-256 (hex) of the canonical bytes of ``chunks``, an iterable of row dicts in index
    order (inputs of every chunk first, then labels)."""
    inputs, labels = hashlib.sha256(), hashlib.sha256()
    for rows in chunks:
        x, y = canonical_bytes(family, rows)
        inputs.update(x)
        labels.update(y)
    return hashlib.sha256(b"pvr-split-v1" + inputs.digest() + labels.digest()).hexdigest()


def split_hash(name, split, size="standard"):
    """The SHA-256 of a split, computed now from the NumPy source."""
    from pvr_keras.benchmarks.sources import Source

    src = Source(name, split, size=size)
    family = src.config.family
    if family not in HASHED:
        raise ValueError(f"{name}: image configs have no split hash (their pixels come from "
                         "the local MNIST / CIFAR-10 copy)")  # fmt: skip
    n = len(src)
    chunks = (src.rows(np.arange(i, min(i + CHUNK, n), dtype=np.int64))
              for i in range(0, n, CHUNK))  # fmt: skip
    return hash_rows(family, chunks)


def compute():
    """The manifest of the catalog as it is: {name: {version, sizes: {size: {split: {examples,
    sha256}}}}} for every token and Boolean config."""
    out = {}
    for name, config in catalog.CONFIGS.items():
        if config.family not in HASHED:
            continue
        sizes = {}
        for size in catalog.SIZES[config.family]:
            sizes[size] = {
                split: {"examples": n, "sha256": split_hash(name, split, size)}
                for split, n in config.sizes(size).items()
            }
        out[name] = {"version": config.version, "sizes": sizes}
    return out


def manifest():
    """The committed manifest (``manifest.json``)."""
    return json.loads(PATH.read_text())


def recorded(name, split, size="standard"):
    """The committed hash of one split (None for image configs)."""
    config = catalog.get(name)
    entry = manifest().get(config.name)
    if entry is None:
        return None
    if entry["version"] != config.version:
        raise ValueError(f"{config.name}: the manifest is of version {entry['version']}, the "
                         f"catalog's is {config.version}: run "
                         "tools/benchmark_manifest.py")  # fmt: skip
    return entry["sizes"][size][split]["sha256"]
