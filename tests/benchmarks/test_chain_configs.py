"""The chain kind's benchmark configs (``chain/...``, declared in pvr_keras/kinds/chain/kind.py,
hooks in pvr_keras/kinds/chain/benchmark.py): listed by the catalog, their rows are
``data.chain_arrays`` and the rule, the generalisation config tests on hops 5-8, the text form
parses back, scores come per hop count beside the exact majority-class baseline, and the
committed manifest holds their splits."""

import math
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from pvr_keras import benchmarks, data, kinds
from pvr_keras.benchmarks import catalog, hashes
from pvr_keras.kinds.chain import benchmark as hooks
from pvr_keras.tasks import ChainTask

NAMES = ["chain/l40-h1-4", "chain/l40-h1-4-test5-8", "chain/l40-cycle-h1-4"]


def test_the_configs_are_listed_from_the_kind():
    assert benchmarks.names("chain") == NAMES and "chain" in catalog.families()
    declared = kinds.kind("chain").benchmark.configs
    assert [c["name"] for c in declared] == NAMES
    tasks = [benchmarks.task_of(n) for n in NAMES]
    assert tasks == [ChainTask(40, (1, 2, 3, 4)),
                     ChainTask(40, (1, 2, 3, 4), test_hops=(5, 6, 7, 8)),
                     ChainTask(40, (1, 2, 3, 4), form="cycle")]  # fmt: skip
    for name in NAMES:
        config = benchmarks.get(name)
        assert config.kind == "chain" and config.version == benchmarks.VERSION
        assert config.sizes() == dict(train=300_000, validation=10_000, test=10_000)
        assert config.sizes("small") == dict(train=20_000, validation=2_000, test=2_000)
    assert benchmarks.get(NAMES[1]).tfds_name == "chain_l40_h1_4_test5_8"


def test_declared_configs_come_back_after_the_catalog_is_replaced(monkeypatch):
    """The catalog adds a kind's declared configs whenever they are missing (not once)."""
    monkeypatch.setattr(catalog, "CONFIGS", {})
    assert benchmarks.names() == NAMES
    with pytest.raises(ValueError, match="configs must be a tuple of dicts"):
        kinds.BenchmarkHooks(sizes={"small": {"test": 3}}, supervised=("x", "y"), rows="m:rows",
                             configs=(dict(name="x/y", task={}, kind="x"),))  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_rows_are_chain_arrays_and_the_rule(name):
    config, task = benchmarks.get(name), benchmarks.task_of(name)
    for split in benchmarks.SPLITS:
        src = benchmarks.source(name, split, size="small")
        seed, stream = config.stream(split)
        x, y = data.chain_arrays(task, len(src), split=stream, seed=seed)
        rows = src[:]
        assert sorted(rows) == ["chain", "hops", "label", "tokens"]
        assert all(v.dtype == np.int32 for v in rows.values())
        np.testing.assert_array_equal(rows["tokens"], x)
        np.testing.assert_array_equal(rows["label"], y)
        np.testing.assert_array_equal(rows["label"], task.label(x))
        np.testing.assert_array_equal(rows["hops"], task.count_hops(x))
        np.testing.assert_array_equal(rows["chain"], task.chain(x, task.max_hops))
        pick = np.random.default_rng(1).choice(len(src), 40, replace=False)
        for key, value in src[pick].items():  # item i depends on i only
            np.testing.assert_array_equal(value, rows[key][pick])
    standard = benchmarks.source(name, "test")[:2000]  # small is a prefix of standard
    np.testing.assert_array_equal(standard["tokens"], rows["tokens"])
    train, validation = (benchmarks.source(name, s, size="small")[:50]["tokens"]
                         for s in ("train", "validation"))  # fmt: skip
    assert not np.array_equal(train, validation)


def test_each_split_draws_its_hop_counts():
    def hops(name, split):
        return set(np.unique(benchmarks.source(name, split, size="small")[:]["hops"]).tolist())

    for split in benchmarks.SPLITS:
        assert hops("chain/l40-h1-4", split) == {1, 2, 3, 4}
        assert hops("chain/l40-cycle-h1-4", split) == {1, 2, 3, 4}
    assert hops("chain/l40-h1-4-test5-8", "test") == {5, 6, 7, 8}
    assert hops("chain/l40-h1-4-test5-8", "train") == {1, 2, 3, 4}
    assert hops("chain/l40-h1-4-test5-8", "validation") == {1, 2, 3, 4}
    test = benchmarks.source("chain/l40-h1-4-test5-8", "test", size="small")[:]
    assert test["chain"].shape == (2000, 8) and ((test["chain"] >= 0).sum(1) == test["hops"]).all()
    cycle = benchmarks.source("chain/l40-cycle-h1-4", "test", size="small")[:]
    np.testing.assert_array_equal(cycle["hops"], cycle["tokens"][:, 0])


@pytest.mark.parametrize("name", NAMES)
def test_text_prompts_parse_back(name):
    entries = benchmarks.text_source(name, "test", size="small")[:30]
    rows = benchmarks.source(name, "test", size="small")[:30]
    task = benchmarks.task_of(name)
    rule = hooks.text_rule(task)
    for i, entry in enumerate(entries):
        question = entry["question"]
        assert question.startswith(rule + "\nSequence: ") and question.endswith("\nAnswer:")
        sequence = re.fullmatch(r".*\nSequence: ([0-9 ]+)\nAnswer:", question, re.S).group(1)
        tokens = np.array(sequence.split(), np.int64)
        np.testing.assert_array_equal(tokens, rows["tokens"][i])
        answer = int(entry["answer"])
        assert 0 <= answer < task.length and answer == task.label(tokens[None])[0]
        assert benchmarks.score_answer(f"The answer is {answer}", entry) == 1.0
        assert entry["metadata"]["hops"] == rows["hops"][i]
        assert entry["metadata"]["chain"] == rows["chain"][i].tolist()
    assert f"(0-{task.length - 1})" in rule and f"{task.seq_len} numbers" in rule
    assert ("hop count" in rule) == (task.form == "cycle")


def _exact(length, k):
    """The conditional form's majority-class accuracy with k hops, as a fraction."""
    total = math.comb(length - 1, k)
    return sum(Fraction(math.comb(p - 1, k - 1), total * (p + 1)) for p in range(k, length))


def test_the_baseline_is_exact():
    four = ChainTask(4, (1, 2, 3))
    # k = 1: pk uniform in 1..3; k = 2: pk = 2 for {1, 2}, else 3; k = 3: pk = 3.
    expected = [Fraction(13, 36), Fraction(5, 18), Fraction(1, 4)]
    assert [hooks.majority_baseline(four, k) for k in (1, 2, 3)] == pytest.approx(expected)
    forty = ChainTask(40, (1, 2, 3, 4))
    harmonic = sum(Fraction(1, p + 1) for p in range(1, 40)) / 39  # k = 1
    assert hooks.majority_baseline(forty, 1) == pytest.approx(float(harmonic), rel=1e-12)
    for k in (2, 5, 8, 20, 39):
        assert hooks.majority_baseline(forty, k) == pytest.approx(float(_exact(40, k)), rel=1e-9)
    cycle = ChainTask(40, (1,), form="cycle")
    assert hooks.majority_baseline(cycle, 4) == pytest.approx(1 / 39)
    assert hooks.majority_baseline(cycle, 39) == 1.0  # 40 steps: back at 0
    # Against the draws: labels 0..k tie as the most frequent, at the baseline.
    task = ChainTask(12, (1, 3, 8))
    x, y = data.chain_arrays(task, 60_000, seed=3)
    hops = task.count_hops(x)
    for k in (1, 3, 8):
        counts = np.bincount(y[hops == k], minlength=12) / (hops == k).sum()
        assert counts.argmax() <= k
        np.testing.assert_allclose(counts[: k + 1], hooks.majority_baseline(task, k), atol=0.012)
    x, y = data.chain_arrays(ChainTask(12, (3, 11), form="cycle"), 20_000, seed=3)
    three = y[x[:, 0] == 3]  # positions 1..11 alike
    np.testing.assert_allclose(np.bincount(three, minlength=12)[1:] / len(three), 1 / 11, atol=0.02)
    assert (y[x[:, 0] == 11] == 0).all()


def test_scores_per_hop_count_beside_the_baseline():
    name = "chain/l40-h1-4-test5-8"
    rows = benchmarks.source(name, "test", size="small")[:]
    wrong = (rows["label"] + 1) % 40
    predictions = np.where(rows["hops"] == 6, wrong, rows["label"])
    report = benchmarks.score(name, predictions, size="small")
    assert report["per_hops"] == {5: 1.0, 6: 0.0, 7: 1.0, 8: 1.0}
    assert report["accuracy"] == pytest.approx(1 - (rows["hops"] == 6).mean())
    task = benchmarks.task_of(name)
    baseline = {k: hooks.majority_baseline(task, k) for k in (5, 6, 7, 8)}
    assert report["baseline_per_hops"] == baseline
    counts = {k: (rows["hops"] == k).sum() for k in baseline}
    weighted = sum(baseline[k] * counts[k] for k in baseline) / 2000
    assert report["baseline"] == pytest.approx(weighted)
    assert report["sha256"] == hashes.recorded(name, "test", "small") is not None
    # Always answering 0 (a most frequent label at every hop count) scores about the baseline.
    zero = benchmarks.score(name, np.zeros(2000, np.int64), size="small")
    for k in baseline:
        assert zero["per_hops"][k] == pytest.approx(baseline[k], abs=0.035)
    logits = np.eye(40)[predictions]  # scores: their argmax
    assert benchmarks.score(name, logits, size="small")["per_hops"] == report["per_hops"]


def test_the_manifest_holds_every_chain_split():
    """Every split made once at the standard size by ``data.chain_arrays``, hashed at each
    size (the small one a prefix) against the committed manifest."""
    committed = hashes.manifest()
    assert sorted(n for n in committed if n.startswith("chain/")) == sorted(NAMES)
    for name in NAMES:
        config, task = benchmarks.get(name), benchmarks.task_of(name)
        assert committed[name]["version"] == config.version
        for split in benchmarks.SPLITS:
            seed, stream = config.stream(split)
            x, y = data.chain_arrays(task, config.sizes()[split], split=stream, seed=seed)
            for size, splits in committed[name]["sizes"].items():
                n = splits[split]["examples"]
                assert n == config.sizes(size)[split]
                made = hashes.hash_rows("chain", [{"tokens": x[:n], "label": y[:n]}])
                assert made == splits[split]["sha256"], (name, size, split)


def test_chain_sources_work_in_a_fresh_process_without_a_framework():
    """``pvr_keras.data`` re-exports ``chain_arrays`` from the kind's ``numpy_data``, which
    imports ``pvr_keras.data``: the hooks' module must load first in a new process too."""
    code = ("import sys\nfrom pvr_keras import benchmarks\n"
            "benchmarks.source('chain/l40-h1-4', 'test', size='small')[:10]\n"
            "benchmarks.text_source('chain/l40-cycle-h1-4', 'test', size='small')[3]\n"
            "print(sorted(m for m in ('tensorflow', 'jax', 'keras')\n"
            "             if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_tfds_builder_knows_the_chain_configs(tmp_path):
    """Their TFDS features and keys, and a source row encoded by them (building a small
    config, 24,000 examples, takes about 15 s: not here)."""
    pytest.importorskip("tensorflow_datasets")
    import tensorflow_datasets as tfds

    import pvr_keras.tfds  # noqa: F401  (registers the builder)

    builder = tfds.builder("pvr/chain_l40_h1_4_test5_8_small", data_dir=tmp_path)
    info = builder.info
    assert info.supervised_keys == ("tokens", "label")
    assert "chain/l40-h1-4-test5-8 (small: 20,000 train" in builder.builder_config.description
    features = info.features
    assert features["tokens"].shape == (40,) and features["chain"].shape == (8,)
    label = features["label"].get_tensor_info()  # int32, as the source's, in 0-39
    assert (label.dtype, label.minimum, label.maximum) == (np.int32, 0, 39)
    row = benchmarks.source("chain/l40-h1-4-test5-8", "test", size="small")[0]
    encoded = features.encode_example(row)
    np.testing.assert_array_equal(encoded["chain"], row["chain"])
    assert encoded["label"] == row["label"] and encoded["hops"] == row["hops"]


def test_the_rule_in_a_sentence():
    conditional, cycle = (benchmarks.text_source(n, "test", size="small").rule
                          for n in ("chain/l40-h1-4", "chain/l40-cycle-h1-4"))  # fmt: skip
    assert conditional == (
        "Pointer chasing. Each sequence has 40 numbers, at positions 0-39, each in 0-39. Start "
        "at position 0. Read the number at the current position: if it is greater than the "
        "current position, move to the position it names and read again; otherwise that "
        "number is the answer (0-39). Reply with the answer number only."
    )
    assert cycle == (
        "Pointer chasing on a cycle. Each sequence has 41 numbers. The first is a hop count k. "
        "The other 40 numbers are at positions 0-39 (not counting the first), each in 0-39: "
        "the number at position c is the position that comes after c. Start at position 0 "
        "and take k + 1 steps, each to the number at the current position. The answer is the "
        "position reached (0-39). Reply with the answer number only."
    )


def test_every_kind_of_config_is_named_in_its_versions_release_notes():
    # A dataset card quotes its version's notes: a config they do not mention reads as absent.
    for name in benchmarks.names():
        config = benchmarks.get(name)
        notes = benchmarks.RELEASE_NOTES[config.version].lower()
        assert config.kind in notes, (name, config.version)
