"""An export of several configs for the Hugging Face Hub: one folder a config, a dataset card
whose header names each config's files and features (the first the default), so
``datasets.load_dataset(DIR, "token_w3")`` reads the source's rows offline; one config keeps
the flat layout; a failure in any config leaves nothing."""

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import catalog, export, hashes
from tests import scripts

datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
pq = pytest.importorskip("pyarrow.parquet")
from huggingface_hub.repocard import metadata_load  # noqa: E402  (datasets' dependency)

NAMES = ("token/w3", "boolean/f3")
# The features of their files as datasets writes them in a card (save_infos, push_to_hub).
FEATURES = {
    "token_w3": [
        {"name": "tokens", "list": "int32", "length": 11},
        {"name": "label", "dtype": "int32"},
        {"name": "pointer", "dtype": "int32"},
        {"name": "window_positions", "list": "int32", "length": 3},
        {"name": "held_out", "dtype": "bool"},
    ],
    "boolean_f3": [
        {"name": "bits", "list": "int8", "length": 11},
        {"name": "label", "dtype": "float32"},
        {"name": "pointer", "dtype": "int32"},
        {"name": "frozen", "dtype": "int64"},
    ],
}


@pytest.fixture(scope="module")
def tool():
    return scripts.load("tools/export_dataset.py")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def assert_holds_the_source(loaded, name):
    for split in catalog.SPLITS:
        rows = benchmarks.source(name, split, size="small")[:]
        table = loaded[split].data.table  # pyarrow, as loaded: dtypes kept
        assert table.column_names == list(rows), (name, split)
        for key, value in rows.items():
            column = table.column(key).combine_chunks()
            if value.ndim > 1:  # a fixed-size list a row
                column = column.flatten()
            got = column.to_numpy(zero_copy_only=False).reshape(value.shape)
            assert got.dtype == value.dtype, (name, split, key)
            np.testing.assert_array_equal(got, value, err_msg=f"{name} {split} {key}")


def test_several_configs_load_offline_each_by_its_config_name(tmp_path, tool):
    out = tmp_path / "hub"
    tool.main([*NAMES, str(out), "--format", "parquet", "--size", "small"])
    tfds_names = [catalog.get(n).tfds_name for n in NAMES]
    assert sorted(p.name for p in out.iterdir()) == sorted(["README.md", *tfds_names])
    for folder in tfds_names:
        assert sorted(p.name for p in (out / folder).iterdir()) == sorted(
            f"{s}.parquet" for s in catalog.SPLITS)  # fmt: skip
    cache = tmp_path / "cache"
    for name in NAMES:
        loaded = datasets.load_dataset(str(out), catalog.get(name).tfds_name, cache_dir=cache)
        assert_holds_the_source(loaded, name)
    default = datasets.load_dataset(str(out), cache_dir=cache)  # the first config
    assert_holds_the_source(default, NAMES[0])


def test_the_card_describes_each_config(tmp_path, tool):
    out = tmp_path / "hub"
    tool.main([*NAMES, str(out), "--size", "small"])
    header = metadata_load(out / "README.md")
    assert [c["config_name"] for c in header["configs"]] == ["token_w3", "boolean_f3"]
    assert [c.get("default", False) for c in header["configs"]] == [True, False]
    assert header["license"] == "apache-2.0"
    assert {c["config_name"]: c["features"] for c in header["dataset_info"]} == FEATURES
    card = (out / "README.md").read_text()
    assert "arXiv:2107.12580" in card and "@article{zhang2021pointer," in card
    assert "Zhang, Chiyuan and Raghu, Maithra and Kleinberg, Jon and Bengio, Samy" in card
    fresh = tmp_path / "fresh"  # the card's dataset_info, before any file is read
    for name in NAMES:
        config = catalog.get(name)
        assert f"## {config.tfds_name}: PVR {name} {config.version}" in card
        for split in catalog.SPLITS:
            assert hashes.recorded(name, split, "small") in card, (name, split)
        info = datasets.load_dataset_builder(str(out), config.tfds_name, cache_dir=fresh).info
        schema = pq.read_schema(out / config.tfds_name / "test.parquet")
        assert info.features == datasets.Features.from_arrow_schema(schema), name
        sizes = {s: info.splits[s].num_examples for s in catalog.SPLITS}
        assert sizes == config.sizes("small"), name


def test_one_config_keeps_the_flat_layout(tmp_path, tool):
    out = tmp_path / "flat"
    tool.main(["boolean/f3", str(out), "--size", "small"])
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", "test.parquet", "train.parquet", "validation.parquet"]  # fmt: skip
    header = metadata_load(out / "README.md")
    assert header["configs"][0]["data_files"][0] == {"split": "train", "path": "train.parquet"}
    loaded = datasets.load_dataset(str(out), cache_dir=tmp_path / "cache")
    assert_holds_the_source(loaded, "boolean/f3")


def test_a_failure_in_any_config_leaves_nothing(tmp_path, tool, monkeypatch):
    def broken(source, path):
        if source.config.name == "boolean/f3":
            raise OSError("disk gone")
        path.write_bytes(b"x")

    monkeypatch.setitem(export.WRITERS, "parquet", broken)
    with pytest.raises(OSError, match="disk gone"):
        tool.main([*NAMES, str(tmp_path / "out"), "--size", "small"])
    assert not any(tmp_path.iterdir())  # no half export, no temporary folder, no lock left
