"""The text configs as reasoning-gym datasets (``pvr_keras.reasoning_gym``): every name
registered, the seed's meaning, scoring, curricula whose levels change the rule the prompt
states, reasoning-gym's own machinery on them, and one-line errors for bad fields."""

import dataclasses
import math
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import text
from pvr_keras.kinds.boolean.task import BooleanTask
from pvr_keras.kinds.chain.task import ChainTask
from pvr_keras.kinds.token.numpy_data import token_examples
from pvr_keras.kinds.token.task import TokenTask

reasoning_gym = pytest.importorskip(
    "reasoning_gym", reason='reasoning-gym is not installed (pip install -e ".[llm]")'
)
from reasoning_gym import coaching, factory  # noqa: E402
from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext  # noqa: E402
from reasoning_gym.dataset import ReseedingDataset  # noqa: E402

import pvr_keras.reasoning_gym as rgym  # noqa: E402

CONFIGS = text.names()
NAMES = ["pvr_" + n.replace("/", "_").replace("-", "_") for n in CONFIGS]


def _sequence(question):
    """The numbers of a prompt's ``Sequence:`` line: (1, n) int64."""
    [line] = re.findall(r"^Sequence: (.*)$", question, flags=re.M)
    return np.array([[int(t) for t in line.split()]])


def _token_task(question):
    """The ``TokenTask`` a token prompt states (window, aggregation, pointer), read from its
    words alone; a window of one digit reads as ``min`` (every aggregation is that digit)."""
    one = "Look at the digit at" in question
    window = 1 if one else int(re.search(r"Look at (\d+) consecutive digits", question)[1])
    words = {"the sum of those digits modulo 10": "mod_sum", "the median": "median",
             "occurs most often": "maj_vote", "the smallest of those": "min",
             "the largest of those": "max"}  # fmt: skip
    found = [a for w, a in words.items() if w in question]
    assert len(found) == (0 if one else 1), question
    pointer = "Ignore the first digit" not in question
    return TokenTask(window=window, aggregation=found[0] if found else "min", pointer=pointer)


def _chain_task(question):
    if question.startswith("Pointer chasing on a cycle."):
        length = int(re.search(r"The other (\d+) numbers", question)[1])
        return ChainTask(length=length, hops=(1,), form="cycle")
    return ChainTask(length=int(re.search(r"Each sequence has (\d+) numbers", question)[1]),
                     hops=(1,))  # fmt: skip


def _boolean_task(question):
    """The ``BooleanTask`` a Boolean prompt states; a window of one bit reads as parity (every
    aggregation of one bit is the bit)."""
    pointer_bits = int(re.search(r"The first (\d+) are pointer bits", question)[1])
    if "Take the value bit at position p; the answer is that bit." in question:
        return BooleanTask(pointer_bits=pointer_bits, window=1, aggregation="parity")
    words = {"the product of those bits": "parity", "the sign of their sum": "majority"}
    [aggregation] = [a for w, a in words.items() if w in question]
    return BooleanTask(
        pointer_bits=pointer_bits,
        window=int(re.search(r"Take (\d+) value bits", question)[1]), aggregation=aggregation,
        window_mode="cyclic" if "wrapping around" in question else "truncated",
    )  # fmt: skip


def test_every_text_config_is_registered_under_its_name():
    assert rgym.register() == NAMES  # again: nothing new, the same names
    assert [n for n in factory.DATASETS if n.startswith("pvr_")] == NAMES
    assert {"pvr_token_w3", "pvr_token_w3_median", "pvr_token_w2_holdout1",
            "pvr_token_w2_nopointer", "pvr_boolean_f3", "pvr_boolean_f3_frozen10",
            "pvr_chain_l40_h1_4", "pvr_chain_l40_h1_4_test5_8",
            "pvr_chain_l40_cycle_h1_4"} <= set(NAMES)  # fmt: skip
    assert not {"pvr_block_mnist_2x2", "pvr_sequence_mnist"} & set(NAMES)  # no text form
    for name in NAMES:
        assert factory.DATASETS[name][0] is rgym.PvrDataset and factory.has_curriculum(name), name


@pytest.mark.parametrize("name", NAMES)
def test_create_dataset_entries_and_the_score_function_round_trip(name):
    data = reasoning_gym.create_dataset(name, seed=0, size=4)
    score = reasoning_gym.get_score_answer_fn(name)
    entries = list(data)
    assert len(data) == len(entries) == 4
    for i, entry in enumerate(entries):
        assert sorted(entry) == ["answer", "metadata", "question"]
        assert isinstance(entry["answer"], str) and data.score_answer(entry["answer"], entry) == 1
        assert score(entry["answer"], entry) == 1.0
        assert score(f"So the answer is {entry['answer']}.", entry) == 1.0  # the last number
        assert score(str(int(entry["answer"]) + 1), entry) == 0.0
        assert score("", entry) == score(None, entry) == 0.0
        metadata = entry["metadata"]
        assert (metadata["source_dataset"], metadata["source_index"]) == (name, i)
        assert metadata["config"] == CONFIGS[NAMES.index(name)] and metadata["index"] == i
        assert (metadata["version"], metadata["split"], metadata["seed"]) == ("1.0.0", "train", 0)
        assert "size" not in metadata  # text_source's size preset: this dataset has its own
        assert metadata["difficulty"] == data.config.difficulty() and metadata["difficulty"]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_configs_own_seed_gives_text_source_entries(config):
    """Item i of seed ``config.seed`` is ``text_source(config, split)[i]``, in every split."""
    seed = benchmarks.get(config).seed
    for split in benchmarks.SPLITS:
        data = reasoning_gym.create_dataset(rgym.dataset_name(config), seed=seed, split=split)
        source = benchmarks.text_source(config, split, size="small")
        for i in (0, 1, 2, 5, len(source) - 1):
            ours, theirs = data[i], source[i]
            assert (ours["question"], ours["answer"]) == (theirs["question"], theirs["answer"])
            expected = {k: v for k, v in theirs["metadata"].items() if k != "size"}
            assert expected.items() <= ours["metadata"].items()


def test_other_seeds_are_the_generators_streams_of_the_same_rule():
    """Seed s, item i: example i of the token generator's stream of seed s, past any split's
    size too; seed s's validation split is seed s + 1's training split, as in the catalog."""
    task = TokenTask(window=3)
    for seed in (1, 12345, 2**40):
        data = reasoning_gym.create_dataset("pvr_token_w3", seed=seed, size=10)
        for i in (0, 3, 299_999, 10**6):
            x, y = token_examples(task, [i], seed=seed, split="train")
            assert (_sequence(data[i]["question"]) == x).all() and data[i]["answer"] == str(y[0])
    first = [reasoning_gym.create_dataset("pvr_token_w3", seed=s, size=20) for s in (0, 1)]
    assert [e["question"] for e in first[0]] != [e["question"] for e in first[1]]
    validation = reasoning_gym.create_dataset("pvr_token_w3", seed=0, size=20, split="validation")
    assert list(validation) == [{**e, "metadata": {**e["metadata"], "split": "validation",
                                                   "seed": 0}} for e in first[1]]  # fmt: skip
    drawn = reasoning_gym.create_dataset("pvr_token_w3", size=2)  # no seed: reasoning-gym's
    assert drawn[0]["metadata"]["seed"] == drawn.seed
    assert drawn[1] == reasoning_gym.create_dataset("pvr_token_w3", seed=drawn.seed)[1]


def test_indices_are_the_streams():
    data = reasoning_gym.create_dataset("pvr_token_w3", seed=0, size=3)
    for bad in (-1, 1.0, "0", True, 2**63, 2**64 + 3):
        with pytest.raises(IndexError, match=f"an index is a non-negative integer.*{bad!r}$"):
            data[bad]
    cube = reasoning_gym.create_dataset("pvr_boolean_f3", seed=0, size=3, split="test")
    assert cube[2047]["metadata"]["index"] == 2047  # the cube's last row
    with pytest.raises(IndexError, match="a fixed set of 2,048 examples; received index 2048"):
        cube[2048]


def _levels(curriculum, start, size=48):
    """From global level ``start``: each attribute at each of its levels, the others at
    ``start``; then every attribute at each global level. Yields (levels, config)."""
    defaults = {"seed": 3, "size": size}
    for attr, definition in curriculum.attributes.items():
        for level in range(len(definition.levels)):
            curriculum.set_global_level(start)
            curriculum.set_attr_level(attr, level)
            yield {attr: level}, curriculum.generate_configuration(defaults)
    for level in range(max(len(d.levels) for d in curriculum.attributes.values())):
        curriculum.set_global_level(level)
        yield {"*": level}, curriculum.generate_configuration(defaults)


def _held(windows, task, holdout):
    """Whether each window (N, w) is one of the task's ``holdout`` held-out orders."""
    return (windows[:, None] == task.holdout_tuples(holdout)[None]).all(axis=2).any(axis=1)


def test_token_curriculum_levels_change_the_task_and_the_prompt_states_it():
    curriculum = factory.create_curriculum("pvr_token_w3")
    seen, refused = [], []
    for levels, config in _levels(curriculum, start=2):
        if config.holdout > math.factorial(config.window):  # 2 orders of a window of 1
            with pytest.raises(ValueError, match=r"^pvr_token_w3: holdout must be in 0..wind"):
                reasoning_gym.create_dataset("pvr_token_w3", **vars(config))
            refused.append((config.window, config.holdout))
            continue
        data = reasoning_gym.create_dataset("pvr_token_w3", **vars(config))
        for entry in data:
            task = _token_task(entry["question"])
            x = _sequence(entry["question"])
            assert task.window == config.window, levels
            assert task.aggregation == config.aggregation or task.window == 1, levels
            assert entry["answer"] == str(task.label(x)[0]), (levels, entry)
            window = np.take_along_axis(x[:, 1:], task.window_positions(x[:, 0]), axis=1)
            assert not _held(window, task, config.holdout).any(), levels  # none held out
        assert data[0]["metadata"]["difficulty"] == {
            "window": config.window, "aggregation": config.aggregation, "holdout": config.holdout
        }  # fmt: skip
        test = reasoning_gym.create_dataset("pvr_token_w3", **{**vars(config), "split": "test"})
        if config.holdout:  # the test split: only held-out windows
            x = np.concatenate([_sequence(e["question"]) for e in test])
            task = TokenTask(window=config.window)
            window = np.take_along_axis(x[:, 1:], task.window_positions(x[:, 0]), axis=1)
            assert _held(window, task, config.holdout).all(), levels
        seen.append((config.window, config.aggregation, config.holdout))
    assert refused == [(1, 2)]
    assert seen[:4] == [(w, "median", 2) for w in (2, 3, 4, 5)]
    assert seen[4:9] == [(3, a, 2) for a in ("min", "max", "median", "maj_vote", "mod_sum")]
    assert seen[9:13] == [(3, "median", k) for k in (0, 1, 2, 6)]
    assert seen[13:] == [(1, "min", 0), (2, "max", 1), (3, "median", 2), (4, "maj_vote", 6),
                         (5, "mod_sum", 6)]  # fmt: skip


def test_chain_curriculum_levels_change_the_hops_and_length():
    curriculum = factory.create_curriculum("pvr_chain_l40_h1_4")
    seen = []
    for levels, config in _levels(curriculum, start=0, size=128):
        data = reasoning_gym.create_dataset("pvr_chain_l40_h1_4", **vars(config))
        hops = []
        for entry in data:
            task = _chain_task(entry["question"])
            x = _sequence(entry["question"])
            assert task.length == config.length, levels
            assert entry["answer"] == str(task.label(x)[0])
            hops.append(int(task.count_hops(x)[0]))
        assert set(hops) == set(range(config.min_hops, config.max_hops + 1)), (levels, hops)
        assert data[0]["metadata"]["difficulty"] == {
            "hops": (config.min_hops, config.max_hops), "length": config.length}  # fmt: skip
        seen.append((config.min_hops, config.max_hops, config.length))
    assert seen[:8] == [(1, k, 10) for k in range(1, 9)]  # INCLUSIVE: hops 1..k
    assert seen[8:12] == [(1, 1, n) for n in (10, 20, 40, 80)]
    assert seen[12:] == [(1, 1, 10), (1, 2, 20), (1, 3, 40)] + [(1, k, 80) for k in range(4, 9)]
    # reasoning-gym's upper-bound reading of a range: hops k alone
    curriculum = factory.create_curriculum("pvr_chain_l40_cycle_h1_4")
    curriculum.set_attr_level("hops", 6)
    context = DefaultCurriculumContext(mode="upper_bound")
    config = curriculum.generate_configuration({"seed": 0, "size": 20}, context=context)
    assert (config.min_hops, config.max_hops) == (7, 7)
    for entry in reasoning_gym.create_dataset("pvr_chain_l40_cycle_h1_4", **vars(config)):
        x = _sequence(entry["question"])
        assert x[0, 0] == 7 and entry["answer"] == str(_chain_task(entry["question"]).label(x)[0])


def test_boolean_curriculum_levels_change_the_window():
    for name in ("pvr_boolean_f3", "pvr_boolean_parity3"):
        seen = []
        for levels, config in _levels(factory.create_curriculum(name), start=0):
            for entry in reasoning_gym.create_dataset(name, **vars(config)):
                task = _boolean_task(entry["question"])
                assert task.window == config.window, levels
                assert entry["answer"] == str(int(task.label(_sequence(entry["question"]))[0]))
            seen.append(config.window)
        assert seen == [1, 2, 3, 4, 5] * 2


LEVELS = {  # the levels of the axes that fit the config (the others at its own values)
    "pvr_token_w3": dict(window=[1, 2, 3, 4, 5], aggregation=["min", "max", "median",
                         "maj_vote", "mod_sum"], holdout=[0, 1, 2, 6]),  # 24 > 3!
    "pvr_token_w1": dict(holdout=[0, 1]),
    "pvr_token_w4": dict(holdout=[0, 1, 2, 6, 24]),
    "pvr_token_w2_holdout2": dict(window=[2, 3, 4, 5], holdout=[0, 1, 2]),
    "pvr_token_w3_holdout6_of123": dict(window=[3]),  # it holds out orders of 3 values
    "pvr_chain_l40_h1_4": dict(hops=list(range(1, 9)), length=[10, 20, 40, 80]),
    "pvr_boolean_f3_frozen7": dict(window=[1, 2, 3, 4, 5]),
}  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_a_curriculum_starts_at_its_first_levels_and_every_level_fits(name):
    """As reasoning-gym's curricula: at level 0 of each attribute. Each level fits the config,
    the other fields at its own values, which are levels too."""
    curriculum = factory.create_curriculum(name)
    own = factory.DATASETS[name][1]()
    for attr, definition in curriculum.attributes.items():
        assert curriculum.get_attr_level(attr) == 0
        value = getattr(own, getattr(definition, "upper_field_name", attr))
        assert value in definition.levels, (attr, value)
        assert definition.levels == LEVELS.get(name, {}).get(attr, definition.levels)
        for level in definition.levels:
            field = getattr(definition, "upper_field_name", attr)
            reasoning_gym.create_dataset(name, **{field: level}, size=1)[0]
    assert set(curriculum.attributes) == {a.name for a in own.axes}
    assert (
        own.task_config(0).build_task() == benchmarks.get(CONFIGS[NAMES.index(name)]).build_task()
    )


def test_reasoning_gyms_own_machinery_runs_on_them():
    """A curriculum experiment (a composite of versioned datasets, scored by entry id on a
    score board grouped by difficulty, then made harder), and a reseeding dataset."""
    levels = {"pvr_token_w3": {"*": 0, "window": 1}, "pvr_chain_l40_h1_4": {"*": 1}}
    config = coaching.CurriculumExperimentConfig(curricula={
        name: coaching.CurriculumAttributeConfig(attribute_levels=attributes, weight=1.0)
        for name, attributes in levels.items()})  # fmt: skip
    experiment = coaching.CurriculumExperiment("pvr", config, size=12, seed=5)
    token = experiment.composite.datasets["pvr_token_w3"]
    assert token.config.difficulty() == {"window": 2, "aggregation": "min", "holdout": 0}
    for i in range(12):
        entry = experiment.get_dataset_entry(i)
        entry_id = entry["metadata"]["entry_id"]
        assert experiment.score_answer_with_id(entry["answer"], entry_id) == 1.0
    groups = experiment.score_board.aggregate()
    assert set(groups) == {"pvr_token_w3", "pvr_chain_l40_h1_4"}
    experiment.update_difficulty("pvr_token_w3", "increment")  # all to level 2
    token = experiment.composite.datasets["pvr_token_w3"]
    assert token.config.difficulty() == {"window": 3, "aggregation": "median", "holdout": 2}
    assert _token_task(token[0]["question"]) == TokenTask(window=3, aggregation="median")

    base = reasoning_gym.create_dataset("pvr_boolean_f3", seed=9, size=3)
    again = iter(ReseedingDataset(base, chunk_size=3))
    chunks = [next(again) for _ in range(6)]
    assert chunks[3] == reasoning_gym.create_dataset("pvr_boolean_f3", seed=10, size=3)[0]
    assert pickle.loads(pickle.dumps(base))[2] == base[2]  # loader workers receive it whole


def test_a_kind_of_yours_with_a_text_form_becomes_a_dataset(monkeypatch):
    """The test kind of ``test_kind_hooks`` (a text form, a test split that is a fixed set)
    with a difficulty axis of its own: ``register`` adds its config, nothing names it."""
    from pvr_keras import kinds
    from pvr_keras.benchmarks import catalog
    from pvr_keras.kinds import spec
    from tests.benchmarks import test_kind_hooks as own

    monkeypatch.setattr(spec, "_kinds", dict(spec._kinds))
    monkeypatch.setattr(catalog, "CONFIGS", dict(catalog.CONFIGS))
    axis = kinds.DifficultyAxis("length", (3, 4, 6), "digits of a sequence")
    hooks = dataclasses.replace(own.HOOKS, text_difficulty=(axis,))
    kinds.register_kind(dataclasses.replace(own.KIND, benchmark=hooks))
    benchmarks.register_config(benchmarks.Config(f"{own.NAME}/l4", own.NAME, {"length": 4}))
    saved = dict(factory.DATASETS), dict(factory.CURRICULA)
    try:
        assert rgym.register() == [*NAMES, f"pvr_{own.NAME}_l4"]
        name = f"pvr_{own.NAME}_l4"
        source = benchmarks.text_source(f"{own.NAME}/l4", "test", size="small")
        data = reasoning_gym.create_dataset(name, seed=0, size=3, split="test")
        assert [data[i]["question"] for i in range(3)] == [source[i]["question"] for i in range(3)]
        wider = reasoning_gym.create_dataset(name, seed=0, size=3, length=6)
        assert wider[0]["question"].startswith("Read the digit that the first of 6 digits")
        assert wider[0]["metadata"]["difficulty"] == {"length": 6}
        assert factory.create_curriculum(name).attributes["length"].levels == [3, 4, 6]
        with pytest.raises(ValueError, match=rf"^{name}: size must be at most 625: the test"):
            reasoning_gym.create_dataset(name, split="test", size=626)  # 5**4 rows in all
    finally:
        for registry, before in zip((factory.DATASETS, factory.CURRICULA), saved, strict=True):
            registry.clear()
            registry.update(before)
        for suffix in ("Config", "Curriculum"):
            vars(rgym).pop(f"PvrHooksTestL4{suffix}", None)


BAD = [
    ("pvr_token_w3", dict(window=0), "window must be a positive integer; received 0"),
    ("pvr_token_w3", dict(aggregation="sum"), "aggregation must be one of mod_sum, median"),
    ("pvr_token_w3", dict(holdout=7), r"holdout must be in 0..window! = 0..6 .* received 7"),
    ("pvr_token_w3", dict(split="dev"), "split must be one of train, validation, test"),
    ("pvr_token_w3", dict(seed=-1), "seed must be a non-negative integer; received -1"),
    ("pvr_token_w3", dict(size=2.5), "size must be a non-negative integer; received 2.5"),
    ("pvr_token_w3_holdout6_of123", dict(window=4), "holdout_values must hold window=4"),
    ("pvr_chain_l40_h1_4", dict(min_hops=0), r"hops must be in 1..39 \(length 40\)"),
    ("pvr_chain_l40_h1_4", dict(max_hops=40), "hops must be at most length - 1 = 39"),
    ("pvr_chain_l40_h1_4", dict(min_hops=5, max_hops=2),
     "min_hops must be at most max_hops; received 5 and 2"),
    ("pvr_chain_l40_h1_4", dict(length=4), "hops must be at most length - 1 = 3"),
    ("pvr_boolean_f3", dict(window=9), "window must be between 1 and the 8 value bits"),
    ("pvr_boolean_f3", dict(split="test", size=3000), "size must be at most 2,048"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fields", "message"), BAD)
def test_bad_fields_raise_one_line_naming_the_dataset(name, fields, message):
    with pytest.raises(ValueError, match=f"^{name}: .*{message}") as error:
        reasoning_gym.create_dataset(name, **fields)
    assert "\n" not in str(error.value)


def _python(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    return done.returncode, done.stdout.strip(), done.stderr


def test_only_this_module_imports_reasoning_gym_and_says_how_to_install_it():
    returncode, out, err = _python(
        "import sys, pvr_keras, pvr_keras.benchmarks as b; b.text_source('token/w1', 'test')[0];"
        " print('reasoning_gym' in sys.modules)"
    )
    assert returncode == 0 and out == "False", err[-2000:]
    returncode, out, err = _python(
        "import sys; sys.modules['reasoning_gym'] = None; import pvr_keras.reasoning_gym"
    )
    assert returncode == 1
    assert err.strip().splitlines()[-1] == (
        'ImportError: pvr_keras.reasoning_gym needs reasoning-gym: pip install -e ".[llm]" (or '
        "pip install reasoning-gym)"
    )
