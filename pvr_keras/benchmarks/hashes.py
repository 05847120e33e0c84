"""The manifest of the token and Boolean splits: the SHA-256 of each split's canonical bytes,
per config, version and size, committed beside the catalog (``manifest.json``) and written by
``tools/generate/benchmark_manifest.py``.

Canonical bytes of a split: its inputs, then its labels, each as a C-order little-endian
array of the source's dtype (token ``tokens`` int32 (N, seq_len) and ``label`` int32 (N,);
Boolean ``bits`` int8 (N, d) and ``label`` float32 (N,)), hashed in chunks of examples in
index order (the bytes do not depend on the chunking). Each kind names its inputs and labels
(``BenchmarkHooks.supervised``) and their canonical dtypes (``BenchmarkHooks.hashed``). A
counterfactual-pair config's inputs are its ``base`` and ``source`` (``hashed_inputs``), each
example's base tokens then its source tokens, and its labels the counterfactual labels. Image
configs have no manifest entry: their pixels come from the user's MNIST / CIFAR-10 copy.
"""

import hashlib
import pathlib

import numpy as np

from pvr_keras import files
from pvr_keras.benchmarks import catalog
from pvr_keras.errors import DamagedFile

PATH = pathlib.Path(__file__).with_name("manifest.json")
CHUNK = 65_536


def _hooks(of):
    """The ``BenchmarkHooks`` of a config, or of a kind named by its name."""
    return of.hooks if isinstance(of, catalog.Config) else catalog.hooks(of)


def _input_keys(hooks):
    return hooks.hashed_inputs or hooks.supervised[:1]


def hashed(config):
    """The row keys (inputs ..., labels) and their canonical dtypes of a config's splits: the
    inputs are ``supervised``'s, or the kind's ``hashed_inputs`` (a pair's base and source).

    Raises:
        ValueError: its kind's splits are not hashed (image configs).
    """
    hooks = config.hooks
    if hooks.hashed is None:
        raise ValueError(f"{config.name}: {config.kind} configs have no manifest entry (no "
                         "split hash: image configs' pixels come from the local MNIST / "
                         "CIFAR-10 copy)")  # fmt: skip
    inputs, (inputs_dtype, labels_dtype) = _input_keys(hooks), hooks.hashed
    keys = (*inputs, hooks.supervised[1])
    return keys, (*(np.dtype(inputs_dtype) for _ in inputs), np.dtype(labels_dtype))


def _little_endian(array):
    array = np.ascontiguousarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def canonical_bytes(of, rows):
    """(inputs bytes, labels bytes) of a batch of a source's rows, of a config (``of``: a
    ``Config``) or of a config of the kind named ``of``. Several inputs (a pair's base and
    source) are laid example by example: each row's base, then its source."""
    hooks = _hooks(of)
    keys, labels = _input_keys(hooks), hooks.supervised[1]
    if len(keys) == 1:
        inputs = rows[keys[0]]
    else:
        inputs = np.concatenate([np.reshape(rows[k], (len(rows[k]), -1)) for k in keys], axis=1)
    return _little_endian(inputs), _little_endian(rows[labels])


def hash_rows(of, chunks):
    """SHA-256 (hex) of the canonical bytes of ``chunks``, an iterable of row dicts in index
    order (inputs of every chunk first, then labels), of a ``Config`` or of a config of the
    kind named ``of``."""
    inputs, labels = hashlib.sha256(), hashlib.sha256()
    for rows in chunks:
        x, y = canonical_bytes(of, rows)
        inputs.update(x)
        labels.update(y)
    return hashlib.sha256(b"pvr-split-v1" + inputs.digest() + labels.digest()).hexdigest()


def split_hash(name, split, size="standard"):
    """The SHA-256 of a split, computed now from the NumPy source."""
    from pvr_keras.benchmarks.sources import Source

    config = catalog.get(name)
    hashed(config)
    src = Source(name, split, size=size)
    n = len(src)
    chunks = (src.rows(np.arange(i, min(i + CHUNK, n), dtype=np.int64))
              for i in range(0, n, CHUNK))  # fmt: skip
    return hash_rows(config, chunks)


def compute():
    """The manifest of the catalog as it is: {name: {version, sizes: {size: {split: {examples,
    sha256}}}}} for every config whose kind hashes its splits (token, Boolean)."""
    out = {}
    for name in catalog.names():
        config = catalog.get(name)
        if config.hooks.hashed is None:
            continue
        sizes = {}
        for size in config.hooks.sizes:
            sizes[size] = {
                split: {"examples": n, "sha256": split_hash(name, split, size)}
                for split, n in config.sizes(size).items()
            }
        out[name] = {"version": config.version, "sizes": sizes}
    return out


def manifest():
    """The committed manifest (``manifest.json``)."""
    return files.read_json(PATH)


def recorded(name, split, size="standard"):
    """The committed hash of one split (None for image configs)."""
    config = catalog.get(name)
    entry = manifest().get(config.name)
    if entry is None:
        return None
    if entry["version"] != config.version:
        raise ValueError(f"{config.name}: the manifest is of version {entry['version']}, the "
                         f"catalog's is {config.version}: run "
                         "tools/generate/benchmark_manifest.py")  # fmt: skip
    return entry["sizes"][size][split]["sha256"]


def check_rows(name, split, size, chunks, where):
    """Checks rows read back from elsewhere (a prepared TFDS split) against the committed
    manifest: their number and the SHA-256 of their canonical bytes, as ``split_hash``
    computes it from the source.

    Args:
        name, split, size: the split the rows should be.
        chunks: row dicts in index order, holding at least the inputs and labels (``hashed``)
            in any dtype whose values the canonical dtype holds exactly.
        where: what the rows were read from, for the message.

    Returns:
        The SHA-256 (hex), the manifest's.

    Raises:
        DamagedFile: the rows are not the manifest's (one line naming ``where`` and the
            split).
        ValueError: an image config (no manifest entry), or a manifest of another version.
    """
    config = catalog.get(name)
    fields, dtypes = hashed(config)
    want = recorded(config.name, split, size)
    if want is None:
        raise ValueError(
            f"{config.name}: no manifest entry (run tools/generate/benchmark_manifest.py)"
        )
    examples = manifest()[config.name]["sizes"][size][split]["examples"]
    counted, exact = 0, True

    def canonical():
        nonlocal counted, exact
        for rows in chunks:
            out = {}
            for key, dtype in zip(fields, dtypes, strict=True):
                value = np.asarray(rows[key])
                out[key] = value.astype(dtype)
                exact = exact and np.array_equal(out[key], value)  # 2**32 + 3 is not 3
            counted += len(out[fields[-1]])
            yield out

    got = hash_rows(config, canonical())
    if counted != examples or got != want or not exact:
        raise DamagedFile(f"{where}: the {split} split does not match the manifest "
                          f"(pvr_keras/benchmarks/manifest.json): {counted:,} examples of "
                          f"SHA-256 {got[:16]}..., the manifest's are {examples:,} of "
                          f"{want[:16]}...")  # fmt: skip
    return got
