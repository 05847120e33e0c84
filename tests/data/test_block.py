"""block_dataset / block_arrays: composition, labels, jitter, determinism, holdout, errors.

Mechanics run on ``tfds.testing.mock_data`` (random images and labels, the same for train and
test); the checks that need real digits (Figure 6 holdout, images from the matching split)
read prepared real data (the ``tfds_dir`` fixture: ``TFDS_DATA_DIR``; CI points it at
its copy in ``../shared/data/tfds``).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from pvr_keras import data
from pvr_keras.data import random
from pvr_keras.kinds.block import tf_data as block_data
from pvr_keras.tasks import AGGREGATIONS, BlockTask
from tests.stats import assert_uniform
from tests.tfds_fakes import fake_prepared

MOCK_EXAMPLES = 500


@pytest.fixture(scope="module")
def mock_root(tmp_path_factory):
    return fake_prepared(tmp_path_factory.mktemp("tfds"))


@pytest.fixture
def mock_dir(mock_root):
    """A data dir served by mock_data; decoded once per module, then from the cache."""
    with tfds.testing.mock_data(num_examples=MOCK_EXAMPLES):
        yield mock_root


def _compose(task, info, split, data_dir):
    """Slow obvious reference: paste every cell's source image at its offset, one by one."""
    pointer_images, _ = data.load_images("mnist", split, data_dir=data_dir)
    value_images, _ = data.load_images(task.values, split, data_dir=data_dir)
    out = np.zeros((len(info["cell_labels"]), *task.image_shape), np.uint8)
    for i in range(len(out)):
        for k in range(task.num_cells):
            image = (pointer_images if k == 0 else value_images)[info["image_index"][i, k]]
            top = (k // task.grid) * task.cell + info["offsets"][i, k, 0]
            left = (k % task.grid) * task.cell + info["offsets"][i, k, 1]
            h, w = image.shape[:2]
            out[i, top : top + h, left : left + w] = image  # broadcasts 1 -> 3 channels
    return out


def _check_examples(task, x, y, info, split, data_dir):
    n = len(y)
    assert x.shape == (n, *task.image_shape) and x.dtype == np.float32
    assert y.shape == (n,) and y.dtype == np.int32
    assert info["cell_labels"].shape == (n, task.num_cells)
    assert info["offsets"].shape == (n, task.num_cells, 2)
    assert 0.0 <= x.min() and x.max() <= 1.0
    np.testing.assert_array_equal(
        np.round(x * 255).astype(np.uint8), _compose(task, info, split, data_dir)
    )
    _, pointer_labels = data.load_images("mnist", split, data_dir=data_dir)
    _, value_labels = data.load_images(task.values, split, data_dir=data_dir)
    np.testing.assert_array_equal(
        info["cell_labels"][:, 0], pointer_labels[info["image_index"][:, 0]]
    )
    np.testing.assert_array_equal(
        info["cell_labels"][:, 1:], value_labels[info["image_index"][:, 1:]]
    )
    np.testing.assert_array_equal(y, task.label(info["cell_labels"]))


@pytest.mark.parametrize(
    "task",
    [
        BlockTask(),
        BlockTask(values="cifar10", cell=34),
        BlockTask(grid=3, cell=30, window=3, aggregation="median"),
        BlockTask(grid=3, values="cifar10", cell=32, window=8, aggregation="maj_vote"),
    ],
    ids=str,
)
def test_pixels_offsets_and_labels_match_reference(mock_dir, task):
    x, y, info = data.block_arrays(task, 24, split="train", seed=3, data_dir=mock_dir)
    _check_examples(task, x, y, info, "train", mock_dir)


@pytest.mark.parametrize("aggregation", AGGREGATIONS)
def test_windows_follow_the_rule(mock_dir, aggregation):
    for window in (2, 3):
        task = BlockTask(grid=2, cell=28, window=window, aggregation=aggregation)
        _, y, info = data.block_arrays(task, 200, split="test", seed=1, data_dir=mock_dir)
        np.testing.assert_array_equal(y, task.label(info["cell_labels"]))


def test_jitter_is_uniform(mock_dir):
    task = BlockTask(values="cifar10", cell=36)  # pointer jitter 0..8, CIFAR jitter 0..4
    _, _, info = data.block_arrays(task, 4000, split="train", seed=0, data_dir=mock_dir)
    # power (tools/probes/stats_power.py; >= 99% detection): one offset never drawn; one offset's
    # probability x1.26 / x0.77 (pointer, 8000 draws) or x1.11 / x0.90 (CIFAR, 24000).
    assert_uniform(info["offsets"][:, 0], 9, "pointer jitter")
    assert_uniform(info["offsets"][:, 1:], 5, "CIFAR-10 jitter")


def test_every_cell_draws_every_image_uniformly(mock_dir):
    """Each cell's image index is uniform over the split's images, counted one by one."""
    task = BlockTask(cell=28)  # 2x2 MNIST, no jitter: only the image picks matter here
    key = random.stream_key(0, "train")
    examples = block_data.make_examples(task, key, "train", data_dir=mock_dir, dtype="uint8")
    batch = 5000
    picks = np.concatenate(
        [
            examples(tf.range(start, start + batch, dtype=tf.int64))["image_index"].numpy()
            for start in range(0, IMAGE_DRAWS, batch)
        ]
    )
    # power (>= 99% detection): one image never drawn by a cell (100% in simulation); one
    # image's probability x2.25 or x0.26. The old test binned 25 images: blind to a missing one.
    for k in range(task.num_cells):
        assert_uniform(picks[:, k], MOCK_EXAMPLES, f"image index of cell {k}")


IMAGE_DRAWS = 30_000  # 60 draws per image and cell: a never-drawn image has |z| ~ 7.7


def test_deterministic_and_seeded(mock_dir):
    task = BlockTask(cell=32)
    a = data.block_arrays(task, 40, split="train", seed=7, data_dir=mock_dir)
    b = data.block_arrays(task, 40, split="train", seed=7, data_dir=mock_dir)
    c = data.block_arrays(task, 40, split="train", seed=8, data_dir=mock_dir)
    d = data.block_arrays(task, 40, split="test", seed=7, data_dir=mock_dir)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[2]["offsets"], b[2]["offsets"])
    assert (a[2]["image_index"] != c[2]["image_index"]).mean() > 0.9
    assert (a[2]["image_index"] != d[2]["image_index"]).mean() > 0.9
    # Example i does not depend on how many examples the split has.
    e = data.block_arrays(task, 7, split="train", seed=7, data_dir=mock_dir)
    np.testing.assert_array_equal(a[0][:7], e[0])


def test_dataset_matches_arrays_and_shuffles_per_epoch(mock_dir):
    task = BlockTask(cell=30)
    x, y, _ = data.block_arrays(task, 30, split="train", seed=2, data_dir=mock_dir)
    kwargs = dict(split="train", seed=2, data_dir=mock_dir, batch_size=8)
    plain = list(data.block_dataset(task, 30, shuffle=False, **kwargs))
    assert [len(b[1]) for b in plain] == [8, 8, 8, 6]
    assert plain[0][0].shape == (8, 60, 60, 1) and plain[0][0].dtype == "float32"
    np.testing.assert_array_equal(np.concatenate([b[0] for b in plain]), x)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in plain]), y)

    two = list(data.block_dataset(task, 30, epochs=2, **kwargs))
    epochs = [np.concatenate([b[0] for b in two[:4]]), np.concatenate([b[0] for b in two[4:]])]
    key = x.reshape(30, -1).sum(axis=1)
    for epoch in epochs:  # every epoch is a permutation of the same 30 examples
        np.testing.assert_allclose(
            np.sort(epoch.reshape(30, -1).sum(axis=1)), np.sort(key), rtol=1e-6
        )
    assert not np.array_equal(epochs[0], epochs[1])
    resumed = list(data.block_dataset(task, 30, first_epoch=1, **kwargs))
    np.testing.assert_array_equal(np.concatenate([b[0] for b in resumed]), epochs[1])


@pytest.mark.parametrize("values", ["mnist", "cifar10"])
def test_uint8_batches_are_the_raw_pixels(mock_dir, values):
    task = BlockTask(cell=32, values=values)
    x, y, info = data.block_arrays(task, 24, split="test", seed=4, data_dir=mock_dir)
    kwargs = dict(split="test", seed=4, data_dir=mock_dir, batch_size=10, shuffle=False)
    batches = list(data.block_dataset(task, 24, dtype="uint8", **kwargs))
    raw = np.concatenate([b[0] for b in batches])
    assert raw.dtype == np.uint8 and raw.shape == (24, *task.image_shape)
    np.testing.assert_array_equal(raw, _compose(task, info, "test", mock_dir))
    np.testing.assert_array_equal(raw, np.round(x * 255).astype(np.uint8))
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), y)


def test_batches_do_not_depend_on_chunking(mock_dir, monkeypatch):
    """Composition runs in chunks of several batches; batches and epochs must not notice."""
    task = BlockTask(cell=28)
    x, y, _ = data.block_arrays(task, 130, split="test", seed=9, data_dir=mock_dir)
    kwargs = dict(split="test", seed=9, data_dir=mock_dir, batch_size=20, epochs=2)
    one_chunk = list(data.block_dataset(task, 130, **kwargs))  # 130 < CHUNK_EXAMPLES
    monkeypatch.setattr(block_data, "CHUNK_EXAMPLES", 60)  # 3 batches a chunk, ragged end
    for shuffle in (False, True):
        batches = list(data.block_dataset(task, 130, shuffle=shuffle, **kwargs))
        assert [len(b[1]) for b in batches] == [20] * 6 + [10] + [20] * 6 + [10]
        for epoch in (batches[:7], batches[7:]):
            ys = np.concatenate([b[1] for b in epoch])
            if shuffle:
                assert sorted(ys) == sorted(y)
            else:
                np.testing.assert_array_equal(np.concatenate([b[0] for b in epoch]), x)
                np.testing.assert_array_equal(ys, y)
    for got, want in zip(batches, one_chunk, strict=True):  # same shuffled order
        np.testing.assert_array_equal(got[0], want[0])


def test_holdout_mechanics(mock_dir):
    task = BlockTask(cell=28)
    for split in ("train", "test"):
        x, y, info = data.block_arrays(
            task, 300, split=split, seed=0, holdout=True, data_dir=mock_dir
        )
        _check_examples(task, x[:10], y[:10], {k: v[:10] for k, v in info.items()}, split, mock_dir)
        for k, held in enumerate(task.holdout_classes(), start=1):
            inside = np.isin(info["cell_labels"][:, k], held)
            assert inside.all() if split == "test" else not inside.any()
        assert set(info["cell_labels"][:, 0]) == set(range(10))


def test_feeds_a_keras_model(mock_dir):
    task = BlockTask(cell=28)
    ds = data.block_dataset(task, 20, split="train", seed=0, batch_size=10, data_dir=mock_dir)
    assert ds.cardinality() == 2
    model = keras.Sequential(
        [keras.Input(task.image_shape), keras.layers.Flatten(), keras.layers.Dense(10)]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, epochs=1, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_real_holdout_digit_sets_are_figure6(tfds_dir):
    task = BlockTask()
    expected = {
        "train": [set(range(10)), {0, 4, 5, 6, 7, 8, 9}, {0, 1, 2, 3, 7, 8, 9}, {1, 2, 3, 4, 5, 6}],
        "test": [set(range(10)), {1, 2, 3}, {4, 5, 6}, {7, 8, 9, 0}],
    }
    for split, sets in expected.items():
        _, y, info = data.block_arrays(
            task, 600, split=split, seed=0, holdout=True, data_dir=tfds_dir
        )
        assert [set(info["cell_labels"][:, k].tolist()) for k in range(4)] == sets
        np.testing.assert_array_equal(y, task.label(info["cell_labels"]))


@pytest.mark.parametrize("holdout", [False, True])
def test_real_images_come_from_the_matching_split(holdout, tfds_dir):
    task = BlockTask()
    for split, size in (("train", 60_000), ("test", 10_000)):
        x, y, info = data.block_arrays(
            task, 300, split=split, seed=5, holdout=holdout, data_dir=tfds_dir
        )
        assert info["image_index"].max() < size
        # Every cell holds, pixel for pixel, the image of this split at the recorded index.
        _check_examples(task, x, y, info, split, tfds_dir)
    # IID: pointers and values spread over the whole split, labels over all classes.
    if not holdout:
        assert info["image_index"].max() > 9000 and set(y.tolist()) == set(range(10))


def test_real_cifar_values_with_mnist_pointer(tfds_dir):
    task = BlockTask(values="cifar10")
    x, y, info = data.block_arrays(task, 50, split="test", seed=0, data_dir=tfds_dir)
    _check_examples(task, x, y, info, "test", tfds_dir)
    # The MNIST pointer is replicated to 3 identical channels.
    pointer = x[:, :40, :40]
    np.testing.assert_array_equal(pointer[..., 0], pointer[..., 2])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"task": "block"}, "task must be a BlockTask; received str"),
        ({"num_examples": 0}, "num_examples must be a positive integer; received 0"),
        ({"batch_size": 0}, "batch_size must be a positive integer; received 0"),
        ({"split": "valid"}, "split must be one of train, test; received 'valid'"),
        ({"seed": -1}, "seed must be a non-negative integer; received -1"),
        ({"holdout": 1}, "holdout must be True or False; received 1"),
        ({"task": BlockTask(grid=3), "holdout": True}, "2x2 grids only"),
        ({"epochs": 0}, "epochs must be a positive integer or None; received 0"),
        ({"first_epoch": -1}, "first_epoch must be a non-negative integer; received -1"),
        ({"dtype": "float16"}, "dtype must be one of float32, uint8; received 'float16'"),
    ],
)
def test_bad_dataset_arguments(tmp_path, kwargs, message):
    # Checked before any data is read: tmp_path is not a prepared data dir.
    args = {"task": BlockTask(), "num_examples": 10, "split": "train", "seed": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        data.block_dataset(data_dir=tmp_path, **args)


def test_bad_array_arguments_are_checked_before_loading(tmp_path):
    # Argument errors come first, even when the data dir is not prepared.
    with pytest.raises(ValueError, match="num_examples must be a positive integer"):
        data.block_arrays(BlockTask(), -5, split="train", seed=0, data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="tfds build mnist"):
        data.block_arrays(BlockTask(), 5, split="train", seed=0, data_dir=tmp_path)
