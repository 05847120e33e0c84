"""Aggregations as tables: one per backend with the same names, and aggregations of your own
(a file's ``Aggregation``, by reference) on NumPy, tf.data and the JAX device, checked."""

import dataclasses
import pathlib

import numpy as np
import pytest

from pvr_keras import registry
from pvr_keras.errors import UntrustedCode
from pvr_keras.kinds.boolean import jax_data as device_boolean
from pvr_keras.kinds.boolean import tf_data as boolean_data
from pvr_keras.kinds.token import jax_data as device
from pvr_keras.kinds.token import tf_data as token
from pvr_keras.runconfig import Run
from pvr_keras.tasks import AGGREGATIONS, BOOLEAN_AGGREGATIONS, BooleanTask, TokenTask
from pvr_keras.tasks import aggregations as aggs
from tests import scripts

REPO = pathlib.Path(__file__).resolve().parents[2]

AGGS = """
import numpy as np

from pvr_keras.tasks import Aggregation


def second_max(window, num_values, xp):
    return xp.sort(window, axis=1)[:, -2]


def sum_of_squares(window, num_values, xp):
    return xp.sum(window * window, axis=1) % num_values


SECOND_MAX = Aggregation(rule=second_max)
SQUARES = Aggregation(numpy=lambda w, v: sum_of_squares(w, v, np),
                      tensorflow=lambda w, v: second_max(w, v, __import__("tensorflow")
                                                         .experimental.numpy),
                      jax=lambda w, v: sum_of_squares(w, v, __import__("jax").numpy))
JAX_OFF = Aggregation(numpy=lambda w, v: sum_of_squares(w, v, np),
                      tensorflow=lambda w, v: sum_of_squares(w, v, __import__("tensorflow")
                                                             .experimental.numpy),
                      jax=lambda w, v: (sum_of_squares(w, v, __import__("jax").numpy) + 1) % v)
TOO_BIG = Aggregation(rule=lambda window, num_values, xp: xp.max(window, axis=1) + 1)
ANY_TRUE = Aggregation(rule=lambda window, present, xp: xp.max(xp.where(present, window, -1.0),
                                                              axis=1), family="boolean")
NOT_ONE = 3
"""


@pytest.fixture
def in_project(tmp_path, monkeypatch):
    (tmp_path / "my_aggs.py").write_text(AGGS)
    monkeypatch.chdir(tmp_path)
    aggs._CHECKED.clear()
    return tmp_path


def test_every_backend_table_has_the_names_of_one_list():
    assert tuple(aggs.NUMPY) == AGGREGATIONS == tuple(token.TF_RULES) == tuple(device.JAX_RULES)
    assert (tuple(aggs.NUMPY_BOOLEAN) == BOOLEAN_AGGREGATIONS == tuple(boolean_data.TF_RULES)
            == tuple(device_boolean.JAX_RULES))  # fmt: skip
    # The flags' choices and the token sweep's axis are that list.
    [field] = [f for f in dataclasses.fields(TokenTask) if f.name == "aggregation"]
    assert field.metadata["choices"] == AGGREGATIONS
    assert scripts.load("recipes/token_sweep.py").ALL_AGGREGATIONS == AGGREGATIONS


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="one of mod_sum, median, maj_vote, min, max or a ref"):
        TokenTask(aggregation="second_max")
    with pytest.raises(ValueError, match="one of parity, majority, min, max or a reference"):
        BooleanTask(aggregation="median")
    with pytest.raises(ValueError, match="no such file"):
        TokenTask(aggregation="missing.py:second_max")


def test_your_aggregation_makes_the_same_examples_on_every_backend(in_project):
    task = TokenTask(window=3, aggregation="./my_aggs.py:SECOND_MAX")
    assert task.aggregation == "my_aggs.py:SECOND_MAX"  # one file, one identity
    x, y = token.token_arrays(task, 3000, seed=1)
    assert (np.sort(x[:, 1:4], axis=1)[:, -2] == y)[x[:, 0] == 0].all()  # pointer 0: x[1:4]
    assert (task.label(x) == y).all()
    jx, jy = device.token_arrays(task, 3000, seed=1)
    assert (jx == x).all() and (jy == y).all()
    # Only the labels changed: the tokens are the built-in task's.
    bx, _ = token.token_arrays(TokenTask(window=3), 3000, seed=1)
    assert (bx == x).all()


def test_backends_that_disagree_are_refused_before_any_example(in_project):
    task = TokenTask(window=3, aggregation="my_aggs.py:SQUARES")
    with pytest.raises(ValueError, match=r"SQUARES: its tensorflow rule disagrees with its "
                                         r"NumPy rule: for the window \["):  # fmt: skip
        token.token_dataset(task, 100)
    device.token_stream(task, 100)  # its JAX rule agrees
    with pytest.raises(ValueError, match="JAX_OFF: its jax rule disagrees"):
        device.token_stream(TokenTask(window=2, aggregation="my_aggs.py:JAX_OFF"), 100)


def test_labels_out_of_range_are_refused(in_project):
    task = TokenTask(window=2, aggregation="my_aggs.py:TOO_BIG")
    message = r"TOO_BIG must return integer labels in 0\.\.9; it returned 10 for the window"
    with pytest.raises(ValueError, match=message):
        task.label(np.full((4, 11), 9))
    with pytest.raises(ValueError, match=message):
        device.token_stream(task, 100)


def test_a_reference_to_something_else_is_refused(in_project):
    with pytest.raises(ValueError, match="NOT_ONE is not an Aggregation"):
        TokenTask(aggregation="my_aggs.py:NOT_ONE").label(np.zeros((1, 11), int))
    with pytest.raises(ValueError, match="is a boolean aggregation; this task needs token"):
        TokenTask(aggregation="my_aggs.py:ANY_TRUE").label(np.zeros((1, 11), int))
    with pytest.raises(ValueError, match="needs a rule for every backend: .* tensorflow, jax"):
        aggs.Aggregation(numpy=np.max)


def test_a_boolean_aggregation_of_yours(in_project):
    task = BooleanTask(pointer_bits=2, window=3, aggregation="my_aggs.py:ANY_TRUE",
                       window_mode="truncated")  # fmt: skip
    x, y = boolean_data.boolean_arrays(task, 500)
    assert (task.label(x) == y).all()
    jx, jy = device_boolean.boolean_arrays(task, 500)
    assert (jx == x).all() and (jy == y).all()
    same = BooleanTask(pointer_bits=2, window=3, aggregation="max", window_mode="truncated")
    assert (same.label(x) == y).all()


def test_it_is_in_the_run_identity(in_project):
    run = Run.make("token", aggregation="my_aggs.py:SECOND_MAX", window=2)
    assert run.to_dict()["aggregation"] == "my_aggs.py:SECOND_MAX"
    assert "-w2-SECOND_MAX-" in run.run_id
    assert run.run_id != Run.make("token", window=2, aggregation="max").run_id


def test_a_record_naming_an_aggregation_imports_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    (tmp_path / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from pvr_keras.tasks import Aggregation\nA = Aggregation(rule=lambda w, v, xp: w[:, 0])\n"
    )
    monkeypatch.chdir(tmp_path)
    with registry.reading("a record"):
        task = TokenTask(aggregation="evil.py:A")  # read: checked, not imported
    with pytest.raises(UntrustedCode, match="names code a record gave, not you"):
        task.label(np.zeros((1, 11), int))
    with pytest.raises(UntrustedCode):
        token.token_dataset(task, 10)
    assert not marker.exists()
    registry.trust("evil.py:A")  # named by the user: imported
    assert task.label(np.zeros((1, 11), int)).tolist() == [0]
    assert marker.exists()


def test_a_results_line_naming_an_aggregation_trusts_nothing(tmp_path, monkeypatch):
    """A run read back from a results line (``legacy.from_line``, as the tools do) outside
    any ``reading`` block still does not make the file it names the user's: labelling its
    examples refuses, and the file is never imported."""
    from pvr_keras import legacy
    from pvr_keras.errors import UntrustedCode
    from pvr_keras.kinds.token import tf_data as token

    marker = tmp_path / "imported"
    (tmp_path / "theirs.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from pvr_keras.tasks.aggregations import Aggregation\n"
        "RULE = Aggregation(rule=lambda window, num_values, xp: xp.max(window, axis=1))\n"
    )
    monkeypatch.chdir(tmp_path)
    line = {"id": "x", "model": "mlp", "window": 2, "aggregation": "theirs.py:RULE",
            "num_examples": 100, "seed": 0, "test_accuracy": 0.5}  # fmt: skip
    run = legacy.from_line(line)
    with pytest.raises(UntrustedCode):
        token.token_arrays(run.task, 10)
    assert not marker.exists()


@pytest.mark.parametrize("family", ["token", "boolean"])
@pytest.mark.parametrize("dtype", [complex, "m8[s]", object])
def test_labels_that_are_not_real_numbers_are_refused(family, dtype):
    """Complex labels would be cut to their real part, timedelta64 ones (an integer to
    NumPy) pass a range check: a rule of yours returning them is refused."""
    window = np.zeros((3, 2), np.int64)
    with pytest.raises(ValueError, match="MINE must be real numbers"):
        aggs.check_labels("MINE", np.ones(3, dtype), window, 10, family)
