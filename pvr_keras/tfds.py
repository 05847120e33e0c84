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
Examples are keyed by their index, and the features are those of ``benchmarks.Source``
(``tfds.load(...).as_numpy_iterator()`` gives, in order, what ``source[i]`` gives).
"""

import numpy as np
import tensorflow_datasets as tfds

from pvr_keras.benchmarks import catalog
from pvr_keras.benchmarks.sources import Source, task_of

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
    task = task_of(config.name)
    family = config.family
    if family == "token":
        return tfds.features.FeaturesDict({
            "tokens": tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32),
            "label": tfds.features.ClassLabel(num_classes=task.num_values),
            "pointer": np.int32,
            "window_positions": tfds.features.Tensor(shape=(task.window,), dtype=np.int32),
            "held_out": np.bool_,
        })  # fmt: skip
    if family == "boolean":
        return tfds.features.FeaturesDict({
            "bits": tfds.features.Tensor(shape=(task.num_bits,), dtype=np.int8),
            "label": np.float32,
            "pointer": np.int32,
            "frozen": np.int64,
        })  # fmt: skip
    if family == "block":
        cells = task.grid * task.grid
        return tfds.features.FeaturesDict({
            "image": tfds.features.Image(shape=task.image_shape),
            "label": tfds.features.ClassLabel(num_classes=10),
            "cell_labels": tfds.features.Tensor(shape=(cells,), dtype=np.int64),
            "held_out": np.bool_,
        })  # fmt: skip
    return tfds.features.FeaturesDict({
        "images": tfds.features.Tensor(shape=(task.seq_len, 28, 28, 1), dtype=np.uint8),
        "tokens": tfds.features.Tensor(shape=(task.seq_len,), dtype=np.int32),
        "label": tfds.features.ClassLabel(num_classes=task.num_values),
    })  # fmt: skip


class Pvr(tfds.core.GeneratorBasedBuilder):
    """Pointer Value Retrieval (Zhang, Raghu, Kleinberg, Bengio 2021) and Boolean PVR (Abbe et
    al. 2022): the canonical splits of pvr_keras's benchmark configs."""

    VERSION = tfds.core.Version(catalog.VERSION)
    RELEASE_NOTES = catalog.RELEASE_NOTES
    BUILDER_CONFIGS = [PvrConfig(benchmark=name, size=size) for name in catalog.CONFIGS
                       for size in ("standard", "small")]  # fmt: skip

    def _info(self):
        config = catalog.get(self.builder_config.benchmark)
        supervised = {"token": ("tokens", "label"), "boolean": ("bits", "label"),
                      "block": ("image", "label"), "sequence": ("images", "label")}  # fmt: skip
        return self.dataset_info_from_configs(
            features=_features(config),
            supervised_keys=supervised[config.family],
            disable_shuffling=True,  # index order: example i is source[i]
            homepage="https://arxiv.org/abs/2107.12580",
            citation="@article{zhang2021pointer, title={Pointer Value Retrieval: A new "
            "benchmark for understanding the limits of neural network generalization}, "
            "author={Zhang, Chiyuan and Raghu, Maithra and Kleinberg, Jon and Bengio, Samy}, "
            "journal={arXiv preprint arXiv:2107.12580}, year={2021}}",
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # generated locally: nothing to download
        return {split: self._generate_examples(split) for split in catalog.SPLITS}

    def _images_dir(self):
        """Where an image config's MNIST / CIFAR-10 are: this builder's data dir when they
        are prepared there, else the library's default (``TFDS_DATA_DIR``, ...)."""
        family = catalog.get(self.builder_config.benchmark).family
        if family not in ("block", "sequence"):
            return None
        from pvr_keras.data import images

        task = task_of(self.builder_config.benchmark)
        names = {"mnist", getattr(task, "values", "mnist")}
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
