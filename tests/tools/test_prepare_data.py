"""tools/prepare_data.py: both datasets through the loader's download path (mocked, no
network), prepared ones left alone, and the offline refusal."""

import pytest
import tensorflow_datasets as tfds

from pvr_keras.data import images
from tests import scripts
from tests.tfds_fakes import fake_prepared


@pytest.fixture(scope="module")
def tool():
    return scripts.load("tools/prepare_data.py")


def test_prepares_both_and_skips_what_is_there(tool, tmp_path, monkeypatch, capsys):
    calls = []

    def download(name, root):
        calls.append(name)
        fake_prepared(root, [name])

    monkeypatch.setattr(images, "probe", lambda name, timeout=None: (True, ""))
    monkeypatch.setattr(images, "_download_and_prepare", download)
    out = tmp_path / "DIR"
    assert set(tool.main([str(out)])) == {"mnist", "cifar10"}
    assert calls == ["mnist", "cifar10"]
    tool.main([str(out)])  # again: nothing downloaded
    assert calls == ["mnist", "cifar10"]
    assert f"cifar10 {tfds.builder_cls('cifar10').VERSION}: prepared in {out}" in (
        capsys.readouterr().out
    )


def test_offline_says_so(tool, tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot be reached"):
        tool.main([str(tmp_path), "--datasets", "mnist"])
    assert not (tmp_path / "mnist").exists()
