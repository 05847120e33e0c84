"""tools/export_dataset.py: Parquet and text files of token and Boolean configs hold the
source's rows in index order (pandas reads them back), with a dataset card; bad input fails
before any work and a failure leaves nothing behind."""

import json
import os

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import export
from pvr_keras.errors import RunBusy
from tests import scripts

pandas = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
# The exporter writes whatever a config's source rows are, by one rule for every config; one
# config of each kind of row (as test_tfds.py's): a window of 1, held-out tuples of chosen
# values, no pointer; the Boolean f3 (its test split the cube), a frozen bit, parity. (Every
# config's NumPy source is checked against the manifest by test_manifest.py.)
EXPORTED = ["token/w1", "token/w3-holdout6-of123", "token/w2-nopointer", "boolean/f3",
            "boolean/f3-frozen7", "boolean/parity3"]  # fmt: skip


@pytest.fixture(scope="module")
def tool():
    return scripts.load("tools/export_dataset.py")


@pytest.mark.slow  # 6 configs x 2 formats at the small size
@pytest.mark.parametrize("name", EXPORTED)
def test_parquet_and_text_hold_the_source(name, tool, tmp_path):
    tool.main([name, str(tmp_path / "parquet"), "--format", "parquet", "--size", "small"])
    tool.main([name, str(tmp_path / "text"), "--format", "text", "--size", "small"])
    for split in benchmarks.SPLITS:
        rows = benchmarks.source(name, split, size="small")[:]
        frame = pandas.read_parquet(tmp_path / "parquet" / f"{split}.parquet")
        assert list(frame.columns) == list(rows)
        for key, value in rows.items():
            column = frame[key].to_numpy()
            got = np.stack(column) if value.ndim > 1 else column
            np.testing.assert_array_equal(got, value, err_msg=f"{split} {key}")
        lines = (tmp_path / "text" / f"{split}.jsonl").read_text().splitlines()
        assert len(lines) == len(rows["label"])
        for i in (0, len(lines) // 2, len(lines) - 1):
            entry = json.loads(lines[i])
            assert entry["answer"] == str(int(rows["label"][i]))
            assert entry["metadata"]["index"] == i
            inputs = rows["tokens"] if "tokens" in rows else rows["bits"]
            sequence = entry["question"].split("Sequence: ")[1].split("\n")[0]
            assert [int(t) for t in sequence.split()] == inputs[i].tolist()
    card = (tmp_path / "parquet" / "README.md").read_text()
    config = benchmarks.get(name)
    assert card.startswith(f"---\nconfigs:\n- config_name: {config.tfds_name}\n")
    for split in benchmarks.SPLITS:
        assert f"  - split: {split}\n    path: {split}.parquet" in card
        assert benchmarks.split_hash(name, split, "small") in card


def test_tfrecord_examples(tmp_path, tool):
    import tensorflow as tf

    tool.main(["boolean/f3-frozen4", str(tmp_path / "out"), "--format", "tfrecord"])
    rows = benchmarks.source("boolean/f3-frozen4", "test")[:]
    spec = {
        "bits": tf.io.FixedLenFeature([11], tf.int64),
        "label": tf.io.FixedLenFeature([], tf.float32),
    }
    records = tf.data.TFRecordDataset(str(tmp_path / "out" / "test.tfrecord"))
    parsed = [tf.io.parse_single_example(r, spec) for r in records]
    assert len(parsed) == 2048
    np.testing.assert_array_equal(np.stack([p["bits"].numpy() for p in parsed]), rows["bits"])
    np.testing.assert_array_equal([p["label"].numpy() for p in parsed], rows["label"])


def test_bad_exports_fail_before_any_work(tmp_path, tool, monkeypatch, capsys):
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="exists and is not an empty folder"):
        tool.main(["token/w1", str(full)])
    with pytest.raises(ValueError, match="did you mean token/w1"):
        tool.main(["token/w11", str(tmp_path / "a")])
    with pytest.raises(ValueError, match="the block kind has no text form"):
        tool.main(["block/mnist-2x2", str(tmp_path / "b"), "--format", "text"])
    with pytest.raises(SystemExit):
        tool.main(["token/w1", str(tmp_path / "c"), "--format", "csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]
    assert (full / "keep.txt").read_text() == "mine"

    def broken(source, path):
        if source.split == "validation":
            raise OSError("disk gone")
        path.write_bytes(b"x")

    monkeypatch.setitem(export.WRITERS, "parquet", broken)
    with pytest.raises(OSError, match="disk gone"):
        tool.main(["token/w1", str(tmp_path / "d"), "--size", "small"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # no half export, no temp


def test_a_target_that_cannot_be_an_export_folder_fails_before_any_work(tmp_path, tool, no_work):
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "to_empty").symlink_to(empty)  # failed after the whole export
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "file").write_text("mine")
    cases = {
        "to_empty": "to_empty is a symbolic link",
        "dangling": "dangling is a symbolic link",
        "file/out": "cannot export into .*file/out",  # a path under a file
        "/proc/x": "cannot write under /proc",
        "/sys/x": "cannot write under /sys",
    }
    for target, message in cases.items():
        with pytest.raises(ValueError, match=message):
            tool.main(["token/w1", str(tmp_path / target), "--size", "small"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "empty", "file",
                                                           "to_empty"]  # fmt: skip
    assert not any(empty.iterdir()) and not os.path.lexists(tmp_path / "nowhere")


def test_a_target_another_export_writes_is_refused_and_its_build_kept(tmp_path, tool, no_work):
    out = tmp_path / "out"
    building = tmp_path / f"{export.building_prefix(out)}x1y2z3w4"
    building.mkdir()  # the other export's folder being built
    with export.ExportLock(out):  # a second export ended in "Directory not empty"
        with pytest.raises(RunBusy, match=f"out is being exported by pid {os.getpid()}"):
            tool.main(["token/w1", str(out), "--size", "small"])
        assert building.is_dir()


def test_a_killed_exports_partial_folder_is_removed_by_the_next(tmp_path, tool, monkeypatch):
    def tiny(source, path):
        path.write_text(source.split)

    monkeypatch.setitem(export.WRITERS, "parquet", tiny)
    out = tmp_path / "out"
    left = tmp_path / ".out.export.tmpk9_abc12"  # what a kill -9 leaves
    (left / "half").mkdir(parents=True)
    (left / "half" / "train.parquet").write_text("partial")
    others = [".tmpab12cd34", ".out2.export.tmpab12cd34", ".out.export.tmpQ.export.tmpab12"]
    for name in others:  # other writers', other targets'
        (tmp_path / name).mkdir()
    lines = []
    export.export("token/w1", out, size="small", log=lines.append)
    assert not left.exists()
    assert f"removed {left}: the partial export of a killed run" in lines
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", *others])
    written = sorted(p.name for p in out.iterdir())
    assert written == ["README.md", "test.parquet", "train.parquet", "validation.parquet"]


def test_the_tool_exits_2_or_1_with_one_line(tmp_path, tool, no_work, capsys):
    (tmp_path / "link").symlink_to(tmp_path)
    assert tool.run(["token/w1", str(tmp_path / "link")]) == 2
    assert tool.run(["token/w11", str(tmp_path / "a")]) == 2
    with export.ExportLock(tmp_path / "b"):
        assert tool.run(["token/w1", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("export_dataset: error: ") for line in err)


def test_a_full_disk_leaves_no_lock_file(tmp_path, tool, no_work, monkeypatch, capsys):
    """Issue 63: an export on a full disk failed writing its lock's holder line and left
    ``.NAME.export.lock`` beside the target. It fails in one line (exit 1, the disk full)
    and leaves nothing."""
    import errno

    class Full:  # the lock file's handle on a full disk: its holder line cannot be written
        def __init__(self, handle):
            self.handle = handle

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *args, **kwargs: Full(fdopen(*args, **kwargs)))
    assert tool.run(["token/w1", str(tmp_path / "out"), "--size", "small"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no space left" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_disk_filling_up_mid_export_is_one_line(tmp_path, tool, monkeypatch, capsys):
    """A writer that runs out of space (``OSError`` ENOSPC from ``open``'s file or from
    pyarrow) is one line, exit 1, with nothing left: no part, no lock."""
    import errno

    def full(source, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(export.WRITERS, "parquet", full)
    assert tool.run(["token/w1", str(tmp_path / "out"), "--size", "small"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no space left writing the export" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
