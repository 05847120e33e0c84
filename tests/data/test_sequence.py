"""sequence_dataset / sequence_arrays: token-task examples drawn as MNIST digits (Figure 2)."""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from pvr_keras import data
from pvr_keras.tasks import TokenTask
from tests.stats import assert_uniform
from tests.tfds_fakes import fake_prepared


@pytest.fixture(scope="module")
def mock_root(tmp_path_factory):
    return fake_prepared(tmp_path_factory.mktemp("tfds"), ["mnist"])


@pytest.fixture
def mock_dir(mock_root):
    with tfds.testing.mock_data(num_examples=400):
        yield mock_root


def _check(task, x, y, info, split, data_dir, tokens_seed, holdout=0):
    n = len(y)
    images, labels = data.load_images("mnist", split, data_dir=data_dir)
    assert x.shape == (n, task.seq_len, 28, 28, 1) and x.dtype == np.float32
    assert y.shape == (n,) and y.dtype == np.int32
    tokens, token_labels = data.token_arrays(
        task, n, split=split, seed=tokens_seed, holdout=holdout
    )
    np.testing.assert_array_equal(info["tokens"], tokens)
    np.testing.assert_array_equal(y, token_labels)
    np.testing.assert_array_equal(y, task.label(info["tokens"]))
    # Each position shows an image of its token's digit, pixel for pixel.
    np.testing.assert_array_equal(labels[info["image_index"]], info["tokens"])
    np.testing.assert_array_equal(np.round(x * 255).astype(np.uint8), images[info["image_index"]])


@pytest.mark.parametrize(
    "task", [TokenTask(), TokenTask(seq_len=5, num_values=4, window=2, aggregation="max")], ids=str
)
def test_tokens_labels_and_images(mock_dir, task):
    x, y, info = data.sequence_arrays(task, 40, split="train", seed=4, data_dir=mock_dir)
    _check(task, x, y, info, "train", mock_dir, tokens_seed=4)


def test_holdout_passes_to_the_tokens(mock_dir):
    task = TokenTask(window=3)
    x, y, info = data.sequence_arrays(task, 30, split="test", seed=0, holdout=2, data_dir=mock_dir)
    _check(task, x, y, info, "test", mock_dir, tokens_seed=0, holdout=2)


def test_images_uniform_within_each_digit(mock_dir):
    task = TokenTask(seq_len=11, num_values=10)
    _, _, info = data.sequence_arrays(task, 2000, split="train", seed=1, data_dir=mock_dir)
    _, labels = data.load_images("mnist", "train", data_dir=mock_dir)
    for digit in range(10):
        pool = np.flatnonzero(labels == digit)
        picked = info["image_index"][info["tokens"] == digit]
        where = np.searchsorted(pool, picked)
        assert (pool[np.minimum(where, len(pool) - 1)] == picked).all(), digit  # in the pool
        # power (>= 99% detection): one image of the digit never drawn; one image x2.4 / x0.22.
        assert_uniform(where, len(pool), f"images of digit {digit}")


def test_dataset_matches_arrays_and_token_order(mock_dir):
    task = TokenTask(window=2)
    x, y, _ = data.sequence_arrays(task, 25, split="train", seed=3, data_dir=mock_dir)
    kwargs = dict(split="train", seed=3, batch_size=10)
    plain = list(data.sequence_dataset(task, 25, shuffle=False, data_dir=mock_dir, **kwargs))
    np.testing.assert_array_equal(np.concatenate([b[0] for b in plain]), x)
    assert plain[0][0].shape == (10, 11, 28, 28, 1)
    # Shuffled epochs visit the examples in exactly token_dataset's order.
    shuffled = data.sequence_dataset(task, 25, epochs=2, data_dir=mock_dir, **kwargs)
    tokens = data.token_dataset(task, 25, epochs=2, **kwargs)
    seq_y = np.concatenate([b[1] for b in shuffled])
    np.testing.assert_array_equal(seq_y, np.concatenate([b[1] for b in tokens]))
    assert not np.array_equal(seq_y[:25], y)


def test_real_digits_from_the_matching_split(tfds_dir):
    task = TokenTask()
    for split in ("train", "test"):
        x, y, info = data.sequence_arrays(task, 100, split=split, seed=0, data_dir=tfds_dir)
        _check(task, x, y, info, split, tfds_dir, tokens_seed=0)


def test_missing_digit_is_a_clear_error(tmp_path):
    root = fake_prepared(tmp_path, ["mnist"])
    with tfds.testing.mock_data(num_examples=3):  # at most three digits present
        with pytest.raises(ValueError, match=r"has no images of digit\(s\)"):
            data.sequence_arrays(TokenTask(), 5, split="train", seed=0, data_dir=root)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"task": "tokens"}, "task must be a TokenTask; received str"),
        ({"task": TokenTask(num_values=11)}, "num_values must be <= 10; received num_values=11"),
        ({"num_examples": 0}, "num_examples must be a positive integer; received 0"),
        ({"batch_size": -2}, "batch_size must be a positive integer; received -2"),
        ({"split": "val"}, "split must be one of train, test; received 'val'"),
        ({"seed": "0"}, "seed must be a non-negative integer"),
        ({"holdout": 3}, r"holdout must be in 0..window! = 0..1"),
        ({"epochs": 0}, "epochs must be a positive integer or None; received 0"),
        ({"first_epoch": -1}, "first_epoch must be a non-negative integer; received -1"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, message):
    # Checked before any data is read: tmp_path is not a prepared data dir.
    args = {"task": TokenTask(), "num_examples": 10, "split": "train", "seed": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        data.sequence_dataset(data_dir=tmp_path, **args)
