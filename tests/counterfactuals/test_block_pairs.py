"""Counterfactual pairs of 2x2 block PVR on real MNIST: the images are the split's own, and the
labels are the paper's rule on their cell classes (NumPy and tf.data only, no Keras model)."""

import numpy as np
import pytest

from pvr_keras import counterfactuals as cf
from pvr_keras import data
from pvr_keras.tasks import BlockTask


def rule(cells):
    """The paper's 2x2 rule, one example at a time: the top-left class points at the top-right
    cell (0-3), the bottom-left (4-6) or the bottom-right (7-9); the label is its class."""
    pointer = int(cells[0])
    return int(cells[1 if pointer <= 3 else 2 if pointer <= 6 else 3])


def interchanged(base, source, names):
    """The cells of ``base`` with the named variables taken from ``source`` (slow, obvious)."""
    cells = list(base)
    for k, name in enumerate(("TL", "TR", "BL", "BR")):
        if name in names:
            cells[k] = source[k]
    return cells


@pytest.fixture(scope="module")
def every(tfds_dir):
    """300 random (not only changing) test pairs for TR, seed 3."""
    return cf.pairs(BlockTask(), 300, "TR", seed=3, split="test", holdout=False,
                    data_dir=tfds_dir)  # fmt: skip


def test_block_pair_labels_are_the_rule_on_the_cells_of_the_images(every):
    task = BlockTask()
    assert every.base.shape == every.source.shape == (300, *task.image_shape)
    assert every.base_values.shape == every.source_values.shape == (300, 4)
    for i in range(every.n):
        base, source = every.base_values[i], every.source_values[i]
        assert every.label[i] == rule(base)
        assert every.counterfactual_label[i] == rule(interchanged(base, source, ["TR"]))
    np.testing.assert_array_equal(every.label, task.label(every.base_values))
    for variables in ("TL", "TR", "BL", "BR", ["TR", "BR"], ["TL", "TR", "BL", "BR"]):
        names = [variables] if isinstance(variables, str) else variables
        cells = zip(every.base_values, every.source_values, strict=True)
        expected = [rule(interchanged(base, source, names)) for base, source in cells]
        found = cf.label(task, every.base_values, every.source_values, variables)
        np.testing.assert_array_equal(found, expected)


def test_block_bases_are_the_splits_examples(every, tfds_dir):
    task = BlockTask()
    x, y, info = data.block_arrays(task, 300, split="test", seed=3, data_dir=tfds_dir)
    np.testing.assert_array_equal(every.base, x)  # pair i's base is example i of the split
    np.testing.assert_array_equal(every.label, y)
    np.testing.assert_array_equal(every.base_values, info["cell_labels"])
    assert not np.array_equal(every.source_values, every.base_values)  # an independent stream


def test_changing_block_pairs_are_the_random_pairs_whose_label_changes(every, tfds_dir):
    changing = cf.pairs(BlockTask(), 40, "TR", seed=3, split="test", changing=True,
                        holdout=False, data_dir=tfds_dir)  # fmt: skip
    kept = np.flatnonzero(every.label != every.counterfactual_label)[:40]
    assert len(kept) == 40  # TR changes about a third of random pairs' labels
    assert (changing.label != changing.counterfactual_label).all()
    np.testing.assert_array_equal(changing.base, every.base[kept])
    np.testing.assert_array_equal(changing.source, every.source[kept])
    np.testing.assert_array_equal(changing.counterfactual_label, every.counterfactual_label[kept])


def test_block_pairs_take_the_default_holdout(tfds_dir):
    pairs = cf.pairs(BlockTask(), 8, "TR", seed=0, split="test", data_dir=tfds_dir)
    assert pairs.n == 8
