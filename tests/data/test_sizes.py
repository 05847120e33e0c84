"""Sizes bounded before anything is allocated: a chain's length, a token task's sequence and
values, and a run's batches and tables of token values, against the memory they need (the
machine's memory is fixed here, so the rule does not depend on the machine running it)."""

import tracemalloc

import numpy as np
import pytest

from pvr_keras import checks
from pvr_keras.kinds.chain.numpy_data import chain_examples
from pvr_keras.kinds.chain.task import ChainTask
from pvr_keras.kinds.token.numpy_data import token_examples
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.runconfig import Run

MEMORY = 16 * 10**9


@pytest.fixture(autouse=True)
def machine(monkeypatch):
    """A machine of 16 GB."""
    monkeypatch.setattr(checks, "memory_bytes", lambda: MEMORY)


def _peak(draw):
    """The most memory (bytes) ``draw()`` held at once, as NumPy allocated it."""
    tracemalloc.start()
    try:
        draw()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("task", [
    ChainTask(length=20_000), ChainTask(length=20_000, form="cycle"),
    ChainTask(length=20_000, hops=(1, 19_999)),
    TokenTask(seq_len=20_001, num_values=20_000),
    TokenTask(seq_len=11, num_values=200_000, window=5, aggregation="maj_vote"),
], ids=["conditional", "cycle", "long chain", "token", "maj_vote"])  # fmt: skip
def test_the_memory_counted_for_an_example_covers_what_drawing_it_takes(task):
    draw = chain_examples if isinstance(task, ChainTask) else token_examples
    assert _peak(lambda: draw(task, np.arange(4))) <= 4 * task.example_bytes


def _refused(make, *args, **kwargs):
    """The one-line ValueError of ``make(...)``, checked to allocate (almost) nothing."""
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as raised:
            make(*args, **kwargs)
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()
    message = str(raised.value)
    assert "\n" not in message and "GB" in message and "16 GB" in message, message
    return message


@pytest.mark.parametrize("fields, word", [
    ({"length": 10**9}, "length"),
    ({"length": 10**7}, "length"),  # one example fits; a batch of them does not
    ({"length": 200_000}, "length"),  # the batches fit; L embeddings and L classes do not
], ids=["1e9", "1e7", "2e5"])  # fmt: skip
def test_a_chain_too_long_for_the_machine_is_refused_before_anything_is_drawn(fields, word):
    assert "shorter" in _refused(Run.make, "chain", **fields)
    if fields["length"] == 10**9:
        assert "length 1,000,000,000" in _refused(ChainTask, **fields)
    Run.make("chain", length=2000)  # the token MLP at L = 2,000 fits


@pytest.mark.parametrize("fields", [
    {"seq_len": 10**9, "pointer": False}, {"num_values": 10**8},
    {"num_values": 10**6, "aggregation": "maj_vote", "window": 3},  # its counts of every value
], ids=["seq_len", "num_values", "maj_vote"])  # fmt: skip
def test_a_token_task_too_large_for_the_machine_is_refused(fields):
    _refused(Run.make, "token", **fields)
    Run.make("token", num_values=1000, aggregation="maj_vote", window=3)


def test_a_reasoning_gym_chain_too_long_is_refused_in_one_line():
    reasoning_gym = pytest.importorskip("reasoning_gym")
    import pvr_keras.reasoning_gym as rgym

    rgym.register()
    message = _refused(reasoning_gym.create_dataset, "pvr_chain_l40_h1_4", length=10**9, size=1)
    assert message.startswith("pvr_chain_l40_h1_4: ")
