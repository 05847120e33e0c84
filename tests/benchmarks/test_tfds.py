"""pvr_keras.tfds: tfds.load of every token and Boolean config (small size) gives the NumPy
source's rows in index order; tfds.data_source gives random access; versions are checked."""

import numpy as np
import pytest

import pvr_keras.tfds  # noqa: F401  (registers the builder)
from pvr_keras import benchmarks

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
