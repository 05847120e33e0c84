"""A kind becomes a benchmark family through its ``BenchmarkHooks`` alone: a kind of the
test's own gets sources, text, scores and its configs listed with no edit of
``pvr_keras/benchmarks`` or ``pvr_keras/tfds.py``, and no code there compares a kind with a
kind's name or reaches into another module's private names."""

import ast
import dataclasses
import pathlib

import numpy as np
import pytest

from pvr_keras import benchmarks, kinds
from pvr_keras.benchmarks import catalog
from pvr_keras.hyperparams import TOKEN
from pvr_keras.kinds import spec

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = __name__  # the hooks below are named by reference, "tests.benchmarks.test_kind_hooks:f"
NAME = "hooks_test"  # a kind's name no code of the library knows


@dataclasses.dataclass(frozen=True)
class ShiftTask:
    """x of ``length`` digits 0..4; the label is the digit at position x[0] mod (length-1) + 1."""

    length: int = 4

    @property
    def num_classes(self):
        return 5

    def label(self, x):
        return x[np.arange(len(x)), x[:, 0] % (self.length - 1) + 1]


def rows(source, index):
    digits = ((index[:, None] * 7 + np.arange(source.task.length) * 3 + source.seed) % 5).astype(
        np.int16
    )
    return {"digits": digits, "label": source.task.label(digits), "first": digits[:, 0] % 2}


def whole(task):
    return 5**task.length


def text_rule(task):
    return f"Read the digit that the first of {task.length} digits points at."


def text_sequence(row):
    return ",".join(str(int(d)) for d in row["digits"])


HOOKS = kinds.BenchmarkHooks(
    sizes={"standard": dict(train=40, validation=10, test=None),
           "small": dict(train=20, validation=10, test=30)},
    supervised=("digits", "label"),
    rows=f"{HERE}:rows",
    whole=f"{HERE}:whole",
    text_rule=f"{HERE}:text_rule",
    text_sequence=f"{HERE}:text_sequence",
    slices=("first",),
)  # fmt: skip
KIND = kinds.TaskKind(name=NAME, task=ShiftTask, models="token", recipe=TOKEN,
                      dataset=f"{HERE}:rows", arrays=f"{HERE}:rows", model_arguments=dict,
                      check=lambda task, holdout: holdout, benchmark=HOOKS)  # fmt: skip


@pytest.fixture
def registered(monkeypatch):
    """The test's kind and one config of it, registered for this test only."""
    monkeypatch.setattr(spec, "_kinds", dict(spec._kinds))
    monkeypatch.setattr(catalog, "CONFIGS", dict(catalog.CONFIGS))
    kinds.register_kind(KIND)
    return benchmarks.register_config(benchmarks.Config(f"{NAME}/l4", NAME, {"length": 4}))


def test_a_kind_with_hooks_is_a_family_of_configs(registered):
    names = benchmarks.names()
    assert names[-1] == f"{NAME}/l4" and benchmarks.names(NAME) == [f"{NAME}/l4"]
    config = benchmarks.get(f"{NAME}/l4")
    assert config is registered and config.family == config.kind == NAME
    assert benchmarks.SIZES[NAME] is HOOKS.sizes and NAME in catalog.families()
    assert config.sizes() == dict(train=40, validation=10, test=5**4)  # None: whole(task)
    assert config.sizes("small") == dict(train=20, validation=10, test=30)
    assert benchmarks.task_of(f"{NAME}/l4") == ShiftTask(4)

    test = benchmarks.source(f"{NAME}/l4", "test", size="small")
    assert len(test) == 30 and sorted(test[0]) == ["digits", "first", "label"]
    batch = test[[2, 5]]
    assert batch["digits"].dtype == np.int16 and batch["digits"].shape == (2, 4)
    np.testing.assert_array_equal(batch["label"], ShiftTask(4).label(batch["digits"]))
    np.testing.assert_array_equal(test[5]["digits"], batch["digits"][1])
    # validation is the train stream of seed + 1: other rows than train's
    train, validation = (benchmarks.source(f"{NAME}/l4", s)[:10] for s in ("train", "validation"))
    assert not np.array_equal(train["digits"], validation["digits"])

    entries = benchmarks.text_source(f"{NAME}/l4", "test", size="small")[:3]
    row = test[1]
    assert entries[1]["question"] == (
        "Read the digit that the first of 4 digits points at.\nSequence: "
        + ",".join(map(str, row["digits"])) + "\nAnswer:"
    )  # fmt: skip
    assert entries[1]["answer"] == str(int(row["label"]))
    metadata = {"config": f"{NAME}/l4", "version": "1.0.0", "split": "test", "size": "small",
                "index": 1, "first": int(row["first"])}  # fmt: skip
    assert entries[1]["metadata"] == metadata

    every = test[:]
    report = benchmarks.score(f"{NAME}/l4", every["label"], size="small")
    assert report["accuracy"] == 1.0 and report["sha256"] is None  # not hashed
    assert set(report["per_first"]) == {0, 1}  # the kind's slice
    with pytest.raises(ValueError, match=r"class ids must be in 0..4"):  # its 5 classes
        benchmarks.score(f"{NAME}/l4", np.full(30, 5), size="small")


def test_configs_are_checked_when_registered(registered):
    config = benchmarks.Config(f"{NAME}/l4", NAME, {"length": 5})
    with pytest.raises(ValueError, match=f"config '{NAME}/l4' is registered already"):
        benchmarks.register_config(config)
    with pytest.raises(ValueError, match="the gotu kind has no benchmark configs"):
        benchmarks.register_config(benchmarks.Config("gotu/d5", "gotu", {}))
    with pytest.raises(ValueError, match="a config name is kind/short-name"):
        benchmarks.register_config(benchmarks.Config("No Slash", NAME, {}))
    with pytest.raises(ValueError, match="register_config takes a Config"):
        benchmarks.register_config(f"{NAME}/l5")
    assert benchmarks.names(NAME) == [f"{NAME}/l4"]


def test_hooks_are_checked():
    with pytest.raises(ValueError, match="BenchmarkHooks.rows must be a 'module:function'"):
        kinds.BenchmarkHooks(sizes={"small": {"test": 3}}, supervised=("x", "y"), rows=rows)
    with pytest.raises(ValueError, match="BenchmarkHooks.whole must be a 'module:function'"):
        dataclasses.replace(HOOKS, whole=None)  # a size of None needs whole
    with pytest.raises(ValueError, match="needs both text_rule and text_sequence"):
        dataclasses.replace(HOOKS, text_sequence=None)
    with pytest.raises(ValueError, match="benchmark must be a BenchmarkHooks"):
        dataclasses.replace(KIND, benchmark={"sizes": {}})
    axis = kinds.DifficultyAxis("length", (3, 4))
    with pytest.raises(ValueError, match="text_difficulty must be a tuple of DifficultyAxis"):
        dataclasses.replace(HOOKS, text_difficulty=("length",))
    with pytest.raises(ValueError, match="text_difficulty is for a text form"):
        dataclasses.replace(HOOKS, text_rule=None, text_sequence=None, text_difficulty=(axis,))
    with pytest.raises(ValueError, match="text_difficulty names an axis twice"):
        dataclasses.replace(HOOKS, text_difficulty=(axis, axis))
    with pytest.raises(ValueError, match="levels must be a tuple of distinct values"):
        kinds.DifficultyAxis("length", (3, 3))
    with pytest.raises(ValueError, match="the levels of a span axis are integers"):
        kinds.DifficultyAxis("hops", (1, 2.5), span=True)
    with pytest.raises(ValueError, match="DifficultyAxis.name must be a field name"):
        kinds.DifficultyAxis("min-hops", (1, 2))


def _library(path):
    return path.relative_to(REPO).as_posix()


def test_the_benchmark_layer_names_no_kind_and_no_private_name():
    """No comparison with a kind's name (``family == "token"``, ``kind in ("token",
    "boolean")``), and no ``module._name`` of a library module, in benchmarks/, tfds.py and
    reasoning_gym.py: what differs between kinds is their hooks'."""
    kind_names = set(kinds.kind_names())

    def names_a_kind(node):
        if isinstance(node, ast.Constant):
            return node.value in kind_names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(names_a_kind(e) for e in node.elts)
        return False

    files = [*sorted((REPO / "pvr_keras" / "benchmarks").glob("*.py")),
             REPO / "pvr_keras" / "tfds.py", REPO / "pvr_keras" / "reasoning_gym.py"]  # fmt: skip
    found = []
    for path in files:
        tree = ast.parse(path.read_text())
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pvr_keras"):
                modules.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Import):
                modules.update(
                    a.asname or a.name for a in node.names if a.name.startswith("pvr_keras")
                )
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                names_a_kind(side) for side in [node.left, *node.comparators]
            ):
                found.append(f"{_library(path)}:{node.lineno} compares with a kind's name")
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):  # fmt: skip
                found.append(f"{_library(path)}:{node.lineno} reaches {node.value.id}.{node.attr}")
    assert not found, "\n".join(found)


def test_a_kind_may_declare_its_configs_in_its_hooks(monkeypatch):
    """``BenchmarkHooks.configs``: a kind that cannot import the catalog (one at the kinds
    layer) declares its configs as data, and the catalog lists them once it registers."""
    monkeypatch.setattr(spec, "_kinds", dict(spec._kinds))
    monkeypatch.setattr(catalog, "CONFIGS", dict(catalog.CONFIGS))
    declared = dataclasses.replace(
        HOOKS, configs=(dict(name=f"{NAME}/l5", task={"length": 5}, description="five"),)
    )
    kinds.register_kind(dataclasses.replace(KIND, benchmark=declared))
    assert benchmarks.names(NAME) == [f"{NAME}/l5"]
    config = benchmarks.get(f"{NAME}/l5")
    assert (config.kind, config.task, config.description) == (NAME, {"length": 5}, "five")
    assert benchmarks.source(f"{NAME}/l5", "train", size="small")[0]["digits"].shape == (5,)
    for bad in ((dict(task={}),), (dict(name="x/y", task={}, kind=NAME),), [], ("x/y",)):
        with pytest.raises(ValueError, match="configs must be a tuple of dicts of Config"):
            dataclasses.replace(HOOKS, configs=bad)
