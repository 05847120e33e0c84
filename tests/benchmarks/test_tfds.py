"""pvr_keras.tfds: tfds.load of token and Boolean configs (small size) gives the NumPy
source's rows in index order; tfds.data_source gives random access; versions are checked; a
build, and prepared files, are checked against the manifest."""

import numpy as np
import pytest

import pvr_keras.tfds  # noqa: F401  (registers the builder)
from pvr_keras import benchmarks
from pvr_keras.benchmarks import hashes

tfds = pytest.importorskip("tensorflow_datasets")
# The builder writes whatever a config's source rows are, by one rule for every config; these
# cover each kind's features and their shapes: a window of 1, 3 with another aggregation and
# held-out tuples of chosen values (held_out set in the test split), no pointer; the Boolean
# f3 (its test split the cube), a frozen bit, parity over cyclic windows. (Every config's
# NumPy source is checked against the manifest by test_manifest.py; building all 28 through
# TFDS took about 2 minutes.)
BUILT = ["token/w1", "token/w3-holdout6-of123", "token/w2-nopointer", "boolean/f3",
         "boolean/f3-frozen7", "boolean/parity3"]  # fmt: skip


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tfds")


@pytest.mark.slow  # builds 6 small datasets
@pytest.mark.parametrize("name", BUILT)
def test_tfds_load_is_the_source(name, data_dir):
    config = benchmarks.get(name)
    # Each split read as one batch, in the files' order (reading 24,000 examples one at a
    # time took longer than building them).
    loaded = tfds.as_numpy(
        tfds.load(f"pvr/{config.tfds_name}_small:1.0.0", data_dir=data_dir, batch_size=-1)
    )
    for split in benchmarks.SPLITS:
        rows = loaded[split]
        source = benchmarks.source(name, split, size="small")[:]
        assert sorted(rows) == sorted(source)
        for key, value in source.items():
            assert len(rows[key]) == len(source["label"]), key
            np.testing.assert_array_equal(rows[key], value, err_msg=key)
            assert rows[key].dtype == value.dtype, key


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


def test_a_rewritten_label_in_prepared_files_is_found(tmp_path, monkeypatch, capsys):
    from pvr_keras.errors import DamagedFile

    name = "pvr/boolean_parity3_small"
    builder = tfds.builder(name, data_dir=tmp_path)
    builder.download_and_prepare()  # verified as it is built
    out = capsys.readouterr().out
    said = ("Generating pvr/boolean_parity3_small 1.0.0 locally (nothing is downloaded): every "
            "split once (1,900 train, 1,000 validation, 2,048 test examples)")  # fmt: skip
    assert said in out
    assert "pvr/boolean_parity3_small 1.0.0: generated, checked against the manifest" in out
    assert "download" not in out.replace("nothing is downloaded", "")  # TFDS's own lines
    with monkeypatch.context() as slow:  # records parsed a chunk at a time, not as_dataset's
        slow.setattr(pvr_keras.tfds.Pvr, "as_dataset", None)  # per-example decoding
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


@pytest.mark.parametrize("name", ["token/w3-holdout1", "boolean/f3-frozen2", "chain/l40-h1-4"])
def test_every_feature_has_the_sources_dtype(name):
    # The label was TFDS's ClassLabel, int64, against the source's int32.
    config = benchmarks.get(name)
    features = tfds.builder(f"pvr/{config.tfds_name}_small").info.features
    row = benchmarks.source(name, "test", size="small")[0]
    assert sorted(features) == sorted(row)
    for key, value in row.items():
        assert np.dtype(features[key].np_dtype) == np.asarray(value).dtype, key


def test_image_configs_label_int32_as_their_sources():
    # Their sources need MNIST / CIFAR-10; their rows' label is the composer's int32.
    for name in ("block/mnist-2x2", "sequence/mnist"):
        builder = tfds.builder(f"pvr/{benchmarks.get(name).tfds_name}_small")
        assert np.dtype(builder.info.features["label"].np_dtype) == np.int32


def _prepare(name, data_dir, examples):
    """Prepares the first ``examples`` of each split (too few for the manifest: unchecked)."""
    config = tfds.download.DownloadConfig(max_examples_per_split=examples)
    tfds.builder(name, data_dir=data_dir).download_and_prepare(download_config=config)


def test_labels_load_as_int32_also_from_a_dir_prepared_with_int64_labels(tmp_path, monkeypatch):
    """A data dir prepared when the label was a ClassLabel (int64) loads with the int32 label
    (the files store any integer as int64: the same bytes), equal to the source's."""
    from pvr_keras.kinds.token import benchmark

    name, want = "pvr/token_w1_small", benchmarks.source("token/w1", "train", size="small")[:40]
    monkeypatch.setattr(pvr_keras.tfds, "verify", lambda builder: None)
    with monkeypatch.context() as before:
        int32 = benchmark.features

        def class_label(task):
            features = dict(int32(task))
            features["label"] = tfds.features.ClassLabel(num_classes=task.num_values)
            return tfds.features.FeaturesDict(features)

        before.setattr(benchmark, "features", class_label)
        _prepare(name, tmp_path / "old", 40)
        old = next(
            tfds.load(name, split="train", data_dir=tmp_path / "old").batch(40).as_numpy_iterator()
        )
        assert old["label"].dtype == np.int64
    _prepare(name, tmp_path / "new", 40)
    for data_dir in ("old", "new"):
        rows = tfds.load(name, split="train", data_dir=tmp_path / data_dir).batch(40)
        rows = next(rows.as_numpy_iterator())
        for key, value in want.items():
            assert rows[key].dtype == value.dtype, (data_dir, key)
            np.testing.assert_array_equal(rows[key], value, err_msg=key)
