"""The benchmark catalog as a TensorFlow Datasets builder: ``pvr``.

    import pvr_keras.tfds  # registers the builder
    import tensorflow_datasets as tfds

    test = tfds.load("pvr/token_w3:1.0.0", split="test", data_dir=DIR)
    small = tfds.load("pvr/token_w3_small", split="train", data_dir=DIR)
    # Random access without tf.data: prepare as ArrayRecord (in a data dir of its own)
    source = tfds.data_source("pvr/boolean_f3_frozen0", split="train", data_dir=DIR2,
                              builder_kwargs={"file_format": "array_record"})

Every config of ``pvr_keras.benchmarks`` (``token/w3-median`` is ``token_w3_median``) at its
standard size, and with ``_small`` at its small size (a prefix of the standard splits:
``split="test[:2000]"`` of the standard config is the small config's test split). Generated
locally from the NumPy sources (token, Boolean) or the tf.data composer (blocks, sequences),
so there is nothing to download; the image configs read MNIST / CIFAR-10 from the same TFDS
data dir (``data_dir``, else ``TFDS_DATA_DIR``), as ``pvr_keras.data.load_images`` does.
Examples are keyed by their index, and the features are those of ``benchmarks.Source``, dtypes
included (``tfds.load(...).as_numpy_iterator()`` gives, in order, what ``source[i]`` gives;
the label is an int32 ``Tensor``, not TFDS's int64 ``ClassLabel``). The first load prepares
every split of a config once (TFDS prepares a dataset whole): most of the time is TFDS
encoding and writing one example at a time (``pvr/token_w3``: about 45 s on 2 CPU cores).

A token or Boolean config is checked against the committed manifest
(``pvr_keras/benchmarks/manifest.json``) when it is built: its files are read back and each
split's examples hashed; a build that does not match is removed (``DamagedFile``, naming the
split). TFDS does not check files it reuses: ``verify`` checks a prepared config again

    pvr_keras.tfds.verify("pvr/token_w3_small", data_dir=DIR)   # {split: sha256}
"""

import os
import shutil

import numpy as np
import tensorflow_datasets as tfds

from pvr_keras.benchmarks import catalog, hashes
from pvr_keras.benchmarks.sources import Source
from pvr_keras.errors import DamagedFile
from pvr_keras.references import resolve

CHUNK = 8192


class PvrConfig(tfds.core.BuilderConfig):
    """One benchmark config at one size preset."""

    def __init__(self, *, benchmark, size, **kwargs):
        config = catalog.get(benchmark)
        name = config.tfds_name + ("" if size == "standard" else f"_{size}")
        sizes = config.sizes(size)
        description = (f"{config.name} ({size}: " + ", ".join(f"{n:,} {s}" for s, n in
                       sizes.items()) + f"). {config.description}")  # fmt: skip
        super().__init__(name=name, version=config.version, description=description, **kwargs)
        self.benchmark = config.name
        self.size = size


def _features(config):
    """The TFDS features of a config's rows (its kind's ``BenchmarkHooks.features``)."""
    hooks = config.hooks
    if hooks.features is None:
        raise ValueError(f"{config.name}: the {config.kind} kind has no TFDS features "
                         "(BenchmarkHooks.features)")  # fmt: skip
    return resolve(hooks.features)(config.build_task())


class Pvr(tfds.core.GeneratorBasedBuilder):
    """Pointer Value Retrieval (Zhang, Raghu, Kleinberg, Bengio 2021) and Boolean PVR (Abbe et
    al. 2022): the canonical splits of pvr_keras's benchmark configs."""

    VERSION = tfds.core.Version(catalog.VERSION)
    RELEASE_NOTES = catalog.RELEASE_NOTES
    BUILDER_CONFIGS = [PvrConfig(benchmark=name, size=size) for name in catalog.names()
                       for size in ("standard", "small")]  # fmt: skip

    def _info(self):
        config = catalog.get(self.builder_config.benchmark)
        return self.dataset_info_from_configs(
            features=_features(config),
            supervised_keys=config.hooks.supervised,
            disable_shuffling=True,  # index order: example i is source[i]
            homepage=catalog.HOMEPAGE,
            citation=catalog.CITATION,
        )

    def download_and_prepare(self, *args, **kwargs):
        """TFDS's, then, when this call built the config, ``verify``: a build whose files do
        not hold the manifest's examples is removed (``DamagedFile`` naming the split)."""
        built = not self.is_prepared()
        super().download_and_prepare(*args, **kwargs)
        hashed = catalog.get(self.builder_config.benchmark).hooks.hashed is not None
        if built and hashed:
            try:
                verify(self)
            except DamagedFile as error:
                shutil.rmtree(self.data_dir, ignore_errors=True)
                raise DamagedFile(f"{error}; the build was removed") from None
        if built:
            checked = ", checked against the manifest" if hashed else ""
            print(f"pvr/{self.builder_config.name} {self.version}: generated{checked}, in "
                  f"{self.data_dir}; later loads reuse it.", flush=True)  # fmt: skip

    # TFDS's own lines say "Downloading and preparing" and "downloaded and prepared": nothing
    # is downloaded here, so these say what happens instead (the last line is printed above,
    # once the build is checked).
    def _log_download_bytes(self):
        sizes = ", ".join(f"{n:,} {s}" for s, n in self._sizes().items())
        print(f"Generating pvr/{self.builder_config.name} {self.version} locally (nothing is "
              f"downloaded): every split once ({sizes} examples), to {self.data_dir}...",
              flush=True)  # fmt: skip

    def _log_download_done(self):
        pass

    def _sizes(self):
        config = self.builder_config
        return catalog.get(config.benchmark).sizes(config.size)

    def _split_generators(self, dl_manager):
        del dl_manager  # generated locally: nothing to download
        return {split: self._generate_examples(split) for split in catalog.SPLITS}

    def _images_dir(self):
        """Where an image config's MNIST / CIFAR-10 are: this builder's data dir when they
        are prepared there, else the library's default (``TFDS_DATA_DIR``, ...)."""
        config = catalog.get(self.builder_config.benchmark)
        if config.hooks.images is None:
            return None
        from pvr_keras.data import images

        names = resolve(config.hooks.images)(config.build_task())
        try:
            for name in names:
                images.check_prepared(name, str(self.data_dir_root))
        except FileNotFoundError:
            return None
        return str(self.data_dir_root)

    def _generate_examples(self, split):
        config = self.builder_config
        source = Source(config.benchmark, split, size=config.size, data_dir=self._images_dir())
        n = len(source)
        for start in range(0, n, CHUNK):
            rows = source.rows(np.arange(start, min(start + CHUNK, n), dtype=np.int64))
            for i in range(len(next(iter(rows.values())))):
                yield start + i, {k: v[i] for k, v in rows.items()}


def _rows(builder, split, fields):
    """The prepared rows of a split in index order, ``fields`` only, in chunks.

    TFRecord files are read as their records (``tf.train.Example``, the shards in order: the
    builder writes examples in index order) and parsed a chunk at a time, ``fields`` only:
    about ten times faster than ``as_dataset``, which decodes every feature of each example
    on its own."""
    if builder.info.file_format == tfds.core.FileFormat.ARRAY_RECORD:
        source = builder.as_data_source(split)
        for start in range(0, len(source), CHUNK):
            rows = source.__getitems__(list(range(start, min(start + CHUNK, len(source)))))
            yield {key: np.asarray([row[key] for row in rows]) for key in fields}
        return
    import tensorflow as tf

    # A tf.train.Example holds integers (and Booleans) as int64, floats as float32.
    spec = {}
    for key in fields:
        info = builder.info.features.get_serialized_info()[key]
        stored = tf.float32 if np.dtype(info.np_dtype).kind == "f" else tf.int64
        spec[key] = tf.io.FixedLenFeature(info.shape, stored)
    paths = [os.fspath(path) for path in builder.info.splits[split].filepaths]
    records = tf.data.TFRecordDataset(paths).batch(CHUNK)
    for rows in records.map(lambda batch: tf.io.parse_example(batch, spec)).as_numpy_iterator():
        yield rows


def verify(builder, data_dir=None):
    """Checks a prepared token or Boolean config of ``pvr`` against the committed manifest
    (``pvr_keras/benchmarks/manifest.json``): each split's files are read back (TFRecord or
    ArrayRecord) and its number of examples and the SHA-256 of their canonical bytes
    (``benchmarks.split_hash``: inputs and labels) compared with the manifest's. The other
    features (pointer, window positions, held-out and frozen flags) are not in the manifest.

    A build is verified when it is made; TFDS reuses prepared files without reading them, so
    call this on a data dir you did not prepare yourself (or after copying one).

    Args:
        builder: a ``pvr`` builder, or its name: ``pvr/token_w3_small`` (``:1.0.0``).
        data_dir: the TFDS data dir of a name (TFDS's default when None).

    Returns:
        ``{split: sha256}``.

    Raises:
        DamagedFile: a split that is not the manifest's (one line naming it).
        FileNotFoundError: the config is not prepared in the data dir.
        ValueError: an image config (its pixels are the local MNIST / CIFAR-10 copy's: it
            has no manifest entry), or not a ``pvr`` builder.
    """
    if isinstance(builder, str):
        name = builder if builder.startswith("pvr/") else f"pvr/{builder}"
        builder = tfds.builder(name, data_dir=data_dir)
    if not isinstance(builder, Pvr):
        raise ValueError(f"verify checks a pvr builder; received {builder!r:.80}")
    config = builder.builder_config
    fields, _ = hashes.hashed(catalog.get(config.benchmark))
    if not builder.is_prepared():
        raise FileNotFoundError(f"pvr/{config.name} {builder.version} is not prepared in "
                                f"{builder.data_dir}")  # fmt: skip
    where = f"pvr/{config.name} {builder.version} in {builder.data_dir}"
    return {split: hashes.check_rows(config.benchmark, split, config.size,
                                     _rows(builder, split, fields), where)
            for split in catalog.SPLITS}  # fmt: skip
