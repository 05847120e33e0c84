"""The high-level models and counterfactual pairs, against a small copy of pyvene's causal model.

``TinyCausalModel`` follows pyvene's ``CausalModel``: variables with parents and a function
each, ``run_forward`` in causal order, and ``run_interchange``: each intervened variable takes
the value it has on its source (run forward without intervention), and the base is run forward
with those values fixed. It runs one example at a time in plain Python: the slow, obvious
reference of the vectorised ``cf.label``.
"""

import itertools

import numpy as np
import pytest

from pvr_keras import counterfactuals as cf
from pvr_keras.kinds.token.numpy_data import token_examples
from pvr_keras.tasks import AGGREGATIONS, BlockTask, BooleanTask, ChainTask, TokenTask


class TinyCausalModel:
    """pyvene's CausalModel in miniature: {variable: (parents, function)}, in causal order."""

    def __init__(self, graph):
        self.graph = graph

    def run_forward(self, inputs, intervention=None):
        values = dict(inputs)
        for name, (parents, function) in self.graph.items():
            if intervention and name in intervention:
                values[name] = intervention[name]
            elif parents:
                values[name] = function(*(values[p] for p in parents))
        return values

    def run_interchange(self, inputs, source_inputs):
        """``source_inputs``: {variable: the source input it takes its value from}."""
        fixed = {name: self.run_forward(src)[name] for name, src in source_inputs.items()}
        return self.run_forward(inputs, fixed)


def _python_rule(aggregation, values, num_values):
    values = list(values)
    if aggregation == "mod_sum":
        return sum(values) % num_values
    if aggregation == "median":
        return sorted(values)[(len(values) - 1) // 2]
    if aggregation == "maj_vote":
        counts = {v: values.count(v) for v in values}
        return min(v for v in counts if counts[v] == max(counts.values()))
    return min(values) if aggregation == "min" else max(values)


def token_model(task):
    n = task.num_positions
    graph = {"P": ((), None)}
    graph.update({f"V{i}": ((), None) for i in range(n)})
    for j in range(task.window):

        def pointed(p, *values, j=j):
            return values[((p if task.pointer else 0) + j) % n]

        graph[f"S{j}"] = (("P", *(f"V{i}" for i in range(n))), pointed)
    windows = tuple(f"S{j}" for j in range(task.window))
    graph["O"] = (windows, lambda *s: _python_rule(task.aggregation, s, task.num_values))
    return TinyCausalModel(graph)


def _inputs(x):
    return {"P": int(x[0]), **{f"V{i}": int(v) for i, v in enumerate(x[1:])}}


def _reference_labels(task, base, source, names):
    model = token_model(task)
    return np.array([
        model.run_interchange(_inputs(b), {name: _inputs(s) for name in names})["O"]
        for b, s in zip(base, source, strict=True)
    ])  # fmt: skip


TASKS = [
    *(TokenTask(window=w, aggregation=a) for w in (1, 3) for a in AGGREGATIONS),
    TokenTask(window=4, aggregation="maj_vote"),
    TokenTask(window=2, window_mode="restricted"),
    TokenTask(window=2, pointer=False),
    TokenTask(seq_len=7, num_values=6, window=2, aggregation="median"),
]


@pytest.mark.parametrize("task", TASKS, ids=str)
def test_labels_agree_with_the_causal_model_on_every_intervention(task):
    rng = np.random.default_rng(0)
    names = cf.variables(task)
    base, _ = token_examples(task, np.arange(60), seed=1, split="test")
    source, _ = token_examples(task, np.arange(60, 120), seed=1, split="test")
    singles = [[name] for name in names]
    several = [list(rng.choice(names, size=k, replace=False)) for k in (2, 3, 5) for _ in range(4)]
    for chosen in singles + several:
        expected = _reference_labels(task, base, source, chosen)
        got = cf.label(task, base, source, chosen if len(chosen) > 1 else chosen[0])
        np.testing.assert_array_equal(got, expected, err_msg=f"{task} {chosen}")


def test_variables_are_the_pinned_names():
    task = TokenTask(window=3, aggregation="mod_sum")
    assert set(cf.variables(task)) == {"P", *(f"V{i}" for i in range(10)), "S0", "S1", "S2"}
    assert set(cf.variables(BlockTask())) == {"TL", "TR", "BL", "BR"}


def test_an_intervened_window_keeps_the_sources_value_under_a_pointer_interchange():
    task = TokenTask(window=2, aggregation="mod_sum")
    base = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0]])
    source = np.array([[5, 9, 9, 9, 9, 9, 7, 9, 9, 9, 9]])
    assert cf.label(task, base, source, "P")[0] == (6 + 7) % 10  # V5 + V6 of the base
    assert cf.label(task, base, source, "S0")[0] == (7 + 2) % 10  # source's S0, base's S1
    assert cf.label(task, base, source, ["P", "S1"])[0] == (6 + 9) % 10
    assert cf.label(task, base, source, ["V0", "V1"])[0] == (9 + 9) % 10


def test_block_labels_follow_figure_3():
    task = BlockTask()
    # pointer 2 names top right; 5 bottom left; 8 bottom right.
    base = np.array([[2, 7, 1, 4], [5, 7, 1, 4], [8, 7, 1, 4]])
    source = np.array([[5, 3, 6, 0], [8, 3, 6, 0], [1, 3, 6, 0]])
    np.testing.assert_array_equal(cf.label(task, base, source, "TL"), [1, 4, 7])
    np.testing.assert_array_equal(cf.label(task, base, source, "TR"), [3, 1, 4])
    np.testing.assert_array_equal(cf.label(task, base, source, ["TL", "BR"]), [1, 0, 7])
    np.testing.assert_array_equal(cf.label(task, base, source, "BL"), [7, 6, 4])


def test_pairs_are_a_pure_function_of_their_arguments_and_the_bases_are_the_split():
    task = TokenTask(window=3)
    first = cf.pairs(task, 300, "S1", seed=4, split="train")
    again = cf.pairs(task, 300, "S1", seed=4, split="train")
    other_variable = cf.pairs(task, 300, ["P", "V2"], seed=4, split="train")
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first.base, other_variable.base)
    np.testing.assert_array_equal(first.source, other_variable.source)
    x, y = token_examples(task, np.arange(300), seed=4, split="train")
    np.testing.assert_array_equal(first.base, x)
    np.testing.assert_array_equal(first.label, y)
    np.testing.assert_array_equal(first.counterfactual_label,
                                  cf.label(task, first.base, first.source, "S1"))  # fmt: skip
    assert not np.array_equal(first.base, cf.pairs(task, 300, "S1", seed=5, split="train").base)
    assert not np.array_equal(first.base, cf.pairs(task, 300, "S1", seed=4, split="test").base)
    assert (first.base != first.source).any(axis=1).all()


def test_pairs_unpack_and_index_by_name():
    p = cf.pairs(TokenTask(), 5, "P")
    base, source, y, y_cf = p
    assert p["base"] is base and p[3] is y_cf and p["counterfactual_label"] is y_cf
    assert base.shape == source.shape == (5, 11) and y.shape == y_cf.shape == (5,)
    assert base.dtype == np.int32 and y_cf.dtype == np.int32


def test_changing_pairs_change_and_random_pairs_change_at_the_expected_rate():
    task = TokenTask(window=1)
    changing = cf.pairs(task, 2000, "V3", seed=0, changing=True)
    assert changing.n == 2000 and (changing.label != changing.counterfactual_label).all()
    # Swapping one value changes a window-1 label when the pointer names it (1/10) and the
    # source's value differs (9/10): 9% of random pairs; 20,000 pairs: sd 0.002.
    assert abs(cf.pairs(task, 20_000, "V3", seed=0).changed - 0.09) < 0.008
    # The changing pairs are the random pairs' changing ones, in order.
    random_pairs = cf.pairs(task, 30_000, "V3", seed=0)
    keep = random_pairs.label != random_pairs.counterfactual_label
    np.testing.assert_array_equal(changing.base, random_pairs.base[keep][:2000])


def test_holdout_and_restricted_tasks_draw_from_their_splits():
    task = TokenTask(window=3)
    held = cf.pairs(task, 200, "S0", seed=0, split="test", holdout=6)
    x, _ = token_examples(task, np.arange(200), seed=0, split="test", holdout=6)
    np.testing.assert_array_equal(held.base, x)
    restricted = TokenTask(window=3, window_mode="restricted")
    p = cf.pairs(restricted, 500, "P", seed=0)
    assert p.base[:, 0].max() <= 7 and p.source[:, 0].max() <= 7


BAD = [
    (dict(variables="Q"), "variables of TokenTask are P, V0"),
    (dict(variables=[]), "non-empty list"),
    (dict(variables=["P", "P"]), "distinct"),
    (dict(variables="S3"), "'S3'"),
    (dict(variables="P", n=0), "n must be"),
    (dict(variables="P", split="valid"), "split"),
    (dict(variables="P", changing="yes"), "changing must be True or False"),
    (dict(variables="P", seed=-1), "seed"),
    (dict(variables="P", holdout=7), "holdout must be in 0..window!"),
]


@pytest.mark.parametrize("kwargs, message", BAD, ids=[m for _, m in BAD])
def test_bad_requests_are_refused_in_one_line(kwargs, message):
    kwargs = {"n": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        cf.pairs(TokenTask(window=3), **kwargs)


@pytest.mark.parametrize("task", [BooleanTask(), ChainTask(), BlockTask(grid=3)], ids=str)
def test_kinds_without_a_high_level_model_are_refused(task):
    with pytest.raises(ValueError, match="counterfactuals (have a high-level model|take 2x2)"):
        cf.variables(task)
    with pytest.raises(ValueError, match="counterfactuals"):
        cf.pairs(task, 4, "P")


def test_an_interchange_the_label_ignores_has_no_changing_pairs():
    with pytest.raises(ValueError, match="no pair of the first .* changes the label"):
        cf.pairs(TokenTask(pointer=False), 10, "P", changing=True)


def test_label_checks_its_inputs():
    task = TokenTask(window=2)
    good = np.zeros((3, 11), int)
    with pytest.raises(ValueError, match="shape"):
        cf.label(task, good[:, :5], good, "P")
    with pytest.raises(ValueError, match="tokens must be in 0..9"):
        cf.label(task, good, good + 10, "P")
    with pytest.raises(ValueError, match="same number of examples"):
        cf.label(task, good, good[:2], "P")
    with pytest.raises(ValueError, match="cell classes"):
        cf.label(BlockTask(), np.zeros((2, 4)), np.full((2, 4), 11), "TL")


def test_pairs_exhaust_no_tuple_order():
    # Every window position of a window-3 task is read: each S_j and each V at distance j from
    # the pointer changes some label.
    task = TokenTask(window=3)
    for name in ("S0", "S1", "S2"):
        assert cf.pairs(task, 2000, name).changed > 0.8
    assert list(itertools.islice(cf.variables(task), 1)) == ["P"]


def test_a_pointer_less_task_ignores_position_0_as_its_label_does():
    task = TokenTask(window=2, pointer=False)
    rng = np.random.default_rng(1)
    base, source = rng.integers(0, 10, (2, 200, 11))
    np.testing.assert_array_equal(cf.label(task, base, source, "P"), task.label(base))
    swapped = base.copy()
    swapped[:, 1] = source[:, 1]
    np.testing.assert_array_equal(cf.label(task, base, source, "V0"), task.label(swapped))


def test_a_block_task_takes_figure_6s_holdout_flag():
    with pytest.raises(ValueError, match="holdout must be True or False; received 2"):
        cf.pairs(BlockTask(), 4, "TR", holdout=2)
    from pvr_keras.counterfactuals.pairs import _check_holdout

    assert _check_holdout(BlockTask(), 0) is False  # the default of every kind: none
