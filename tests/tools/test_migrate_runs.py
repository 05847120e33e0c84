"""tools/migrate_runs.py on folders it cannot migrate: one line, exit 2, never a traceback."""

import errno
import json
import os
import pathlib
import shutil

import pytest

from tests import scripts

REPO = pathlib.Path(__file__).resolve().parents[2]
GOTU = REPO / "docs" / "results" / "gotu" / "2parity"
# A record as token_pvr.py wrote it before the one run config: migrated (rewritten).
LEGACY = {"model": "mlp", "width": 1.0, "window": 2, "aggregation": "mod_sum",
          "window_mode": "cyclic", "pointer": True, "holdout": 0, "holdout_values": None,
          "num_examples": 3000, "test_examples": 500, "epochs": 1, "warmup_epochs": 2,
          "min_steps": 0, "batch_size": 1024, "optimizer": "sgd", "learning_rate": 0.05,
          "seed": 0, "backend": "tensorflow", "out": "runs/x"}  # fmt: skip


def _files(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _refused(capsys, *argv):
    """``(stdout, stderr)`` of the tool, which must end in one line on stderr, exit 2."""
    status = scripts.exit_status("tools/migrate_runs.py", *argv)
    out, err = capsys.readouterr()
    assert status == 2 and err.startswith("migrate_runs: error: "), (status, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return out, err


@pytest.mark.parametrize("summary", [[], {"config": []}, {"config": 5, "runs": []},
                                     {"config": {"recipe": 5}, "runs": 5}, "x"])  # fmt: skip
def test_a_gotu_summary_of_the_wrong_shape_is_one_line(tmp_path, capsys, summary):
    """Issue 63 item 13: ``gotu.json`` holding ``[]`` (JSON of the wrong shape) was an
    AttributeError traceback. It is named, skipped, and the tool ends in one line, exit 2,
    neither file written."""
    folder = tmp_path / "2parity"
    shutil.copytree(GOTU, folder)
    (folder / "gotu.json").write_text(json.dumps(summary))
    before = _files(tmp_path)
    out, err = _refused(capsys, tmp_path)
    assert "1 file(s) could not be read" in err
    assert f"skipped {folder / 'gotu.json'}: cannot migrate it" in out
    assert _files(tmp_path) == before


def test_a_path_too_long_is_one_line(tmp_path, capsys):
    """A 300-character file name (ENAMETOOLONG) was an OSError traceback."""
    _, err = _refused(capsys, tmp_path / ("a" * 300))
    assert "File name too long" in err


@pytest.mark.parametrize("what", ["record", "gotu"])
def test_a_folder_that_cannot_be_written_is_one_line(tmp_path, capsys, monkeypatch, what):
    """A record (or a gotu study) to migrate in a read-only folder was a PermissionError
    traceback. Each file that cannot be written is named, the others migrated, and the tool
    ends in one line, exit 2. (A read-only folder is played by the writer refusing: the
    tests may run as root, whom a folder's mode does not stop.)"""
    from pvr_keras import files

    if what == "record":
        run = tmp_path / "run"
        run.mkdir()
        (run / "record.json").write_text(json.dumps({"config": LEGACY}))
    else:
        folder = tmp_path / "2parity"
        shutil.copytree(GOTU, folder)
        summary = json.loads((folder / "gotu.json").read_text())
        del summary["config"]["kind"]  # as written before gotu.json held its whole config
        (folder / "gotu.json").write_text(json.dumps(summary))
    before = _files(tmp_path)

    def read_only(path, text):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(files, "write_text", read_only)
    out, err = _refused(capsys, tmp_path)
    assert "could not be read or written" in err, err
    assert "cannot write it (Permission denied)" in out
    assert _files(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_one_line(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "record.json").write_text(json.dumps({"config": LEGACY}))
    run.chmod(0o555)
    try:
        assert "Permission denied" in _refused(capsys, tmp_path)[0]
    finally:
        run.chmod(0o755)
