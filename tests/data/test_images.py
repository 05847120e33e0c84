"""load_images: mock and real TFDS data, the per-process cache, and the offline fast-fail."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import tensorflow_datasets as tfds

from pvr_keras import data
from pvr_keras.data import images
from tests.tfds_fakes import fake_prepared

REPO = pathlib.Path(__file__).resolve().parents[2]
SHAPES = {"mnist": (28, 28, 1), "cifar10": (32, 32, 3)}
MOCK_EXAMPLES = 60


@pytest.fixture(scope="module")
def mock_dir(tmp_path_factory):
    return fake_prepared(tmp_path_factory.mktemp("tfds"))


@pytest.mark.parametrize("name", ["mnist", "cifar10"])
def test_mock_shapes_dtypes_and_cache(mock_dir, name):
    with tfds.testing.mock_data(num_examples=MOCK_EXAMPLES):
        x, y = data.load_images(name, "train", data_dir=mock_dir)
        again = data.load_images(name, "train", data_dir=str(mock_dir))
    assert x.shape == (MOCK_EXAMPLES, *SHAPES[name]) and x.dtype == np.uint8
    assert y.shape == (MOCK_EXAMPLES,) and y.dtype == np.int64
    assert y.min() >= 0 and y.max() < 10
    assert again[0] is x and again[1] is y  # decoded once, then served from memory
    assert not x.flags.writeable and not y.flags.writeable
    # Outside the mock the cache still serves the decoded arrays: TFDS is not asked again.
    assert data.load_images(name, "train", data_dir=mock_dir)[0] is x


def test_clear_cache_drops_decoded_splits(tmp_path):
    root = fake_prepared(tmp_path)
    with tfds.testing.mock_data(num_examples=5):
        first = data.load_images("mnist", "test", data_dir=root)[0]
        images.clear_cache()
        assert data.load_images("mnist", "test", data_dir=root)[0] is not first


def test_tfds_data_dir_env_var_is_honoured(mock_dir, monkeypatch):
    monkeypatch.setenv("TFDS_DATA_DIR", str(mock_dir))
    with tfds.testing.mock_data(num_examples=MOCK_EXAMPLES):
        x, _ = data.load_images("mnist", "test")
    assert x is data.load_images("mnist", "test", data_dir=mock_dir)[0]


@pytest.mark.parametrize("name", ["mnist", "cifar10"])
def test_real_test_split(name, tfds_dir):
    x, y = data.load_images(name, "test", data_dir=tfds_dir)
    info = json.loads(next(tfds_dir.glob(f"{name}/*/dataset_info.json")).read_text())
    sizes = {s["name"]: sum(int(n) for n in s["shardLengths"]) for s in info["splits"]}
    assert x.shape == (sizes["test"], *SHAPES[name]) == (10_000, *SHAPES[name])
    assert np.bincount(y, minlength=10).min() > 800  # all ten classes, roughly balanced
    assert 0 < x.mean() < 255


def test_real_mnist_train_and_test_are_the_tfds_splits(tfds_dir):
    train, train_labels = data.load_images("mnist", "train", data_dir=tfds_dir)
    test, _ = data.load_images("mnist", "test", data_dir=tfds_dir)
    assert train.shape == (60_000, 28, 28, 1) and len(train_labels) == 60_000
    # Same order as TFDS itself gives (files not shuffled), so image i is stable.
    builder = tfds.builder("mnist", data_dir=str(tfds_dir))
    head = next(iter(tfds.as_numpy(builder.as_dataset(split="test[:16]", batch_size=16))))
    np.testing.assert_array_equal(head["image"], test[:16])


def test_unknown_name_or_split():
    with pytest.raises(ValueError, match="name must be one of mnist, cifar10; received 'svhn'"):
        data.load_images("svhn", "train")
    with pytest.raises(ValueError, match="split must be one of train, test; received 'valid'"):
        data.load_images("mnist", "valid")


def test_missing_data_dir_names_the_fix(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"does not exist.*prepare_data.py DIR"):
        data.load_images("mnist", "train", data_dir=missing)
    assert not missing.exists()  # nothing written when the download is impossible


def test_unprepared_dataset_names_the_fix_and_found_versions(tmp_path):
    (tmp_path / "cifar10" / "1.0.0").mkdir(parents=True)
    (tmp_path / "cifar10" / "1.0.0" / "dataset_info.json").write_text("{}")
    with pytest.raises(FileNotFoundError) as err:
        data.load_images("cifar10", "test", data_dir=tmp_path)
    message = str(err.value)
    assert "not prepared" in message and "found versions: 1.0.0" in message
    assert "tfds build cifar10 --data_dir DIR" in message and "TFDS_DATA_DIR" in message


def test_default_data_dir_is_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TFDS_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="tensorflow_datasets.*TFDS default"):
        data.load_images("mnist", "train")


def _fake_download(calls):
    """A stand-in for TFDS's download_and_prepare: writes what a prepared dir holds."""

    def download(name, root):
        calls.append((name, root))
        fake_prepared(root, [name])

    return download


def test_online_first_use_downloads_into_the_data_dir(tmp_path, monkeypatch, capsys):
    calls, probes = [], []
    monkeypatch.setattr(
        images, "probe", lambda name, timeout=None: probes.append(name) or (True, "")
    )
    monkeypatch.setattr(images, "_download_and_prepare", _fake_download(calls))
    root = tmp_path / "new_dir"  # does not exist yet, like ~/tensorflow_datasets on a new machine
    monkeypatch.setenv("TFDS_DATA_DIR", str(root))
    with tfds.testing.mock_data(num_examples=7):
        x, _ = data.load_images("mnist", "test")
        again = data.load_images("mnist", "train")  # prepared now: no second download
    assert calls == [("mnist", str(root))] and probes == ["mnist"]
    assert x.shape == (7, 28, 28, 1) and again[0].shape == (7, 28, 28, 1)
    assert f"mnist: not prepared in {root}" in capsys.readouterr().out


def test_download_false_never_probes(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("network touched")

    monkeypatch.setattr(images, "probe", fail)
    monkeypatch.setattr(images, "_download_and_prepare", fail)
    with pytest.raises(FileNotFoundError, match="download=False"):
        data.load_images("mnist", "test", data_dir=tmp_path, download=False)
    fake_prepared(tmp_path, ["mnist"])  # prepared: download=False reads it
    with tfds.testing.mock_data(num_examples=3):
        assert data.load_images("mnist", "test", data_dir=tmp_path, download=False)[0].shape[0] == 3


def test_offline_probe_refuses_before_any_download(tmp_path, monkeypatch):
    monkeypatch.setattr(images, "probe", lambda name, timeout=None: (False, "host:443: no route"))
    with pytest.raises(FileNotFoundError) as err:
        images.prepare("cifar10", tmp_path)
    message = str(err.value)
    assert "cannot be reached from this machine (host:443: no route)" in message
    assert "is not prepared in TFDS data dir" in message
    assert "python tools/prepare_data.py DIR" in message and str(tmp_path) in message


def test_probe_reports_a_refused_connection_fast(monkeypatch):
    """The real probe against a closed local port (no network): False with the reason."""

    monkeypatch.undo()  # the real probe, not conftest's offline stand-in
    monkeypatch.setitem(images.DOWNLOAD_HOSTS, "mnist", ("127.0.0.1", 9))
    start = time.perf_counter()
    ok, reason = images.probe("mnist", timeout=2)
    assert not ok and reason.startswith("127.0.0.1:9: ") and time.perf_counter() - start < 3


def test_offline_unprepared_fails_fast_in_a_fresh_process(tmp_path):
    """A user's first call on an air-gapped machine: no retry loop, a message with the fix.

    The probe's host is a closed local port here, so the test never uses the network."""
    script = textwrap.dedent(
        """
        import time
        import tensorflow  # the imports first: only the failing call is timed
        import tensorflow_datasets
        from pvr_keras import data
        from pvr_keras.data import images
        images.DOWNLOAD_HOSTS["mnist"] = ("127.0.0.1", 9)
        start = time.perf_counter()
        try:
            data.load_images("mnist", "train")
        except FileNotFoundError as err:
            print(f"{time.perf_counter() - start:.3f}")
            print(err)
        """
    )
    env = {**os.environ, "TFDS_DATA_DIR": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    seconds, message = done.stdout.split("\n", 1)
    # The call itself takes milliseconds (TFDS's own retries take ~200 s); 10 s holds under
    # any load this machine sees. Wall-clock figures belong in benchmarks, not here.
    assert float(seconds) < 10, f"load_images took {seconds} s to fail"
    assert "python tools/prepare_data.py DIR" in message and str(tmp_path) in message
    assert "cannot be reached" in message
