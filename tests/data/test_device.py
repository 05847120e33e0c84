"""The JAX twin of the token streams (kinds/token/jax_data.py, data.jax_random): bit for bit
what the tf.data streams return, for the hash, the draws, the epoch orders and the examples.

Runs under both Keras backends (the device generator needs JAX, not the JAX backend).
"""

import itertools
import json
import os
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest
import tensorflow as tf

from pvr_keras import data
from pvr_keras.data import jax_random, keys
from pvr_keras.data import random as tf_random
from pvr_keras.kinds.token import jax_data as device
from pvr_keras.tasks import AGGREGATIONS, TokenTask

KEY = keys.stream_key(3, "train", 0)
REPO = pathlib.Path(__file__).resolve().parents[2]


def _u64(pair):
    hi, lo = (np.asarray(a).astype(np.uint64) for a in pair)
    return (hi << np.uint64(32)) | lo


def _pair(bits):
    bits = np.asarray(bits, np.uint64)
    return (bits >> np.uint64(32)).astype(np.uint32), (bits & np.uint64(0xFFFFFFFF)).astype(
        np.uint32
    )


def test_random_bits_equal_tf():
    rng = np.random.default_rng(0)
    index = np.concatenate([np.arange(3000), rng.integers(0, 2**31, 3000)])
    expected = tf_random.random_bits(KEY, tf.constant(index, tf.int64), 13).numpy()
    got = jax.jit(lambda i: jax_random.random_bits(KEY, i, 13))(index.astype(np.uint32))
    np.testing.assert_array_equal(_u64(got), expected)


@pytest.mark.parametrize("maxval", [1, 2, 7, 10, 11, 65_535, 65_536, 65_537, 10**6, 2**31 - 1])
def test_uniform_int_equals_tf(maxval):
    bits = np.random.default_rng(maxval).integers(0, 2**64 - 1, 20_000, dtype=np.uint64)
    expected = tf_random.uniform_int(tf.constant(bits), maxval).numpy()
    got = jax.jit(lambda h: jax_random.uniform_int(h, maxval))(_pair(bits)[0])
    np.testing.assert_array_equal(got, expected)


def _near_rounding_boundaries(maxval, rng, count=300):
    """uint64 bits whose top 53 bits m put m * maxval / 2^53 within 2 of an integer: where
    float64 rounding decides the result."""
    out = []
    for k in rng.integers(1, maxval, count):
        m0 = (int(k) << 53) // maxval
        out += [((m0 + d) << 11) | int(rng.integers(0, 2**11)) for d in (-2, -1, 0, 1, 2)]
    return [b for b in out if 0 <= b < 2**64]


@pytest.mark.parametrize(
    "maxval",
    [2**31, 2**31 + 1, 10**10 - 5, 10**10, 3**30, 2**40 + 12_345, 2**52, 21**12, 2**53 - 1]
    + [2**53],
)
def test_wide_uniform_int_equals_tf_float64_path(maxval):
    # Above 2^31 TensorFlow goes through float64; the twin rebuilds its rounding exactly.
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64)
    bits = np.concatenate([bits, np.array(_near_rounding_boundaries(maxval, rng), np.uint64)])
    exact = [(b >> 11) * maxval >> 53 for b in map(int, bits)]
    expected = tf_random.uniform_int(tf.constant(bits), maxval).numpy()
    if maxval < 2**52 and maxval & (maxval - 1):  # the boundaries really exercise rounding
        assert (expected != np.array(exact)).any()
    got = jax.jit(lambda h, lo: jax_random.uniform_wide((h, lo), maxval))(*_pair(bits))
    np.testing.assert_array_equal(_u64(got).astype(np.int64), expected)


@pytest.mark.parametrize(
    # 65_537: max_index 2^16, where TF's 16-bit block cuts index 2^16 (not a bijection).
    "num_examples",
    [1, 2, 3, 10, 1000, 65_535, 65_536, 65_537, 65_538, 131_073, 999_999, 2**24 + 1, 5 * 10**7],
)
def test_epoch_order_equals_tf_index_shuffle(num_examples):
    n = min(num_examples, 100_000)
    start = max(0, num_examples - n)
    for epoch in (0, 1, 7, 2**31 + 5):
        expected = tf_random.epoch_order(num_examples, start, n, KEY, epoch, True).numpy()
        got = jax.jit(
            lambda s, e: jax_random.epoch_order(num_examples, s, n, KEY, e, True)  # noqa: B023
        )(np.uint32(start), np.uint32(epoch % 2**32))
        np.testing.assert_array_equal(got, expected)


def test_epoch_order_is_a_permutation_that_changes_each_epoch():
    orders = [np.asarray(jax_random.epoch_order(5000, 0, 5000, KEY, e, True)) for e in range(3)]
    for order in orders:
        assert sorted(order.tolist()) == list(range(5000))
    assert (orders[0] != orders[1]).mean() > 0.99 and (orders[1] != orders[2]).mean() > 0.99


# All aggregations at windows 1, 2, 3 and 5, cycling through the modes and the pointer.
TASKS = [
    TokenTask(window=w, aggregation=a, window_mode=m, pointer=p)
    for (w, a), (m, p) in zip(
        itertools.product((1, 2, 3, 5), AGGREGATIONS),
        itertools.cycle(itertools.product(("cyclic", "restricted"), (True, False))),
        strict=False,
    )
] + [TokenTask(seq_len=6, num_values=7, window=4, aggregation="median")]


# One split per task, alternating: without holdout the split changes only the stream's key
# (test_holdout_examples_equal_tf checks both splits, whose draws differ with holdout).
@pytest.mark.parametrize(
    "task, split, seed",
    [(task, *(("train", 3), ("test", 4))[i % 2]) for i, task in enumerate(TASKS)],
    ids=str,
)
def test_token_examples_equal_tf(task, split, seed):
    x, y = device.token_arrays(task, 3000, split=split, seed=seed)
    expected_x, expected_y = data.token_arrays(task, 3000, split=split, seed=seed)
    np.testing.assert_array_equal(x, expected_x)
    np.testing.assert_array_equal(y, expected_y)
    assert x.dtype == np.int32 and y.dtype == np.int32


@pytest.mark.parametrize(
    "window, holdout, values",
    [(1, 1, None), (2, 2, None), (3, 4, None), (3, 6, (1, 2, 3)), (2, 2, (7, 4)), (4, 24, None)]
    # 10^9 codes fit an int32; 10^10 take the wide path (uint32 pairs, long division).
    + [(9, 7, None), (10, 5, None), (10, 3000, (9, 8, 7, 6, 5, 4, 3, 2, 1, 0))],
)
def test_holdout_examples_equal_tf(window, holdout, values):
    task = TokenTask(window=window, holdout_values=values)
    for split in ("train", "test"):
        x, y = device.token_arrays(task, 4000, split=split, seed=1, holdout=holdout)
        expected_x, expected_y = data.token_arrays(task, 4000, split=split, seed=1, holdout=holdout)
        np.testing.assert_array_equal(x, expected_x)
        np.testing.assert_array_equal(y, expected_y)


def _batches(stream):
    return [tuple(np.asarray(a) for a in batch) for batch in stream]


@pytest.mark.parametrize("first_epoch", [0, 3])
def test_stream_equals_token_dataset_over_shuffled_epochs(first_epoch):
    task = TokenTask(window=2, aggregation="maj_vote")
    kwargs = dict(batch_size=300, epochs=2, first_epoch=first_epoch, holdout=2, seed=9)
    expected = [(x.numpy(), y.numpy()) for x, y in data.token_dataset(task, 2100, **kwargs)]
    # Chunks of 2 batches: chunk and epoch boundaries fall inside and between epochs.
    stream = device.token_stream(task, 2100, **kwargs)._replace(chunk_examples=600)
    got = _batches(stream)
    assert len(got) == len(expected) == 2 * 7 and len(stream) == 14
    for (x, y), (ex, ey) in zip(got, expected, strict=True):
        np.testing.assert_array_equal(x, ex)
        np.testing.assert_array_equal(y, ey)


def test_reading_a_shuffled_stream_again_goes_on_to_the_next_epochs():
    # As token_dataset (pipeline.epochs_dataset): fit(stream, epochs=N) sees N orders.
    task = TokenTask(window=2)
    kwargs = dict(batch_size=64, seed=1, epochs=2)
    stream = device.token_stream(task, 300, **kwargs)
    dataset = data.token_dataset(task, 300, **kwargs)
    for _ in range(2):  # epochs 0-1, then 2-3
        got = _batches(stream)
        expected = [(x.numpy(), y.numpy()) for x, y in dataset]
        for (x, y), (ex, ey) in zip(got, expected, strict=True):
            np.testing.assert_array_equal(x, ex)
            np.testing.assert_array_equal(y, ey)
    later = _batches(device.token_stream(task, 300, first_epoch=2, **kwargs))
    np.testing.assert_array_equal(got[0][0], later[0][0])
    plain = device.token_stream(task, 300, batch_size=64, shuffle=False)
    np.testing.assert_array_equal(_batches(plain)[0][0], _batches(plain)[0][0])


def test_batches_do_not_depend_on_chunking():
    task = TokenTask(window=3)
    base = device.token_stream(task, 1000, batch_size=64, seed=2)
    reference = _batches(base._replace(chunk_examples=64))
    for chunk in (128, 1000, 32_768):
        for a, b in zip(_batches(base._replace(chunk_examples=chunk)), reference, strict=True):
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
    assert [len(b[1]) for b in reference][-2:] == [64, 1000 - 15 * 64]  # ragged last batch


def test_endless_stream_indexes_any_epoch():
    task = TokenTask()
    endless = device.token_stream(task, 500, batch_size=200, epochs=None)
    assert endless.num_batches is None
    later = device.token_stream(task, 500, batch_size=200, first_epoch=4)
    for k in range(3):  # batch 3 * 4 + k of the endless stream is batch k of epoch 4
        np.testing.assert_array_equal(np.asarray(endless[12 + k][0]), np.asarray(later[k][0]))
    with pytest.raises(IndexError, match=r"batch index must be in \[0, 3\); received 3"):
        later[3]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_examples=0), "num_examples must be a positive integer; received 0"),
        (dict(num_examples=2**31), r"num_examples must be at most 2\*\*31 - 1"),
        (dict(split="valid"), "split must be one of train, test; received 'valid'"),
        (dict(seed=-1), "seed must be a non-negative integer; received -1"),
        (dict(holdout=2), r"holdout must be in 0..window! = 0..1"),
        (dict(batch_size=0), "batch_size must be a positive integer; received 0"),
        (dict(epochs=0), "epochs must be a positive integer or None; received 0"),
        (dict(first_epoch=-1), "first_epoch must be a non-negative integer; received -1"),
        (dict(task="mod_sum"), "task must be a TokenTask; received str"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(task=TokenTask(), num_examples=10) | kwargs
    task, n = args.pop("task"), args.pop("num_examples")
    with pytest.raises(ValueError, match=match):
        device.token_stream(task, n, **args)


def test_holdout_at_the_task_limit_equals_tf():
    # 21^12 > 2^52: the float64 draw's last rounding case (53 significant bits) in play.
    task = TokenTask(seq_len=13, num_values=21, window=12)
    for split in ("train", "test"):
        x, y = device.token_arrays(task, 2000, split=split, seed=4, holdout=3)
        expected_x, expected_y = data.token_arrays(task, 2000, split=split, seed=4, holdout=3)
        np.testing.assert_array_equal(x, expected_x)
        np.testing.assert_array_equal(y, expected_y)


def test_wide_holdout_with_huge_vocabularies_is_refused_with_the_way_out():
    task = TokenTask(seq_len=3, num_values=2**16, window=2)
    with pytest.raises(ValueError, match=r"num_values < 2\^16; received 65536 \(use the tf.data"):
        device.token_stream(task, 10, holdout=1)


def test_device_input_imports_no_tensorflow():
    # The device path alone, in a fresh process: batches made, labels checked, and
    # TensorFlow never imported (so it can never claim an accelerator).
    code = """
import json, sys
import numpy as np
from pvr_keras.kinds.token import jax_data as device
from pvr_keras.tasks import TokenTask
task = TokenTask(window=2)
x, y = device.token_stream(task, 5000, batch_size=1000, holdout=1)[2]
ok = bool((task.label(np.asarray(x)) == np.asarray(y)).all())
print(json.dumps({"ok": ok, "tf": "tensorflow" in sys.modules}))
"""
    env = dict(os.environ, KERAS_BACKEND="jax")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"ok": True, "tf": False}
