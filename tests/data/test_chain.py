"""The chain kind (pvr_keras/kinds/chain/): multi-hop PVR's rule against a plain loop, the
examples' draws, the three generators bit for bit, train and test hop counts, bad input.

Backend-free: the JAX twin needs JAX, not the JAX backend (as tests/data/test_device.py).
"""

import numpy as np
import pytest

from pvr_keras import data, kinds
from pvr_keras.kinds.chain import jax_data, numpy_data
from pvr_keras.runconfig import Run
from pvr_keras.tasks import ChainTask
from tests.stats import assert_uniform

FORMS = ("conditional", "cycle")


def _reference(task, row):
    """(hops, label, chain) of one sequence, step by step."""
    row = [int(v) for v in row]
    if task.form == "cycle":
        visited, c = [], 0
        for _ in range(row[0] + 1):
            c = row[1 + c]
            visited.append(c)
        return row[0], c, visited[: row[0]]
    chain, c = [], 0
    while row[c] > c:
        c = row[c]
        chain.append(c)
    return len(chain), row[c], chain


@pytest.mark.parametrize("form", FORMS)
def test_rule_follows_the_pointers_as_a_plain_loop(form):
    task = ChainTask(length=12, hops=(1, 2, 5, 11), form=form)
    rng = np.random.default_rng(0)
    uniform = rng.integers(0, 12, (300, task.seq_len))
    climbing = np.sort(uniform, axis=1)  # long conditional chains, ties included
    made, _ = data.chain_arrays(task, 300, seed=1)
    x = np.concatenate([uniform, climbing, made])
    hops, labels, chains = task.count_hops(x), task.label(x), task.chain(x)
    assert chains.shape == (len(x), hops.max())
    for row, k, y, chain in zip(x, hops, labels, chains, strict=True):
        expected = _reference(task, row)
        assert (k, y) == expected[:2], row
        assert chain.tolist() == expected[2] + [-1] * (chains.shape[1] - k), row
    assert task.chain(x, width=14).shape == (len(x), 14)
    assert task.chain(x[:0]).shape == (0, 0)


def test_rule_example():
    task = ChainTask(length=6, hops=(2,))
    x = np.array([[2, 0, 4, 1, 3, 5], [0, 5, 5, 5, 5, 5], [5, 0, 0, 0, 0, 5]])
    assert task.label(x).tolist() == [3, 0, 5]  # 0 -> 2 -> 4 (3); no hop; 0 -> 5 (5)
    assert task.count_hops(x).tolist() == [2, 0, 1]
    assert task.chain(x).tolist() == [[2, 4], [-1, -1], [5, -1]]
    cycle = ChainTask(length=4, hops=(1, 2, 3), form="cycle")
    # The cycle 0 -> 2 -> 3 -> 1 -> 0; k = 2: three steps from 0.
    x = np.array([[2, 2, 0, 3, 1], [3, 2, 0, 3, 1]])
    assert cycle.label(x).tolist() == [1, 0]
    assert cycle.chain(x).tolist() == [[2, 3, -1], [2, 3, 1]]


@pytest.mark.parametrize("form", FORMS)
def test_examples_are_drawn_as_the_form_says(form):
    task = ChainTask(length=9, hops=(1, 3, 8), form=form)
    x, y = data.chain_arrays(task, 3000, seed=2)
    assert x.dtype == y.dtype == np.int32 and x.shape == (3000, task.seq_len)
    assert x.min() >= 0 and x.max() <= 8 and np.array_equal(task.label(x), y)
    hops, chains = task.count_hops(x), task.chain(x)
    assert set(np.unique(hops)) == {1, 3, 8}
    if form == "cycle":
        assert np.array_equal(hops, x[:, 0])
        for row in x[:, 1:]:  # one cycle through all 9 positions
            c, seen = 0, []
            for _ in range(9):
                c = row[c]
                seen.append(c)
            assert sorted(seen) == list(range(9)) and seen[-1] == 0, row
        return
    for row, k, label, chain in zip(x, hops, y, chains, strict=True):
        pointers = chain[:k]
        assert (np.diff(pointers) > 0).all() and pointers[0] == row[0] >= 1
        assert 0 <= label <= pointers[-1]


def test_hop_counts_are_uniform_over_the_splits_hops():
    task = ChainTask(length=20, hops=(1, 2, 7, 19), test_hops=(3, 4, 5))
    x, _ = data.chain_arrays(task, 20_000, seed=4)
    assert_uniform(np.searchsorted(task.hops, task.count_hops(x)), 4, "train hops")
    x, _ = data.chain_arrays(task, 20_000, seed=4, split="test")
    assert_uniform(task.count_hops(x) - 3, 3, "test hops")


def test_pointers_and_labels_are_uniform_where_they_should_be():
    """k = 1: p1 uniform in 1..L-1 and the label in 0..p1, mean k L / (2 (k + 1)): 10.0 at
    L = 40 (17.8 at k = 8); the cycle's first step is uniform in 1..L-1, and so is its label
    while k + 1 < L."""
    one = ChainTask(length=40, hops=(1,))
    x, y = data.chain_arrays(one, 20_000, seed=5)
    assert_uniform(x[:, 0] - 1, 39, "p1")
    assert (y <= x[:, 0]).all() and (y == x[:, 0]).any() and (y == 0).any()
    # The label's standard deviation is ~8.9 at k = 1, ~8.3 at k = 8: 4 standard errors.
    assert abs(y.mean() - 10.0) < 4 * 8.9 / np.sqrt(len(y)), y.mean()
    _, y = data.chain_arrays(ChainTask(length=40, hops=(8,)), 20_000, seed=5)
    assert abs(y.mean() - 8 * 40 / 18) < 4 * 8.3 / np.sqrt(len(y)), y.mean()
    cycle = ChainTask(length=40, hops=(1, 20), form="cycle")
    x, y = data.chain_arrays(cycle, 20_000, seed=6)
    assert_uniform(x[:, 1] - 1, 39, "first step")
    assert_uniform(y - 1, 39, "label")


def test_train_and_test_hops():
    task = ChainTask(length=40, hops=(1, 2, 3, 4), test_hops=(5, 6, 7, 8))
    train, _ = data.chain_arrays(task, 400, split="train", seed=0)
    test, _ = data.chain_arrays(task, 400, split="test", seed=0)
    assert set(task.count_hops(train)) == {1, 2, 3, 4}
    assert set(task.count_hops(test)) == {5, 6, 7, 8}
    same = ChainTask(length=40, hops=(4, 2, 3, 1))
    test, _ = data.chain_arrays(same, 400, split="test", seed=0)
    assert set(same.count_hops(test)) == {1, 2, 3, 4}
    assert same.hops == (1, 2, 3, 4) and same.split_hops("test") == (1, 2, 3, 4)
    assert ChainTask(length=40, hops=[1, 2, 3, 4], test_hops=(1, 2, 3, 4)) == same
    assert task.split_hops("test") == (5, 6, 7, 8) and task.max_hops == 8


def test_a_prefix_is_a_smaller_draw_and_rows_are_their_indices():
    for form in FORMS:
        task = ChainTask(length=7, hops=(1, 2, 6), form=form, test_hops=(3,))
        x, y = data.chain_arrays(task, 1000, split="test", seed=9)
        small = data.chain_arrays(task, 37, split="test", seed=9)
        np.testing.assert_array_equal(small[0], x[:37])
        np.testing.assert_array_equal(small[1], y[:37])
        index = np.array([999, 3, 500, 3])
        rows = numpy_data.chain_examples(task, index, split="test", seed=9)
        np.testing.assert_array_equal(rows[0], x[index])
        other, _ = data.chain_arrays(task, 1000, split="test", seed=10)
        assert (other != x).any(axis=1).mean() > 0.5


@pytest.mark.parametrize("form", FORMS)
def test_numpy_tfdata_and_jax_make_the_same_examples(form):
    spec = kinds.kind("chain")
    task = ChainTask(length=40, hops=(1, 3, 39), form=form, test_hops=(2, 38))
    tfdata, device = spec.stream("tfdata"), spec.stream("device")
    for split, shuffle, epochs in (("train", True, 2), ("test", False, 1)):
        kwargs = dict(split=split, seed=3, holdout=0, batch_size=40, shuffle=shuffle,
                      epochs=epochs, first_epoch=2)  # fmt: skip
        expected = [(x.numpy(), y.numpy()) for x, y in tfdata(task, 130, **kwargs)]
        got = [(np.asarray(x), np.asarray(y)) for x, y in device(task, 130, **kwargs)]
        assert len(got) == len(expected) == 4 * epochs
        for (x, y), (ex, ey) in zip(got, expected, strict=True):
            np.testing.assert_array_equal(x, ex)
            np.testing.assert_array_equal(y, ey)
        if not shuffle:  # in index order: the NumPy arrays
            x, y = data.chain_arrays(task, 130, split=split, seed=3)
            np.testing.assert_array_equal(np.concatenate([e[0] for e in expected]), x)
            np.testing.assert_array_equal(np.concatenate([e[1] for e in expected]), y)
    x, y = jax_data.chain_arrays(task, 500, split="train", seed=3)
    expected = data.chain_arrays(task, 500, split="train", seed=3)
    np.testing.assert_array_equal(x, expected[0])
    np.testing.assert_array_equal(y, expected[1])


def test_the_kind_trains_token_models():
    run = Run.make("chain", model="mlp", form="cycle", hops=[1, 2], test_hops=[5, 6])
    assert run.task == ChainTask(hops=(1, 2), form="cycle", test_hops=(5, 6))
    assert run.model_arguments()["seq_len"] == 41
    assert {k: run.model_arguments()[k] for k in ("vocab", "num_classes")} == {
        "vocab": 40, "num_classes": 40,
    }  # fmt: skip
    assert run.run_id.startswith("chain-mlp-L40-cycle-h1-2-t5-6-n10000-s0-")
    assert Run.make("chain").run_id.startswith("chain-mlp-L40-cond-h1-4-n10000-s0-")
    with pytest.raises(ValueError, match="the chain kind has no holdout"):
        Run.make("chain", holdout=1)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"length": 1}, r"^length must be an integer >= 2; received 1$"),
        ({"length": 2.0}, r"^length must be an integer >= 2; received 2.0$"),
        ({"form": "tree"}, r"^form must be one of conditional, cycle; received 'tree'$"),
        ({"hops": ()}, r"^hops must hold at least one hop count; received \(\)$"),
        ({"hops": 3}, r"^hops must be a tuple of hop counts \(integers in 1..39\); received 3$"),
        ({"hops": "12"}, r"^hops must be a tuple of hop counts"),
        ({"hops": (1, 2.5)}, r"^hops must be integers; received \(1, 2.5\)$"),
        ({"hops": (1, True)}, r"^hops must be integers; received \(1, True\)$"),
        ({"hops": (1, 1)}, r"^hops must be distinct; received \(1, 1\)$"),
        ({"hops": (0, 1)}, r"^hops must be in 1..39 \(length 40\); received \(0, 1\)$"),
        ({"hops": (-2,)}, r"^hops must be in 1..39 \(length 40\); received \(-2,\)$"),
        ({"hops": (1, 40)}, r"^k hops need k distinct pointers among positions 1..39: hops must "
                            r"be at most length - 1 = 39; received \(1, 40\)$"),
        ({"length": 3, "hops": (3,)}, r"^k hops need k distinct pointers among positions 1..2"),
        ({"hops": (1, 40), "form": "cycle"}, r"^the cycle form writes the hop count as token "
                                             r"x\[0\] in 0..39: hops must be at most"),
        ({"test_hops": (5, 40), "form": "cycle"}, r"^the cycle form writes the hop count as "
                                                  r"token x\[0\] in 0..39: test_hops must be at "
                                                  r"most length - 1 = 39; received \(5, 40\)$"),
        ({"test_hops": (5, 40)}, r"^k hops need k distinct pointers .*test_hops must be"),
        ({"test_hops": ()}, r"^test_hops must hold at least one hop count; received \(\)$"),
        ({"test_hops": (5, "6")}, r"^test_hops must be integers; received \(5, '6'\)$"),
    ],
)  # fmt: skip
def test_bad_tasks_say_what_is_wrong_in_one_line(fields, match):
    with pytest.raises(ValueError, match=match):
        ChainTask(**fields)


def test_bad_calls_say_what_is_wrong():
    task = ChainTask(length=5, hops=(1, 2))
    with pytest.raises(ValueError, match=r"x must have shape \(N, seq_len=5\)"):
        task.label(np.zeros((2, 6), int))
    with pytest.raises(ValueError, match=r"tokens must be in 0..4; received values in 0..5"):
        task.count_hops(np.array([[0, 1, 2, 3, 5]]))
    with pytest.raises(ValueError, match="whole numbers"):
        task.chain(np.array([[0.5, 1, 2, 3, 4]]))
    with pytest.raises(ValueError, match="width must be a positive integer; received 0"):
        task.chain(np.array([[1, 0, 0, 0, 0]]), width=0)
    with pytest.raises(ValueError, match="the chain kind has no holdout"):
        data.chain_arrays(task, 10, holdout=1)
    with pytest.raises(ValueError, match="split must be one of train, test"):
        data.chain_arrays(task, 10, split="valid")
    with pytest.raises(ValueError, match="num_examples must be a positive integer"):
        data.chain_arrays(task, 0)
    with pytest.raises(ValueError, match="task must be a ChainTask"):
        data.chain_arrays(object(), 10)


@pytest.mark.parametrize("module", ["numpy_data", "benchmark"])
def test_each_chain_module_imports_first_in_a_fresh_process(module):
    """``data.chain_arrays`` is re-exported lazily: a chain module imported before the data
    package (a TaskKind's reference resolved first) does not meet it half-initialised."""
    import subprocess
    import sys

    code = f"import pvr_keras.kinds.chain.{module}; from pvr_keras import data; data.chain_arrays"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
