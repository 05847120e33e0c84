"""What ``training.train``'s ``model.fit`` consumes: the whole split each epoch, each example
once, in a new order each epoch (batches logged inside the train step: fingerprints.py).
That a resumed run consumes the same batches as an uninterrupted one: test_resume.py."""

import numpy as np

from pvr_keras import data
from tests.training import resume_child as run
from tests.training.fingerprints import example_codes


def test_each_epoch_is_the_split_in_a_new_order(uninterrupted_run):
    _, _, batches = uninterrupted_run
    x, _ = data.token_arrays(run.TASK, run.N, seed=run.SEED)
    in_index_order = example_codes(x)
    epochs = [
        np.concatenate(batches[e * run.STEPS : (e + 1) * run.STEPS]) for e in range(run.EPOCHS)
    ]
    for epoch in epochs:  # every example of the split once
        np.testing.assert_array_equal(np.sort(epoch), np.sort(in_index_order))
        assert (epoch != in_index_order).mean() > 0.9  # shuffled
    for a in range(run.EPOCHS):
        for b in range(a):
            assert (epochs[a] != epochs[b]).mean() > 0.9, (a, b)  # a new order each epoch
