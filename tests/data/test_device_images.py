"""Block and image-sequence PVR on the JAX device (the kinds' jax_data): bit for bit what
block_arrays / block_dataset / sequence_arrays / sequence_dataset return.

Mechanics on ``tfds.testing.mock_data`` (random images and labels), as in test_block.py; one
check on the real digits of the prepared data dir (Figure 6 holdout pools).
"""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from pvr_keras import data
from pvr_keras.data.images import clear_cache
from pvr_keras.kinds.block import jax_data as device_images
from pvr_keras.kinds.sequence import jax_data as sequence_device
from pvr_keras.tasks import BlockTask, TokenTask
from tests.tfds_fakes import fake_prepared

MOCK_EXAMPLES = 400


@pytest.fixture(scope="module")
def mock_root(tmp_path_factory):
    return fake_prepared(tmp_path_factory.mktemp("tfds"))


@pytest.fixture
def mock_dir(mock_root):
    with tfds.testing.mock_data(num_examples=MOCK_EXAMPLES):
        yield mock_root


@pytest.fixture(scope="module", autouse=True)
def _fresh_cache():
    clear_cache()  # mock and real splits never mix between modules
    yield
    clear_cache()


def _assert_same(got, expected):
    x, y, info = got
    ex, ey, einfo = expected
    np.testing.assert_array_equal(x, ex)
    assert x.dtype == ex.dtype
    np.testing.assert_array_equal(y, ey)
    assert sorted(info) == sorted(einfo)
    for name in einfo:
        np.testing.assert_array_equal(info[name], einfo[name])


BLOCKS = [
    (BlockTask(), False),
    (BlockTask(), True),
    (BlockTask(values="cifar10", cell=34), True),
    (BlockTask(grid=3, cell=30, window=3, aggregation="median"), False),
    (BlockTask(grid=3, values="cifar10", cell=32, window=8, aggregation="maj_vote"), False),
]


# Every case with the composer a CPU picks; the batched one (other platforms) on a 2x2 grid of
# CIFAR-10 values (MNIST pointer tiled to 3 channels) and a 3x3 grid of MNIST: both grids and
# both channel counts. How an image is placed does not depend on the labels' rule or holdout.
@pytest.mark.parametrize(
    "task, holdout, compose",
    [(task, holdout, "in_place") for task, holdout in BLOCKS]
    + [(*BLOCKS[2], "batched"), (*BLOCKS[3], "batched")],
    ids=str,
)
def test_block_examples_equal_tf(mock_dir, task, holdout, compose, monkeypatch):
    # Both composers, whatever this machine's platform would pick.
    monkeypatch.setattr(device_images, "COMPOSE", compose)
    for split in ("train", "test"):
        kwargs = dict(split=split, seed=2, holdout=holdout, data_dir=mock_dir)
        _assert_same(
            device_images.block_arrays(task, 120, **kwargs), data.block_arrays(task, 120, **kwargs)
        )


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_block_stream_equals_block_dataset_over_shuffled_epochs(mock_dir, dtype):
    kwargs = dict(split="train", seed=1, batch_size=50, epochs=2, first_epoch=4, dtype=dtype)
    expected = list(data.block_dataset(BlockTask(), 230, data_dir=mock_dir, **kwargs))
    got = list(device_images.block_stream(BlockTask(), 230, data_dir=mock_dir, **kwargs))
    assert len(got) == len(expected) == 10
    for (x, y), (ex, ey) in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(x), ex.numpy())
        np.testing.assert_array_equal(np.asarray(y), ey.numpy())


@pytest.mark.parametrize(
    "task, holdout", [(TokenTask(), 0), (TokenTask(window=3, aggregation="maj_vote"), 2)]
)
def test_sequence_examples_equal_tf(mock_dir, task, holdout):
    for split in ("train", "test"):
        kwargs = dict(split=split, seed=5, holdout=holdout, data_dir=mock_dir)
        _assert_same(
            sequence_device.sequence_arrays(task, 100, **kwargs),
            data.sequence_arrays(task, 100, **kwargs),
        )


def test_real_block_holdout_equals_tf(tfds_dir):
    kwargs = dict(split="test", seed=0, holdout=True, data_dir=tfds_dir)
    _assert_same(
        device_images.block_arrays(BlockTask(), 200, **kwargs),
        data.block_arrays(BlockTask(), 200, **kwargs),
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(task=TokenTask()), "task must be a BlockTask; received TokenTask"),
        (dict(dtype="float16"), "dtype must be one of float32, uint8; received 'float16'"),
        (dict(holdout=1), "holdout must be True or False; received 1"),
        (dict(batch_size=0), "batch_size must be a positive integer; received 0"),
    ],
)
def test_bad_block_arguments_are_checked_before_loading(tmp_path, kwargs, message):
    args = dict(task=BlockTask(), split="train", seed=0, data_dir=tmp_path) | kwargs
    with pytest.raises(ValueError, match=message):
        device_images.block_stream(args.pop("task"), 10, **args)
