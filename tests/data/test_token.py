import hashlib
import itertools

import numpy as np
import pytest
import tensorflow as tf

from pvr_keras import data
from pvr_keras.kinds.token.tf_data import tf_label
from pvr_keras.tasks import AGGREGATIONS, TokenTask
from tests.stats import assert_counts_uniform, assert_uniform, bincount

# Every aggregation at windows 1 to 4, cycling through the window modes and the pointer (as
# tests/data/test_device.py does): each window and each aggregation meets every mode and
# pointer setting. The aggregation reads only the window's values, which the mode and the
# pointer place; every call costs about the same whatever its size (the pipeline's tracing),
# so the full product (80 tasks) took four times as long for no other code path.
ALL_TASKS = [
    TokenTask(window=w, aggregation=a, window_mode=m, pointer=p)
    for (w, a), (m, p) in zip(
        itertools.product((1, 2, 3, 4), AGGREGATIONS),
        itertools.cycle(itertools.product(("cyclic", "restricted"), (True, False))),
        strict=False,
    )
]


@pytest.mark.parametrize("task", ALL_TASKS, ids=str)
def test_pipeline_labels_equal_numpy_rule(task):
    x, y = data.token_arrays(task, 100_000, seed=3)
    np.testing.assert_array_equal(y, task.label(x))
    # The same TF rule run eagerly (outside Dataset.map) agrees too.
    np.testing.assert_array_equal(tf_label(task, tf.constant(x[:2000])).numpy(), y[:2000])


def test_shapes_and_dtypes():
    ds = data.token_dataset(TokenTask(), 2500, batch_size=1000, shuffle=False)
    shapes = [(x.shape, y.shape, x.dtype, y.dtype) for x, y in ds]
    assert [s[0] for s in shapes] == [(1000, 11), (1000, 11), (500, 11)]
    assert {(s[2], s[3]) for s in shapes} == {(tf.int32, tf.int32)}


def test_tokens_and_pointer_uniform_and_independent():
    x, _ = data.token_arrays(TokenTask(), 200_000, seed=11)
    # power (tools/probes/stats_power.py; >= 99% detection): one value's probability x1.05 or x0.95
    # for the pointer and each position; x1.17 or x0.84 for one pair of the 100 below.
    assert_uniform(x[:, 0], 10, "pointer")
    for position in range(1, 11):
        assert_uniform(x[:, position], 10, f"token at position {position}")
    # Pairs of positions (pointer with a value, neighbouring values) are jointly uniform.
    for a, b in ((0, 1), (1, 2), (5, 10)):
        assert_uniform(x[:, a] * 10 + x[:, b], 100, f"pair ({a}, {b})")


def test_restricted_and_pointerless_pointers():
    x, _ = data.token_arrays(TokenTask(window=4, window_mode="restricted"), 50_000)
    # A pointer >= 7 fails outright; power: one pointer value x1.09 or x0.92.
    assert_uniform(x[:, 0], 7, "restricted pointer")
    x, _ = data.token_arrays(TokenTask(pointer=False), 1000)
    assert (x[:, 0] == 0).all()


def _windows(task, x):
    positions = task.window_positions(x[:, 0])
    return np.take_along_axis(x[:, 1:], positions, axis=1)


@pytest.mark.parametrize(
    "window, holdout, values",
    [(1, 1, None), (2, 1, None), (2, 2, None), (3, 1, None), (3, 4, None), (3, 6, None)]
    # Appendix E: the permutations of (1, 2, 3); and a tuple that is not sorted.
    + [(3, 6, (1, 2, 3)), (3, 2, (1, 2, 3)), (2, 2, (7, 4))],
)
def test_holdout_splits(window, holdout, values):
    task = TokenTask(window=window, holdout_values=values)
    held = {tuple(t) for t in task.holdout_tuples(holdout)}
    assert len(held) == holdout
    assert all(sorted(t) == sorted(task.held_out_base) for t in held)
    x, y = data.token_arrays(task, 100_000, split="train", holdout=holdout, seed=5)
    train_windows = _windows(task, x)
    assert not any(tuple(w) in held for w in train_windows.tolist())
    np.testing.assert_array_equal(y, task.label(x))
    # Train windows are uniform over the allowed windows (the exact conditional law).
    codes = train_windows @ (10 ** np.arange(window - 1, -1, -1))
    counts = bincount(codes, 10**window, "train window codes")
    allowed = np.ones(10**window, bool)
    for t in held:
        allowed[int("".join(map(str, t)))] = False
    assert (counts[~allowed] == 0).all()
    # power: one allowed window never drawn is caught at every window (100% in simulation,
    # 100k draws); one allowed window's probability x1.07 / x0.93 at window 1, x1.25 / x0.78
    # at window 2 and x1.92 / x0.37 at window 3 (~1000 windows, ~100 draws each).
    assert_counts_uniform(counts[allowed], "train windows")
    # Pointer and tokens outside the window stay uniform. power: one value x1.07 / x0.93
    # (pointer), x1.03 / x0.97 (tokens outside the window).
    assert_uniform(x[:, 0], 10, "train pointer")
    outside = np.ones_like(x[:, 1:], bool)
    np.put_along_axis(outside, task.window_positions(x[:, 0]), False, axis=1)
    assert_uniform(x[:, 1:][outside], 10, "train tokens outside the window")

    xt, yt = data.token_arrays(task, 30_000, split="test", holdout=holdout, seed=5)
    test_windows = [tuple(w) for w in _windows(task, xt).tolist()]
    assert all(w in held for w in test_windows)
    counts = [test_windows.count(t) for t in sorted(held)]
    assert max(counts) - min(counts) <= 1  # evenly spread over the k held-out tuples
    np.testing.assert_array_equal(yt, task.label(xt))
    assert_uniform(xt[:, 0], 10, "test pointer")  # power: one value x1.14 / x0.87
    outside = np.ones_like(xt[:, 1:], bool)
    np.put_along_axis(outside, task.window_positions(xt[:, 0]), False, axis=1)
    assert_uniform(xt[:, 1:][outside], 10, "test tokens outside the window")


def test_holdout_values_keep_default_streams_and_key_their_own():
    default = TokenTask(window=3)
    spelled = TokenTask(window=3, holdout_values=(0, 1, 2))
    assert spelled == default and spelled.holdout_values is None
    other = TokenTask(window=3, holdout_values=(1, 2, 3))
    assert other.holdout_tuples(2).tolist() == [[1, 2, 3], [1, 3, 2]]
    # holdout 0 ignores the tuple: the IID stream is the same.
    np.testing.assert_array_equal(
        data.token_arrays(other, 500, seed=1)[0], data.token_arrays(default, 500, seed=1)[0]
    )
    # With a holdout the other tuple is another stream.
    a = data.token_arrays(other, 500, seed=1, holdout=6)[0]
    b = data.token_arrays(default, 500, seed=1, holdout=6)[0]
    assert (a != b).mean() > 0.5


@pytest.mark.parametrize(
    "values, message",
    [
        ((1, 2), "window=3 distinct"),
        ((1, 1, 2), "window=3 distinct"),
        ((1, 2, 10), "0..9"),
        ((1, 2, -1), "must be a non-negative integer"),
        ("123", "tuple of 3"),
        ((1, 2, 2.5), "integer"),
    ],
)
def test_bad_holdout_values(values, message):
    with pytest.raises(ValueError, match=message):
        TokenTask(window=3, holdout_values=values)


def test_every_permutation_of_a_long_window_held_out():
    """window 7, k = 7! = 5040: one binary search per draw (it was one graph op per code)."""
    task = TokenTask(window=7)
    held = {tuple(t) for t in task.holdout_tuples(5040)}
    x, y = data.token_arrays(task, 3000, split="train", holdout=5040, seed=2)
    assert not any(tuple(w) in held for w in _windows(task, x).tolist())
    np.testing.assert_array_equal(y, task.label(x))
    xt, _ = data.token_arrays(task, 5040, split="test", holdout=5040, seed=2)
    assert {tuple(w) for w in _windows(task, xt).tolist()} == held  # each once


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(first_epoch=-3), "first_epoch must be a non-negative integer; received -3"),
        (dict(first_epoch=1.5), "first_epoch must be a non-negative integer"),
        (dict(epochs=0), "epochs must be a positive integer or None; received 0"),
    ],
)
def test_bad_schedule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        data.token_dataset(TokenTask(), 10, **kwargs)


def test_determinism_and_independent_streams():
    task = TokenTask(window=2)
    x1, y1 = data.token_arrays(task, 3000, seed=7)
    x2, y2 = data.token_arrays(task, 3000, seed=7)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    x_other_seed, _ = data.token_arrays(task, 3000, seed=8)
    x_test, _ = data.token_arrays(task, 3000, split="test", seed=7)
    assert (x1 != x_other_seed).any(axis=1).mean() > 0.99
    assert (x1 != x_test).any(axis=1).mean() > 0.99
    # A prefix of a larger set is the smaller set: example i depends on i only.
    x_big, _ = data.token_arrays(task, 5000, seed=7)
    np.testing.assert_array_equal(x_big[:3000], x1)


def _epoch_rows(ds):
    return np.concatenate([x.numpy() for x, _ in ds])


def test_shuffle_is_a_permutation_that_changes_each_epoch():
    task = TokenTask()
    n = 5000
    plain = _epoch_rows(data.token_dataset(task, n, batch_size=512, shuffle=False))
    two_epochs = _epoch_rows(data.token_dataset(task, n, batch_size=512, epochs=2))
    first, second = two_epochs[:n], two_epochs[n:]
    key = lambda rows: sorted(map(tuple, rows.tolist()))  # noqa: E731
    assert key(first) == key(plain) == key(second)  # the same N examples every epoch
    assert (first != plain).any() and (first != second).any()  # in a new order
    # A resumed run starting at epoch 1 sees exactly the second epoch.
    resumed = _epoch_rows(data.token_dataset(task, n, batch_size=512, first_epoch=1))
    np.testing.assert_array_equal(resumed, second)


def test_same_examples_on_every_backend_and_run():
    # A fixed checksum: this test runs under both Keras backends in CI, and on every machine.
    x, y = data.token_arrays(TokenTask(window=3), 1000, seed=0, holdout=2)
    digest = hashlib.sha256(x.tobytes() + y.tobytes()).hexdigest()[:16]
    assert digest == GOLDEN_DIGEST


GOLDEN_DIGEST = "48f54af4b731d37a"


def test_huge_dataset_streams_without_materialising():
    ds = data.token_dataset(TokenTask(), 50_000_000, batch_size=1024)
    x, y = next(iter(ds))
    assert x.shape == (1024, 11)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_examples=0), "num_examples must be a positive integer; received 0"),
        (dict(split="valid"), "split must be one of train, test; received 'valid'"),
        (dict(seed=-1), "seed must be a non-negative integer; received -1"),
        (dict(holdout=2), r"holdout must be in 0..window! = 0..1"),
        (dict(batch_size=0), "batch_size must be a positive integer; received 0"),
        (dict(task="mod_sum"), "task must be a TokenTask; received str"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(task=TokenTask(), num_examples=10) | kwargs
    task, n = args.pop("task"), args.pop("num_examples")
    with pytest.raises(ValueError, match=match):
        data.token_dataset(task, n, **args)
    if "batch_size" not in args:
        with pytest.raises(ValueError, match=match):
            data.token_arrays(task, n, **args)


def test_arrays_say_how_much_memory_they_need_and_seeds_do_not_alias(monkeypatch):
    import os

    with pytest.raises(ValueError, match="num_examples must be at most 2..31 - 1"):
        data.token_arrays(TokenTask(), 2**40)
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 2**20}  # a machine of 4.3 GB
    monkeypatch.setattr(os, "sysconf", pages.__getitem__)
    with pytest.raises(ValueError, match=r"token_arrays of 100,000,000 examples needs about "
                       r"9.6 GB, more than half of this machine's 4 GB"):  # fmt: skip
        data.token_arrays(TokenTask(), 10**8)
    monkeypatch.undo()
    for seed in (2**63, 2**64):  # seed 2**64 gave seed 0's examples
        with pytest.raises(ValueError, match="seed must be below 2..63"):
            data.token_arrays(TokenTask(), 5, seed=seed)
