"""Every task kind's two generators, paired by name in its spec (``TaskKind.dataset`` and its
JAX twin ``TaskKind.device``): the same examples, in the same order, over shuffled epochs, for
the train and test splits, with and without holdout. One test for every kind registered,
yours included; image kinds on ``tfds.testing.mock_data`` (the real digits: test_device_images).
"""

import pathlib

import numpy as np
import pytest
import tensorflow_datasets as tfds

from pvr_keras import kinds
from pvr_keras.data.images import clear_cache
from tests.tfds_fakes import fake_prepared

# A small task of each kind, and a holdout setting it takes.
CASES = {
    "token": ({"window": 2, "aggregation": "maj_vote"}, 2),
    "block": ({}, True),
    "sequence": ({"window": 2}, 1),
    "boolean": ({"pointer_bits": 2, "window": 3, "aggregation": "majority"}, 0b100010),
    # its holdout is its domain (the training points), in the task
    "gotu": ({"num_bits": 9, "target": "x0x1-0.5x2", "domain": "parity:0,1,8"}, 0),
    "chain": ({"length": 12, "hops": (1, 3), "test_hops": (2, 11)}, 0),
}


@pytest.fixture(scope="module")
def mock_dir(tmp_path_factory):
    root = fake_prepared(tmp_path_factory.mktemp("tfds"))
    clear_cache()
    with tfds.testing.mock_data(num_examples=300):
        yield root
    clear_cache()  # mock and real splits never mix between modules


def test_every_builtin_kind_has_a_case():
    # the built-in kinds are the folders of pvr_keras/kinds; a kind a test registered
    # (docs/extending.md's, in the same process) is not one
    folders = {p.name for p in pathlib.Path(kinds.__file__).parent.iterdir() if p.is_dir()}
    assert set(CASES) == {name for name in kinds.kind_names() if name in folders}


# Each kind without holdout, and with the holdout of its case where it has one (for gotu and
# chain the case's holdout is 0: the same streams again).
@pytest.mark.parametrize(
    "name, held_out",
    [(name, False) for name in sorted(CASES)] + [(n, True) for n in sorted(CASES) if CASES[n][1]],
)
def test_the_device_twin_makes_the_datasets_examples(name, held_out, mock_dir):
    spec = kinds.kind(name)
    if spec.device is None:
        pytest.skip(f"the {name} kind has no device twin")
    fields, holdout = CASES[name]
    task = spec.task(**fields)
    holdout = spec.check(task, holdout if held_out else 0)
    extra = {"data_dir": mock_dir} if spec.images else {}
    tfdata, device = spec.stream("tfdata"), spec.stream("device")
    for split, shuffle, epochs in (("train", True, 2), ("test", False, 1)):
        kwargs = dict(split=split, seed=3, holdout=holdout, batch_size=40, shuffle=shuffle,
                      epochs=epochs, first_epoch=2, **extra)  # fmt: skip
        expected = [(x.numpy(), y.numpy()) for x, y in tfdata(task, 130, **kwargs)]
        got = [(np.asarray(x), np.asarray(y)) for x, y in device(task, 130, **kwargs)]
        assert len(got) == len(expected) == 4 * epochs, (name, split)
        for (x, y), (ex, ey) in zip(got, expected, strict=True):
            np.testing.assert_array_equal(x, ex)
            np.testing.assert_array_equal(y, ey)
