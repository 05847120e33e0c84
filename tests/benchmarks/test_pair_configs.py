"""The counterfactual-pair configs (token/w1-cf-p, token/w3-cf-p, -s0, -s1, -s2, -v0): row k is
the k-th changing pair of ``cf.pairs`` and the rule worked by hand, with what a patcher needs;
their splits are in the manifest; the Parquet export holds them; they score IIA and have no
text form."""

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras import counterfactuals as cf
from pvr_keras.benchmarks import export, hashes, text
from pvr_keras.errors import DamagedFile
from pvr_keras.kinds.token.numpy_data import token_examples

PAIRS = ["token/w1-cf-p", "token/w3-cf-p", "token/w3-cf-s0", "token/w3-cf-s1",
         "token/w3-cf-s2", "token/w3-cf-v0"]  # fmt: skip
KEYS = ["base", "source", "label", "counterfactual_label", "pointer", "source_pointer",
        "window_positions", "source_window_positions"]  # fmt: skip


def _by_hand(base, source, variable, window):
    """The base's label and its counterfactual label, mod_sum over cyclic windows of 10
    values, worked out one example at a time."""
    pointer, values = int(base[0]), [int(v) for v in base[1:]]
    label = sum(values[(pointer + j) % 10] for j in range(window)) % 10
    if variable == "P":
        pointer = int(source[0])
    if variable.startswith("V"):
        values[int(variable[1:])] = int(source[1 + int(variable[1:])])
    pointed = [values[(pointer + j) % 10] for j in range(window)]
    if variable.startswith("S"):
        j = int(variable[1:])
        pointed[j] = int(source[1 + (int(source[0]) + j) % 10])
    return label, sum(pointed) % 10


def test_the_catalog_lists_them_as_token_configs_of_one_variable():
    assert [n for n in benchmarks.names("token") if benchmarks.get(n).interchange] == PAIRS
    for name in PAIRS:
        config = benchmarks.get(name)
        variable = name.rsplit("-", 1)[1].upper()
        assert config.interchange == (variable,) and config.holdout == 0
        assert config.task == dict(window=int(name[len("token/w")]))
        assert variable in cf.variables(config.build_task())
        assert config.sizes("small") == dict(train=10_000, validation=2_000, test=2_000)
        assert "token counterfactual-pair configs" in benchmarks.RELEASE_NOTES[config.version]
    assert not benchmarks.get("token/w3").interchange


@pytest.mark.parametrize("name", PAIRS)
def test_rows_are_the_changing_pairs_of_cf_pairs(name):
    config = benchmarks.get(name)
    task, variables = config.build_task(), list(config.interchange)
    for split in ("test", "validation"):
        rows = benchmarks.source(name, split, size="small")[:]
        assert list(rows) == KEYS
        seed, stream = config.stream(split)
        want = cf.pairs(task, len(rows["label"]), variables, seed=seed, split=stream,
                        changing=True)  # fmt: skip
        for key in ("base", "source", "label", "counterfactual_label"):
            np.testing.assert_array_equal(rows[key], want[key], err_msg=f"{split} {key}")
            assert rows[key].dtype == np.int32, key
        assert (rows["label"] != rows["counterfactual_label"]).all()
        for prefix in ("", "source_"):
            tokens = rows["base" if not prefix else "source"]
            np.testing.assert_array_equal(rows[f"{prefix}pointer"], tokens[:, 0])
            np.testing.assert_array_equal(
                rows[f"{prefix}window_positions"],
                (tokens[:, :1] + np.arange(task.window)) % task.num_positions,
            )


@pytest.mark.parametrize("name", PAIRS)
def test_rows_are_the_rule_worked_by_hand(name):
    """The first rows, against a scan of the stream one pair at a time: pair i is token
    example i and example 2**40 + i of the split, kept when the label changes."""
    config = benchmarks.get(name)
    task, [variable] = config.build_task(), config.interchange
    rows = benchmarks.source(name, "test", size="small")[:40]
    kept, i = [], 0
    while len(kept) < 40:
        (base,), _ = token_examples(task, [i], seed=0, split="test")
        (source,), _ = token_examples(task, [2**40 + i], seed=0, split="test")
        label, counterfactual = _by_hand(base, source, variable, task.window)
        if counterfactual != label:
            kept.append((base, source, label, counterfactual))
        i += 1
    for k, (base, source, label, counterfactual) in enumerate(kept):
        np.testing.assert_array_equal(rows["base"][k], base)
        np.testing.assert_array_equal(rows["source"][k], source)
        assert (rows["label"][k], rows["counterfactual_label"][k]) == (label, counterfactual)


def test_a_smaller_split_is_a_prefix_and_index_access_agrees():
    small = benchmarks.source("token/w3-cf-s1", "test", size="small")
    standard = benchmarks.source("token/w3-cf-s1", "test")
    assert (len(small), len(standard)) == (2_000, 10_000)
    for key, value in small[:].items():
        np.testing.assert_array_equal(standard[:2_000][key], value, err_msg=key)
    picked = standard[np.array([9_999, 3, 3])]
    np.testing.assert_array_equal(picked["base"][1], standard[3]["base"])
    np.testing.assert_array_equal(picked["source"][0], standard[-1]["source"])


def test_the_manifest_hashes_base_source_and_counterfactual_label():
    committed = hashes.manifest()
    for name in PAIRS:
        for split in benchmarks.SPLITS:
            want = committed[name]["sizes"]["small"][split]
            assert hashes.split_hash(name, split, "small") == want["sha256"], (name, split)
    rows = benchmarks.source("token/w3-cf-p", "test", size="small")[:]
    sha = hashes.check_rows("token/w3-cf-p", "test", "small", [rows], "here")
    # The source is hashed: the same bases with the sources of other pairs are not the split.
    rolled = dict(rows, source=np.roll(rows["source"], 1, axis=0))
    with pytest.raises(DamagedFile, match="^here: the test split does not match"):
        hashes.check_rows("token/w3-cf-p", "test", "small", [rolled], "here")
    assert sha == committed["token/w3-cf-p"]["sizes"]["small"]["test"]["sha256"]


def test_the_score_is_interchange_intervention_accuracy():
    rows = benchmarks.source("token/w3-cf-s2", "test", size="small")[:]
    perfect = benchmarks.score("token/w3-cf-s2", rows["counterfactual_label"], size="small")
    assert perfect["iia"] == 1.0 and perfect["sha256"] is not None
    assert set(perfect["per_pointer"]) == set(range(10))
    # A network the intervention does not reach keeps the base's label: 0 on changing pairs.
    assert benchmarks.score("token/w3-cf-s2", rows["label"], size="small")["iia"] == 0.0


def test_no_text_form_and_a_clear_refusal(tmp_path):
    assert not set(PAIRS) & set(text.names())
    with pytest.raises(ValueError, match="^token/w3-cf-p: counterfactual-pair configs have no "
                       "text form .*export it as parquet or tfrecord$"):  # fmt: skip
        benchmarks.text_source("token/w3-cf-p", "test")
    for fmt in ("text", "lm-eval"):
        with pytest.raises(ValueError, match="counterfactual-pair configs have no text form"):
            export.export(["token/w3-cf-p"], tmp_path / fmt, fmt=fmt, size="small", log=print)
        assert not (tmp_path / fmt).exists()


def test_the_parquet_export_holds_cf_pairs(tmp_path):
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    names = ["token/w3-cf-s1", "token/w1-cf-p"]
    export.export(names, tmp_path / "out", size="small", log=lambda line: None)
    for name in names:
        config = benchmarks.get(name)
        folder = tmp_path / "out" / config.tfds_name
        for split in benchmarks.SPLITS:
            frame = pandas.read_parquet(folder / f"{split}.parquet")
            assert list(frame.columns) == KEYS
            seed, stream = config.stream(split)
            want = cf.pairs(config.build_task(), len(frame), list(config.interchange),
                            seed=seed, split=stream, changing=True)  # fmt: skip
            # What a pyvene / TransformerLens user does with the file: NumPy arrays.
            base, source = np.stack(frame["base"]), np.stack(frame["source"])
            np.testing.assert_array_equal(base, want.base)
            np.testing.assert_array_equal(source, want.source)
            np.testing.assert_array_equal(frame["label"], want.label)
            np.testing.assert_array_equal(frame["counterfactual_label"], want.counterfactual_label)
    card = (tmp_path / "out" / "README.md").read_text()
    assert "- config_name: token_w3_cf_s1\n  default: true" in card
    assert "  - name: source_window_positions\n    list: int32\n    length: 3" in card
    assert hashes.recorded("token/w3-cf-s1", "test", "small") in card


def test_the_docs_example_patches_s1_by_hand(tmp_path):
    """docs/benchmarks/README.md's example, on an export of its command: writing the source's
    S1 token into the base at the positions it names gives the counterfactual label."""
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from tests import scripts
    from tests.benchmarks.test_docs_examples import readme_block

    command = readme_block("python tools/export_dataset.py token/w3-cf-s1 token/w3-cf-p DIR "
                           "--format parquet").splitlines()[0].split()  # fmt: skip
    out = tmp_path / "DIR"
    arguments = [str(out) if a == "DIR" else a for a in command[2:]]
    assert scripts.load("tools/export_dataset.py").main([*arguments, "--size", "small"]) == 0
    namespace = {}
    exec(readme_block("import numpy as np, pandas").replace('"DIR/', f'"{out}/'), namespace)
    base, source, y_cf = (namespace[k] for k in ("base", "source", "y_cf"))
    base_at, source_at = namespace["base_at"], namespace["source_at"]
    assert base.shape == source.shape == (2_000, 11) and y_cf.shape == (2_000,)
    patched = base.copy()
    rows = np.arange(len(base))
    patched[rows, base_at] = source[rows, source_at]
    task = benchmarks.task_of("token/w3-cf-s1")
    np.testing.assert_array_equal(task.label(patched), y_cf)
    assert (task.label(base) != y_cf).all()


def test_a_pair_config_of_a_kind_without_pairs_or_of_no_variables_is_refused(monkeypatch):
    from pvr_keras.benchmarks import catalog

    monkeypatch.setattr(catalog, "CONFIGS", dict(catalog.CONFIGS))
    with pytest.raises(ValueError, match="^boolean/f3-cf: the boolean kind has no "
                       "counterfactual-pair configs"):  # fmt: skip
        benchmarks.register_config(
            catalog.Config("boolean/f3-cf", "boolean", dict(catalog.F3), interchange=("P",))
        )
    with pytest.raises(ValueError, match="interchange must be a tuple of variable names"):
        benchmarks.register_config(catalog.Config("token/w2-cf", "token", {}, interchange="P"))
    assert "boolean/f3-cf" not in catalog.CONFIGS and "token/w2-cf" not in catalog.CONFIGS
