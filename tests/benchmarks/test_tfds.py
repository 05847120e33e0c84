"""pvr_keras.tfds: tfds.load of every token and Boolean config (small size) gives the NumPy
source's rows in index order; tfds.data_source gives random access; versions are checked; a
build, and prepared files, are checked against the manifest."""

import numpy as np
import pytest

import pvr_keras.tfds  # noqa: F401  (registers the builder)
from pvr_keras import benchmarks
from pvr_keras.benchmarks import hashes

tfds = pytest.importorskip("tensorflow_datasets")
HASHED = benchmarks.names("token") + benchmarks.names("boolean")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tfds")


@pytest.mark.slow  # builds 27 small datasets (about 2 minutes)
@pytest.mark.parametrize("name", HASHED)
def test_tfds_load_is_the_source(name, data_dir):
    config = benchmarks.get(name)
    loaded = tfds.load(f"pvr/{config.tfds_name}_small:1.0.0", data_dir=data_dir)
    for split in benchmarks.SPLITS:
        rows = list(loaded[split].as_numpy_iterator())
        source = benchmarks.source(name, split, size="small")[:]
        assert len(rows) == len(source["label"])
        for key, value in source.items():
            np.testing.assert_array_equal(np.stack([r[key] for r in rows]), value, err_msg=key)


def test_data_source_random_access_and_versions(tmp_path):
    source = tfds.data_source("pvr/boolean_f3_frozen0_small", split="train", data_dir=tmp_path,
                              builder_kwargs={"file_format": "array_record"})  # fmt: skip
    mine = benchmarks.source("boolean/f3-frozen0", "train", size="small")
    assert len(source) == len(mine)
    for i in (0, 17, len(mine) - 1):
        np.testing.assert_array_equal(source[i]["bits"], mine[i]["bits"])
        assert source[i]["label"] == mine[i]["label"]
    with pytest.raises(AssertionError, match="2.0.0"):
        tfds.builder("pvr/token_w1:2.0.0", data_dir=tmp_path)
    builder = tfds.builder("pvr/token_w3_median", data_dir=tmp_path)
    assert "token/w3-median (standard: 300,000 train" in builder.builder_config.description


def _rewrite_one_label(path, index):
    """Rewrites example ``index`` of a TFRecord file with its label negated (a valid CRC)."""
    import tensorflow as tf

    records = [bytes(r) for r in tf.data.TFRecordDataset(str(path)).as_numpy_iterator()]
    example = tf.train.Example.FromString(records[index])
    label = example.features.feature["label"].float_list
    label.value[0] = -label.value[0]
    records[index] = example.SerializeToString()
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def test_a_rewritten_label_in_prepared_files_is_found(tmp_path):
    from pvr_keras.errors import DamagedFile

    name = "pvr/boolean_parity3_small"
    builder = tfds.builder(name, data_dir=tmp_path)
    builder.download_and_prepare()  # verified as it is built
    sha = pvr_keras.tfds.verify(name, data_dir=tmp_path)
    assert sha == {s: hashes.recorded("boolean/parity3", s, "small") for s in benchmarks.SPLITS}
    (train,) = (tmp_path / "pvr" / "boolean_parity3_small" / "1.0.0").glob("pvr-train.*")
    _rewrite_one_label(train, 5)
    loaded = tfds.load(name, split="train", data_dir=tmp_path)  # TFDS reads it as truth
    labels = [row["label"] for row in loaded.as_numpy_iterator()]
    assert labels[5] == -benchmarks.source("boolean/parity3", "train", size="small")[5]["label"]
    with pytest.raises(DamagedFile, match=r"^pvr/boolean_parity3_small 1.0.0 in .*: the train "
                       "split does not match the manifest"):  # fmt: skip
        pvr_keras.tfds.verify(builder)
    with pytest.raises(ValueError, match="block configs have no manifest entry"):
        pvr_keras.tfds.verify("block_mnist_2x2_small", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="token_w1_small 1.0.0 is not prepared"):
        pvr_keras.tfds.verify("token_w1_small", data_dir=tmp_path)


def test_a_build_that_is_not_the_manifest_is_removed(tmp_path, monkeypatch):
    from pvr_keras.errors import DamagedFile

    class Wrong(benchmarks.Source):  # a generator with one label wrong
        def rows(self, index):
            rows = super().rows(index)
            if self.split == "validation":
                rows["label"][index == 3] *= -1
            return rows

    monkeypatch.setattr(pvr_keras.tfds, "Source", Wrong)
    builder = tfds.builder("pvr/boolean_parity3_small", data_dir=tmp_path)
    with pytest.raises(DamagedFile, match="the validation split does not match the manifest "
                       ".*; the build was removed$"):  # fmt: skip
        builder.download_and_prepare()
    assert not builder.is_prepared()
    assert not (tmp_path / "pvr" / "boolean_parity3_small" / "1.0.0").exists()
