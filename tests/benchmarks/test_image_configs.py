"""Block and sequence configs on real MNIST: the source's rows are the tf.data composer's
examples (uint8 pixels), and the TFDS builder writes them in index order."""

import numpy as np
import pytest

from pvr_keras import benchmarks

# Each split of a config is one composer call (its images loaded, its function compiled):
# the splits that differ in how the source reads the config, not every split of each.
BLOCK_SPLITS = {
    "block/mnist-2x2": ("train", "validation"),  # validation: seed + 1 on the train stream
    "block/mnist-2x2-holdout": ("train", "test"),  # only the test split is held out
    "block/cifar10-2x2": ("test",),  # CIFAR-10 values
}


def test_block_and_sequence_sources_are_the_streams(tfds_dir):
    from pvr_keras.data import block_arrays, sequence_arrays

    for name, splits in BLOCK_SPLITS.items():
        config = benchmarks.get(name)
        for split in splits:
            seed, stream = config.stream(split)
            x, y, info = block_arrays(benchmarks.task_of(name), 12, split=stream, seed=seed,
                                      holdout=bool(config.holdout), data_dir=tfds_dir)  # fmt: skip
            rows = benchmarks.source(name, split, size="small", data_dir=tfds_dir)[:12]
            assert rows["image"].dtype == np.uint8
            np.testing.assert_array_equal(rows["image"], np.round(x * 255).astype(np.uint8))
            np.testing.assert_array_equal(rows["label"], y)
            np.testing.assert_array_equal(rows["cell_labels"], info["cell_labels"])
            assert rows["held_out"].all() == (bool(config.holdout) and split == "test")
    x, y = sequence_arrays(benchmarks.task_of("sequence/mnist"), 6, split="test", seed=0,
                           data_dir=tfds_dir)[:2]  # fmt: skip
    rows = benchmarks.source("sequence/mnist", "test", data_dir=tfds_dir)[:6]
    np.testing.assert_array_equal(rows["images"], np.round(x * 255).astype(np.uint8))
    np.testing.assert_array_equal(rows["label"], y)


@pytest.mark.slow  # composes and writes 14,000 2x2 MNIST blocks
def test_tfds_builds_a_block_config_from_the_mnist_data_dir(tfds_dir, tmp_path):
    import pvr_keras.tfds  # noqa: F401

    tfds = pytest.importorskip("tensorflow_datasets")
    test = tfds.load("pvr/block_mnist_2x2_holdout_small", split="test[:20]", data_dir=tmp_path)
    rows = list(test.as_numpy_iterator())
    mine = benchmarks.source("block/mnist-2x2-holdout", "test", size="small",
                             data_dir=tfds_dir)[:20]  # fmt: skip
    np.testing.assert_array_equal(np.stack([r["image"] for r in rows]), mine["image"])
    np.testing.assert_array_equal([r["label"] for r in rows], mine["label"])
    assert np.stack([r["label"] for r in rows]).dtype == mine["label"].dtype == np.int32
    assert all(r["held_out"] for r in rows)
