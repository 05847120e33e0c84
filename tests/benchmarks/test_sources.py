"""pvr_keras.benchmarks: the catalog, the NumPy sources (equal to the tf.data streams row for
row), their slices and worker splits, and that token and Boolean sources need no framework."""

import subprocess
import sys

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import catalog
from pvr_keras.data import boolean_arrays, token_arrays

HASHED = benchmarks.names("token") + benchmarks.names("boolean")


def test_catalog_names_sizes_and_streams():
    assert {"token/w1", "token/w4", "token/w3-median", "token/w3-holdout6", "token/w2-nopointer",
            "block/mnist-2x2-holdout", "sequence/mnist", "boolean/f3",
            "boolean/f3-frozen10"} <= set(benchmarks.names())  # fmt: skip
    for name in benchmarks.names():
        config = benchmarks.get(name)
        assert config.version == benchmarks.VERSION in benchmarks.RELEASE_NOTES
        assert benchmarks.task_of(name) is not None  # every task builds
        small, standard = config.sizes("small"), config.sizes("standard")
        assert all(small[s] <= standard[s] for s in benchmarks.SPLITS)
    config = benchmarks.get("token/w3:1.0.0")
    assert config.stream("train") == (0, "train") and config.stream("test") == (0, "test")
    assert config.stream("validation") == (1, "train")
    assert benchmarks.get("boolean/f3").sizes()["test"] == 2**11
    assert benchmarks.get("token/w3-median").tfds_name == "token_w3_median"


@pytest.mark.parametrize("bad, message", [
    ("token/w33", "did you mean token/w3"),
    ("token/w3:2.0.0", "no version '2.0.0'"),
    ("tokens/w3", "did you mean token/w3"),
    (3, "must be a string"),
])  # fmt: skip
def test_bad_config_names(bad, message):
    with pytest.raises(ValueError, match=message):
        benchmarks.get(bad)


def test_bad_splits_sizes_and_indices():
    with pytest.raises(ValueError, match="split must be one of train, validation, test"):
        benchmarks.source("token/w3", "dev")
    with pytest.raises(ValueError, match="size must be one of standard, small"):
        benchmarks.source("token/w3", "test", size="huge")
    test = benchmarks.source("token/w3", "test", size="small")
    for bad in (2000, -2001, np.array([0, 2000]), np.array([[0]]), np.array([0.5])):
        with pytest.raises(IndexError):
            test[bad]


def test_index_arrays_of_any_integer_dtype():
    # index + len(source) computed in the index's own dtype overflowed uint8 / int8
    test = benchmarks.source("token/w1", "test", size="small")
    want = test[np.array([200, 1999])]["tokens"]
    np.testing.assert_array_equal(test[np.array([200], np.uint8)]["tokens"], want[:1])
    np.testing.assert_array_equal(test[np.array([-1], np.int8)]["tokens"], want[1:])
    for dtype in (np.uint16, np.uint32, np.uint64, np.int16):
        np.testing.assert_array_equal(test[np.array([200, 1999], dtype)]["tokens"], want)
    # 2**64 - 1 is not -1 (an int64 cast would wrap it to the last example)
    for bad in (np.array([2**64 - 1], np.uint64), np.array([2000], np.uint16),
                np.array([-2001], np.int16)):  # fmt: skip
        with pytest.raises(IndexError):
            test[bad]


@pytest.mark.parametrize("name", ["token/w3-holdout1", "boolean/f3-frozen2", "chain/l40-h1-4"])
def test_an_index_array_is_the_items_stacked(name):
    # What a batched loader relies on (docs/benchmarks/README.md: a BatchSampler hands the
    # source a list of indices): source[indices] is source[i] for each i, stacked, in the
    # indices' order (unsorted, repeated, negative), every key with the item's dtype.
    src = benchmarks.source(name, "train", size="small")
    index = [17, 3, len(src) - 1, 3, 0, -1, len(src) // 2]
    batch, items = src[index], [src[i] for i in index]
    assert sorted(batch) == sorted(items[0])
    for key, value in src[np.array(index)].items():
        np.testing.assert_array_equal(value, batch[key], key)
    for key, value in batch.items():
        assert value.shape[0] == len(index) and value.dtype == np.asarray(items[0][key]).dtype
        np.testing.assert_array_equal(value, np.stack([item[key] for item in items]), key)


def _reference(config, split, n):
    """The first n rows of a split from the tf.data streams (the Boolean test split: the
    cube from analysis.boolean)."""
    task = benchmarks.task_of(config.name)
    seed, stream = config.stream(split)
    if config.family == "token":
        return token_arrays(task, n, split=stream, seed=seed, holdout=config.holdout)
    if split == "test":
        from pvr_keras.analysis.boolean import boolean_cube

        x = boolean_cube(task.num_bits)[:n]
        return x, task.label(x)
    return boolean_arrays(task, n, split=stream, seed=seed, holdout=config.holdout)


# One config of each kind of stream (holdout values, no pointer, an aggregation, frozen bits,
# parity): every split of every config is also checked, through its hash, against tf.data
# and JAX (test_manifest.py, test_benchmark_manifest_jax.py).
STREAMS = ["token/w3-holdout6-of123", "token/w2-holdout1", "token/w2-nopointer",
           "token/w3-maj_vote", "boolean/f3-frozen5", "boolean/parity3"]  # fmt: skip


@pytest.mark.parametrize("name", STREAMS)
def test_sources_are_the_tfdata_streams(name):
    config = benchmarks.get(name)
    for split in benchmarks.SPLITS:
        src = benchmarks.source(name, split, size="small")
        n = min(len(src), 3000)
        x, y = _reference(config, split, n)
        rows = src[:n]
        inputs = "tokens" if config.family == "token" else "bits"
        np.testing.assert_array_equal(rows[inputs], x)
        np.testing.assert_array_equal(rows["label"], y)
        assert rows[inputs].dtype == x.dtype and rows["label"].dtype == y.dtype
        # Any index array gives the same rows as the prefix (item i depends on i only).
        pick = np.random.default_rng(0).choice(n, 50, replace=False)
        for key, value in src[pick].items():
            np.testing.assert_array_equal(value, rows[key][pick])
        one = src[int(pick[0])]
        np.testing.assert_array_equal(one[inputs], x[pick[0]])


def test_token_metadata_follows_the_rule():
    """held_out, pointer and window_positions against a slow per-row reference."""
    for name in ("token/w3-holdout6-of123", "token/w2-holdout1", "token/w3", "token/w2-nopointer"):
        config = benchmarks.get(name)
        task = benchmarks.task_of(name)
        for split in ("train", "test"):
            rows = benchmarks.source(name, split, size="small")[:500]
            held = (
                {tuple(t) for t in task.holdout_tuples(config.holdout)} if config.holdout else set()
            )
            for tokens, pointer, positions, flag in zip(
                rows["tokens"],
                rows["pointer"],
                rows["window_positions"],
                rows["held_out"],
                strict=True,
            ):
                p = int(tokens[0]) if task.pointer else 0
                assert pointer == p
                expect = [(p + j) % task.num_positions for j in range(task.window)]
                assert list(positions) == expect
                assert flag == (tuple(int(tokens[1 + q]) for q in expect) in held)
            if config.holdout:  # the paper's split: test only held-out windows, train none
                assert rows["held_out"].all() == (split == "test")
                assert not rows["held_out"].any() == (split == "train")


def test_boolean_metadata():
    src = benchmarks.source("boolean/f3-frozen3", "train")
    rows = src[:]
    assert (rows["bits"][:, 3] == 1).all() and (rows["frozen"] == 8).all()
    test = benchmarks.source("boolean/f3-frozen3", "test")[:]
    assert (test["frozen"] == 0).all() and len(test["bits"]) == 2048
    assert len({tuple(r) for r in test["bits"]}) == 2048  # the whole cube


@pytest.mark.parametrize("workers", [1, 3, 4])
def test_workers_load_every_index_once(workers):
    src = benchmarks.source("token/w2", "validation", size="small")
    for shuffle in (None, 7):
        seen = [i for w in range(workers)
                for batch in src.batches(64, shuffle_seed=shuffle, epoch=2, worker=w,
                                         num_workers=workers) for i in batch]  # fmt: skip
        assert sorted(seen) == list(range(len(src)))
    first = list(src.batches(64, shuffle_seed=7, epoch=0))
    again = list(src.batches(64, shuffle_seed=7, epoch=0))
    other = list(src.batches(64, shuffle_seed=7, epoch=1))
    assert all((a == b).all() for a, b in zip(first, again, strict=True))
    assert not (first[0] == other[0]).all()  # a new order each epoch
    with pytest.raises(ValueError, match="worker must be below num_workers"):
        next(src.batches(64, worker=3, num_workers=3))
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        next(src.batches(0))


@pytest.mark.parametrize("seed", [1.7, 1.0, True, "1", -1, 2**63])
def test_a_shuffle_seed_is_an_integer_seed(seed):
    """A seed that is not one (1.7 shuffled as 1) is refused in one line."""
    src = benchmarks.source("token/w2", "validation", size="small")
    with pytest.raises(ValueError, match="shuffle_seed must be") as raised:
        next(src.batches(64, shuffle_seed=seed))
    assert "\n" not in str(raised.value) and repr(seed) in str(raised.value)


@pytest.mark.parametrize("index", [2**63, 2**64 + 3, np.uint64(2**63)])
def test_an_index_past_int64_is_named_as_given(index):
    text = benchmarks.text_source("chain/l40-h1-4", "test")
    with pytest.raises(ValueError, match=f"fit int64.*received {int(index)}$"):
        text.entries(np.array([index]) if isinstance(index, np.integer) else [index])


def test_token_and_boolean_sources_import_no_framework():
    code = ("import sys\nfrom pvr_keras import benchmarks\n"
            "benchmarks.source('token/w3-holdout6', 'train')[:10]\n"
            "benchmarks.source('boolean/f3-frozen0', 'test')[:10]\n"
            "benchmarks.text_source('token/w2', 'test')[3]\n"
            "benchmarks.score('token/w1', benchmarks.source('token/w1', 'test')[:]['label'])\n"
            "print(sorted(m for m in ('tensorflow', 'jax', 'keras')\n"
            "             if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_small_size_is_a_prefix_of_the_standard():
    for name in ("token/w3-holdout1", "boolean/f3-frozen1"):
        for split in benchmarks.SPLITS:
            small = benchmarks.source(name, split, size="small")
            standard = benchmarks.source(name, split)
            n = len(small)
            for key, value in small[:n].items():
                np.testing.assert_array_equal(value, standard[:n][key])
    assert catalog.SIZES["token"]["small"]["train"] == 20_000
