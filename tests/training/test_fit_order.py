"""What ``training.train``'s ``model.fit`` consumes: the whole split each epoch, in a new order
each epoch, and after an interruption and a resume exactly what an uninterrupted run did."""

import dataclasses

import numpy as np
import pytest

from pvr_keras import data, models, training
from pvr_keras.tasks import TokenTask
from pvr_keras.training.inputs import token_train_data
from tests.training.fingerprints import (
    BatchLog,
    Interrupted,
    Progress,
    checkpoint_arrays,
    example_codes,
    tapped,
)

TASK = TokenTask(window=2)
N, BATCH, EPOCHS, SEED = 640, 64, 3, 3
STEPS = N // BATCH
RECIPE = dataclasses.replace(
    training.TOKEN, epochs=EPOCHS, warmup_epochs=1, min_steps=0, batch_size=BATCH
)
# Results that must not depend on being interrupted: all but the wall times.
TIMES = ("epoch_seconds",)


def _train(out, log, progress):
    train_data = token_train_data(TASK, N, test_examples=256, batch_size=BATCH, seed=SEED)
    return training.train(
        lambda: tapped(models.mlp(embed_dim=4, widths=(16,)), log, progress),
        train_data,
        RECIPE,
        out,
        config={"test": "fit order"},
        seed=SEED,
        verbose=0,
        keep_checkpoint=True,
        save_model=False,  # the tapped model is for this test only
    )


def _epochs(batches):
    return [np.concatenate(batches[e * STEPS : (e + 1) * STEPS]) for e in range(EPOCHS)]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """(run folder, record, batch log) of one uninterrupted run, shared by the tests."""
    out = tmp_path_factory.mktemp("fit_order") / "full"
    log, progress = BatchLog(), Progress()
    record = _train(out, log, progress)
    assert progress.batches == len(log.batches) == STEPS * EPOCHS
    return out, record, log


def test_each_epoch_is_the_split_in_a_new_order(uninterrupted):
    _, _, log = uninterrupted
    x, _ = data.token_arrays(TASK, N, seed=SEED)
    in_index_order = example_codes(x)
    epochs = _epochs(log.batches)
    for epoch in epochs:  # every example of the split once, labels by the task's rule
        np.testing.assert_array_equal(np.sort(epoch), np.sort(in_index_order))
        assert (epoch != in_index_order).mean() > 0.9  # shuffled
    for a in range(EPOCHS):
        for b in range(a):
            assert (epochs[a] != epochs[b]).mean() > 0.9, (a, b)  # a new order each epoch


@pytest.mark.slow  # two more short trainings, ~10 s
def test_a_resumed_run_trains_on_the_same_batches_to_the_same_bits(uninterrupted, tmp_path):
    full_dir, full, full_log = uninterrupted
    expected = full_log.batches

    log = BatchLog()
    with pytest.raises(Interrupted):  # mid-epoch 1 (0-based), after its 5th batch
        _train(tmp_path / "resumed", log, Progress(stop=(1, 4)))
    progress = Progress()
    resumed = _train(tmp_path / "resumed", log, progress)
    assert resumed["resumed"] == 1 and resumed["status"] == "complete"
    # The second run restarts epoch 1 and trains on what the uninterrupted run did from there.
    assert progress.batches == STEPS * (EPOCHS - 1)
    assert len(log.batches) == STEPS + 5 + STEPS * (EPOCHS - 1)
    for got, want in zip(log.batches, expected[: STEPS + 5] + expected[STEPS:], strict=True):
        np.testing.assert_array_equal(got, want)

    # And ends in the same place, bit for bit: history, final metrics, weights, optimizer.
    for column, values in full["history"].items():
        if column not in TIMES:
            assert resumed["history"][column] == values, column
    assert resumed["final"] == full["final"]
    got, want = checkpoint_arrays(tmp_path / "resumed"), checkpoint_arrays(full_dir)
    assert sorted(got) == sorted(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
