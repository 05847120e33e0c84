"""Boolean PVR streams: tf.data and its JAX twin, the frozen-bit holdout, the rules they follow."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from pvr_keras import data
from pvr_keras.kinds.boolean import jax_data as device_boolean
from pvr_keras.kinds.boolean.tf_data import tf_label
from pvr_keras.tasks import BOOLEAN_AGGREGATIONS, BooleanFunction, BooleanTask, f3, frozen_mask
from tests.stats import assert_uniform

REPO = pathlib.Path(__file__).resolve().parents[2]
# Every aggregation at each pointer width, windows 1 and 3; both window modes where they differ
# (window 3). A window of one bit is never cut off, so there the two modes are the same
# windows: one mode each, alternating with the pointer width.
TASKS = [
    BooleanTask(pointer_bits=p, window=w, aggregation=a, window_mode=m)
    for p in (1, 2, 3, 4)
    for w in (1, 3)
    if w <= 2**p
    for a in BOOLEAN_AGGREGATIONS
    for m in (("cyclic", "truncated") if w > 1 else (("cyclic", "truncated")[p % 2],))
]
FUNCTIONS = [
    BooleanFunction.staircase(7),
    BooleanFunction.fourier(9, {(0, 8): 1.0, (1, 2, 3): -1.25, (): 0.25}),
    BooleanFunction.of_subset(40, (0, 33, 39), "majority"),  # bits past the hash's low word
]


@pytest.mark.parametrize("task", TASKS + FUNCTIONS, ids=str)
def test_labels_equal_the_rule_on_both_generators(task):
    x, y = data.boolean_arrays(task, 3000, seed=1)
    assert x.dtype == np.int8 and y.dtype == np.float32 and x.shape == (3000, task.num_bits)
    np.testing.assert_array_equal(y, task.label(x))
    np.testing.assert_array_equal(tf_label(task, tf.constant(x[:500])).numpy(), y[:500])
    dx, dy = device_boolean.boolean_arrays(task, 3000, seed=1)
    np.testing.assert_array_equal(dx, x)
    np.testing.assert_array_equal(dy, y)


def test_bits_are_uniform_and_pairwise_independent():
    x, _ = data.boolean_arrays(BooleanFunction.of_subset(62, (0,)), 100_000, seed=5)
    ones = (x == -1).astype(np.int64)
    for j in range(62):
        assert_uniform(ones[:, j], 2, f"bit {j}")
    for a, b in ((0, 1), (31, 32), (5, 61)):
        assert_uniform(2 * ones[:, a] + ones[:, b], 4, f"bits ({a}, {b})")


def test_frozen_bits_are_plus_one_in_training_only_and_nothing_else_changes():
    task = f3()
    mask = frozen_mask((2, 7), task.num_bits)
    x, y = data.boolean_arrays(task, 20_000, seed=3, frozen=(2, 7))
    assert (x[:, [2, 7]] == 1).all()
    free = [j for j in range(11) if j not in (2, 7)]
    for j in free:
        assert_uniform((x[:, j] == -1).astype(np.int64), 2, f"bit {j}")
    np.testing.assert_array_equal(y, task.label(x))
    same, _ = data.boolean_arrays(task, 20_000, seed=3, holdout=mask)
    np.testing.assert_array_equal(same, x)
    # The test split is never frozen, and the same for every frozen set.
    test_frozen, _ = data.boolean_arrays(task, 5000, split="test", seed=3, holdout=mask)
    test_free, _ = data.boolean_arrays(task, 5000, split="test", seed=3)
    np.testing.assert_array_equal(test_frozen, test_free)
    assert (test_free[:, 2] == -1).mean() > 0.45


def test_example_i_depends_only_on_seed_split_frozen_and_i():
    task = f3()
    full, _ = data.boolean_arrays(task, 5000, seed=2, frozen=(1,))
    prefix, _ = data.boolean_arrays(task, 700, seed=2, frozen=(1,))
    np.testing.assert_array_equal(prefix, full[:700])
    batches = data.boolean_dataset(task, 5000, seed=2, holdout=2, batch_size=333, shuffle=False)
    np.testing.assert_array_equal(np.concatenate([x.numpy() for x, _ in batches]), full)
    others = [
        data.boolean_arrays(task, 5000, seed=3, frozen=(1,))[0],
        data.boolean_arrays(task, 5000, split="test", seed=2)[0],
        data.boolean_arrays(task, 5000, seed=2, frozen=(4,))[0],
    ]
    for other in others:  # other streams: the free bits agree about half the time
        agree = (other[:, [0, 2, 3, 5, 6, 8, 9, 10]] == full[:, [0, 2, 3, 5, 6, 8, 9, 10]]).mean()
        assert 0.45 < agree < 0.55


def test_shuffled_epochs_are_permutations_equal_on_both_generators():
    task = BooleanTask(pointer_bits=2, window=2, aggregation="parity")
    kwargs = dict(seed=4, holdout=1, batch_size=64, shuffle=True, epochs=2, first_epoch=5)
    tf_batches = [(x.numpy(), y.numpy()) for x, y in data.boolean_dataset(task, 300, **kwargs)]
    jax_batches = [(np.asarray(x), np.asarray(y))
                   for x, y in device_boolean.boolean_stream(task, 300, **kwargs)]  # fmt: skip
    assert len(tf_batches) == len(jax_batches) == 10
    for (x, y), (jx, jy) in zip(tf_batches, jax_batches, strict=True):
        np.testing.assert_array_equal(x, jx)
        np.testing.assert_array_equal(y, jy)
    rows, _ = data.boolean_arrays(task, 300, seed=4, frozen=(0,))
    first = np.concatenate([x for x, _ in tf_batches[:5]])
    keys = lambda a: sorted(map(bytes, a))  # noqa: E731
    assert keys(first) == keys(rows) and not (first == rows).all()


def test_same_examples_on_every_backend_and_run():
    x, y = data.boolean_arrays(f3(), 1000, seed=0, frozen=(7,))
    digest = hashlib.sha256(x.tobytes() + y.tobytes()).hexdigest()[:16]
    assert digest == GOLDEN_DIGEST


GOLDEN_DIGEST = "41204bb8e1b7b5ed"


def test_huge_dataset_streams_without_materialising():
    ds = data.boolean_dataset(f3(), 50_000_000, batch_size=1024)
    x, y = next(iter(ds))
    assert x.shape == (1024, 11) and y.shape == (1024,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_examples=0), "num_examples must be a positive integer; received 0"),
        (dict(split="valid"), "split must be one of train, test; received 'valid'"),
        (dict(seed=-1), "seed must be a non-negative integer; received -1"),
        (dict(holdout=2**11), r"must be in 0\.\.2\*\*11 - 1"),
        (dict(holdout=-1), r"must be in 0\.\.2\*\*11 - 1"),
        (dict(task="f3"), "BooleanTask, BooleanFunction or FunctionTask; received str"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(task=f3(), num_examples=10) | kwargs
    task, n = args.pop("task"), args.pop("num_examples")
    with pytest.raises(ValueError, match=match):
        data.boolean_dataset(task, n, **args)
    with pytest.raises(ValueError, match=match):
        data.boolean_arrays(task, n, **args)
    with pytest.raises(ValueError, match=match):
        device_boolean.boolean_stream(task, n, **args)


@pytest.mark.parametrize(
    "frozen, match",
    [
        ((11,), r"frozen bits must be in 0\.\.10"),
        ((3, 3), "frozen bits must be distinct"),
        (3, r"frozen is a sequence of bits, e\.g\. \(3,\)"),
    ],
)
def test_bad_frozen_bits(frozen, match):
    with pytest.raises(ValueError, match=match):
        data.boolean_arrays(f3(), 10, frozen=frozen)


def test_frozen_and_holdout_together_are_refused():
    with pytest.raises(ValueError, match="give frozen bits or holdout, not both"):
        data.boolean_arrays(f3(), 10, frozen=(1,), holdout=4)


def test_device_twin_imports_no_tensorflow():
    code = """
import json, sys
import numpy as np
from pvr_keras.kinds.boolean import jax_data as device_boolean
from pvr_keras.tasks import f3
x, y = device_boolean.boolean_stream(f3(), 5000, batch_size=1000, holdout=4)[2]
x = np.asarray(x)
ok = bool((f3().label(x) == np.asarray(y)).all() and (x[:, 2] == 1).all())
print(json.dumps({"ok": ok, "tf": "tensorflow" in sys.modules}))
"""
    env = dict(os.environ, KERAS_BACKEND="jax")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"ok": True, "tf": False}
