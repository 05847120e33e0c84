"""pvr_keras.files: whole files, never written through a planted link, a full disk refused
cleanly; and the locks, claims and appended results that use them."""

import errno
import os

import pytest

from pvr_keras import files
from pvr_keras.errors import DamagedFile, DiskFull, RunBusy, UnsafePath
from tests.bounded import within


def test_a_file_is_written_whole_and_a_planted_link_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "run" / "learning_curve.png"
    target.parent.mkdir()
    target.symlink_to(victim)
    # A link planted at the temporary name too (what a writer of this process would use).
    (target.parent / f".{target.name}.tmp{os.getpid()}").symlink_to(victim)
    files.write_text(target, "new")
    assert victim.read_text() == "precious"
    assert target.read_text() == "new" and not target.is_symlink()
    assert sorted(p.name for p in target.parent.iterdir()) == ["learning_curve.png"]


def test_open_file_refuses_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / ".lock").symlink_to(victim)
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        files.open_file(tmp_path / ".lock", os.O_RDWR | os.O_CREAT)
    assert victim.read_text() == "precious"


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "record.json"
    target.write_text("old")
    real_write = os.write

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(DiskFull, match="no space left on the device writing .*record.json"):
        files.write_text(target, "new" * 1000)
    monkeypatch.setattr(os, "write", real_write)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_temporaries_of_killed_writers_are_cleaned(tmp_path):
    for name in (".tmp123.model.keras", ".history.csv.tmp99", "checkpoint.tmp", ".lock",
                 "record.json"):  # fmt: skip
        (tmp_path / name).write_text("x")
    (tmp_path / ".tmpab12cd").mkdir()  # a temporary folder (a checkpoint being written)
    removed = files.clean_temporaries(tmp_path)
    assert sorted(removed) == sorted([".tmp123.model.keras", ".history.csv.tmp99",
                                      "checkpoint.tmp", ".tmpab12cd"])  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "record.json"]


def test_a_planted_run_lock_link_is_refused(tmp_path):
    from pvr_keras.training.records import RunLock

    victim = tmp_path / "victim"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").symlink_to(victim)
    with pytest.raises(UnsafePath, match=r"\.lock is a symbolic link"):
        with RunLock(run):
            pass
    assert victim.read_text() == "precious"


def test_a_busy_run_folder_is_a_one_line_error(tmp_path):
    from pvr_keras.training.records import RunLock

    with RunLock(tmp_path):
        with pytest.raises(RunBusy, match=f"in use by pid {os.getpid()}"):
            with RunLock(tmp_path):
                pass


def test_planted_claim_and_results_links_are_refused(tmp_path):
    from pvr_keras.sweeps import Claims, ResultsDir

    victim = tmp_path / "victim"
    victim.write_text("precious")
    results = ResultsDir(tmp_path / "out", create=True)
    (tmp_path / "out" / "claims").mkdir()
    (tmp_path / "out" / "claims" / "run-a.claim").symlink_to(victim)
    with pytest.raises(UnsafePath, match="run-a.claim is a symbolic link"):
        Claims(tmp_path / "out" / "claims").try_claim("run-a")
    (tmp_path / "out" / "results.jsonl").symlink_to(victim)
    with pytest.raises(UnsafePath, match="results.jsonl is a symbolic link"):
        results.append({"id": "run-a"})
    assert victim.read_text() == "precious"


def test_a_results_folder_is_never_a_runs(tmp_path):
    from pvr_keras.sweeps import ResultsDir
    from pvr_keras.sweeps.results import IncompatibleResultsError

    (tmp_path / "record.json").write_text("{}")
    with pytest.raises(IncompatibleResultsError, match="is a run's folder"):
        ResultsDir(tmp_path, create=True)
    assert not (tmp_path / "sweep.json").exists()


def test_read_npy_reads_real_arrays_whole(tmp_path):
    import numpy as np

    for array in (np.arange(12, dtype=">i4").reshape(3, 4), np.asfortranarray(np.eye(3)),
                  np.array([True, False]), np.zeros((0, 10), np.float32)):  # fmt: skip
        np.save(tmp_path / "a.npy", array)
        np.testing.assert_array_equal(files.read_npy(tmp_path / "a.npy"), array)
    with open(tmp_path / "v2.npy", "wb") as f:  # format 2.0 (a header over 64 KiB)
        np.lib.format.write_array(f, np.arange(3), version=(2, 0))
    np.testing.assert_array_equal(files.read_npy(tmp_path / "v2.npy"), np.arange(3))


def test_read_npy_checks_the_header_before_the_data(tmp_path):
    import numpy as np

    from pvr_keras.errors import DamagedFile

    path = tmp_path / "big.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False,
                                                 "shape": (2**28,)})  # fmt: skip
    os.truncate(path, 128 + 2**31)  # sparse: 2 GB of data that is never read
    seen = []

    def check(shape, dtype):
        seen.append((shape, dtype.str))
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        files.read_npy(path, check=check)
    assert seen == [((2**28,), "<f8")]
    with pytest.raises(DamagedFile, match=r"\(2,147,483,648 bytes\): more than 1,000 bytes"):
        files.read_npy(path, max_bytes=1000)
    np.save(tmp_path / "objects.npy", np.array([None]), allow_pickle=True)
    with pytest.raises(DamagedFile, match="not a NumPy .npy array of real numbers"):
        files.read_npy(tmp_path / "objects.npy")
    os.mkfifo(tmp_path / "fifo.npy")  # never blocks
    with pytest.raises(DamagedFile, match="not a plain file"):
        files.read_npy(tmp_path / "fifo.npy")
    (tmp_path / "link.npy").symlink_to(tmp_path / "objects.npy")
    with pytest.raises(UnsafePath, match="symbolic link"):
        files.read_npy(tmp_path / "link.npy")


def _planted(tmp_path):
    """A results folder and, outside it, a secret a planted path or link would reach."""
    results = tmp_path / "results"
    (results / "study").mkdir(parents=True)
    (results / "study" / "a.json").write_text('{"a": 1}')
    (tmp_path / "secret.json").write_text('{"secret": "TOPSECRET-123"}')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.json").write_text('{"secret": "TOPSECRET-123"}')
    return results


def test_read_plain_inside_a_folder_reads_nothing_outside_it(tmp_path):
    results = _planted(tmp_path)
    assert files.read_json(results / "study" / "a.json", inside=results) == {"a": 1}
    (results / "linked").symlink_to(tmp_path / "elsewhere")  # a planted folder link
    (results / "study" / "link.json").symlink_to(tmp_path / "secret.json")
    (results / "study" / "file").write_text("")
    for path, message in [
        (results / ".." / "secret.json", "is not inside"),
        (results / "study" / ".." / ".." / "elsewhere" / "secret.json", "is not inside"),
        (results / "/" / str(tmp_path / "secret.json"), "is not inside"),
        (results, "is not inside"),
        (results / "linked" / "secret.json", "linked is a symbolic link"),
        (results / "study" / "link.json", "link.json is a symbolic link"),
    ]:
        with pytest.raises(UnsafePath, match=message):
            files.read_json(path, inside=results)
    with pytest.raises(DamagedFile, match="is not a folder"):
        files.read_plain(results / "study" / "file" / "x.json", inside=results)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        files.read_plain(results / "study" / "missing.json", inside=results)


@pytest.mark.parametrize("inside", [False, True])
def test_read_plain_never_waits_on_a_fifo_nor_reads_a_folder(tmp_path, inside):
    results = _planted(tmp_path)
    os.mkfifo(results / "study" / "fifo.json")  # reading it would wait for a writer forever
    for name in ("fifo.json", "."):
        with within(5), pytest.raises(DamagedFile, match="not a plain file"):
            files.read_plain(results / "study" / name, inside=results if inside else None)


def test_json_nested_too_deeply_is_one_damaged_file(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DamagedFile, match="deep.json nests deeper than 64 levels"):
        files.read_json(path)
    path.write_text("[" * 65 + "1" + "]" * 65)  # parses, and is still refused
    with pytest.raises(DamagedFile, match="nests deeper"):
        files.read_json(path)
    path.write_text("[" * 64 + "1" + "]" * 64)
    assert files.json_depth(files.read_json(path)) == 64
    assert [files.json_depth(v) for v in (1, [], [[]], {"a": [1, {"b": []}]})] == [0, 0, 1, 3]
