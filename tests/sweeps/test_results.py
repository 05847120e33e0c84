import json
import os
import shutil

import pandas as pd
import pytest

from pvr_keras.errors import DamagedFile, UnsafePath
from pvr_keras.sweeps import (
    FORMAT,
    FORMAT_VERSION,
    IncompatibleResultsError,
    ResultsDir,
    parse_lines,
)
from tests.bounded import within
from tests.spawn import start


def _line(i, **extra):
    return {"id": f"run{i}", "test_accuracy": i / 10, "curve": [0.1, 0.2], **extra}


def test_append_once_per_id_and_pandas_reads_it(tmp_path):
    results = ResultsDir(tmp_path / "r", create=True)
    assert results.append(_line(1)) and results.append(_line(2))
    assert not results.append(_line(1, test_accuracy=0.99))  # recorded already
    frame = pd.read_json(results.results, lines=True)
    assert frame["id"].tolist() == ["run1", "run2"]
    assert frame["test_accuracy"].tolist() == [0.1, 0.2]
    assert frame["curve"].tolist() == [[0.1, 0.2], [0.1, 0.2]]
    manifest = json.loads((tmp_path / "r" / "sweep.json").read_text())
    assert (manifest["format"], manifest["format_version"]) == (FORMAT, FORMAT_VERSION)


def test_truncated_last_line_is_reported_skipped_and_repaired(tmp_path):
    results = ResultsDir(tmp_path, create=True)
    results.append(_line(1))
    results.append(_line(2))
    whole = results.results.read_bytes()
    # A writer killed mid-line leaves part of a line and no newline.
    results.results.write_bytes(whole + json.dumps(_line(3)).encode()[:17])
    records, problems = results.read()
    assert [r["id"] for r in records] == ["run1", "run2"]
    assert len(problems) == 1 and "line 3" in problems[0] and "truncated" in problems[0]
    # The next append starts a new line: the fragment never swallows a good record.
    assert results.append(_line(3))
    records, problems = results.read()
    assert [r["id"] for r in records] == ["run1", "run2", "run3"] and len(problems) == 1
    assert pd.read_json(results.results, lines=True, nrows=2)["id"].tolist() == ["run1", "run2"]
    assert results.repair() == problems
    assert results.read() == (records, [])
    assert pd.read_json(results.results, lines=True)["id"].tolist() == ["run1", "run2", "run3"]
    assert b'{"id": "run3", "t\n' == (tmp_path / "results.corrupt").read_bytes()
    assert results.repair() == []  # clean now


def test_parse_lines_reports_each_kind_of_bad_line():
    data = b'{"id": "a"}\n[1, 2]\n{"x": 1}\n{"id": "a"}\n\n{"id": "b", "v": \xff}\n{"id": "c"}'
    records, problems = parse_lines(data)
    assert [r["id"] for r in records] == ["a", "c"]
    assert len(problems) == 4
    assert "line 2" in problems[0] and "without an 'id'" in problems[0]
    assert "line 4" in problems[2] and "recorded twice" in problems[2]
    assert "line 6" in problems[3]


def _append_ids(folder, worker):
    """A worker appending ids 0..29, the same ids in every worker."""
    mine = ResultsDir(folder)
    for i in range(30):
        mine.append(_line(i, worker=worker, pad="x" * 5000))


def test_append_checks_ids_across_processes(tmp_path):
    """Many processes appending the same ids at once: every id recorded once, no bad line."""
    results = ResultsDir(tmp_path, create=True)
    workers = [start(_append_ids, tmp_path, worker) for worker in range(4)]
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    records, problems = results.read()
    assert problems == []
    assert sorted(r["id"] for r in records) == sorted(f"run{i}" for i in range(30))


def test_not_a_results_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ResultsDir(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(FileNotFoundError, match=r"no sweep.json there \(found: notes.txt\)"):
        ResultsDir(tmp_path)


@pytest.mark.parametrize(
    "manifest",
    [
        {"format": FORMAT, "format_version": FORMAT_VERSION + 1},
        {"format": "something-else", "format_version": FORMAT_VERSION},
        [1, 2],
    ],
)
def test_incompatible_version_is_a_clear_error(tmp_path, manifest):
    (tmp_path / "sweep.json").write_text(json.dumps(manifest))
    with pytest.raises(IncompatibleResultsError, match="incompatible version"):
        ResultsDir(tmp_path)
    with pytest.raises(IncompatibleResultsError, match="incompatible version"):
        ResultsDir(tmp_path, create=True)


def test_manifest_not_json(tmp_path):
    (tmp_path / "sweep.json").write_text("{")
    with pytest.raises(IncompatibleResultsError, match="not valid JSON"):
        ResultsDir(tmp_path)


def test_sweep_definitions_grow(tmp_path):
    results = ResultsDir(tmp_path, create=True)
    assert results.write_sweep("a", {"name": "a", "run_ids": ["x", "y"], "figure": None}) == (0, 2)
    assert results.write_sweep("a", {"name": "a", "run_ids": ["y", "x"], "figure": None}) == (2, 2)
    assert results.write_sweep("a", {"name": "a", "run_ids": ["z", "x"], "figure": None}) == (2, 3)
    assert results.read_sweeps()["a"]["run_ids"] == ["x", "y", "z"]
    results.write_sweep("b", {"name": "b", "run_ids": ["x"], "figure": {"x": "holdout"}})
    assert results.read_sweeps()["b"] == {"name": "b", "run_ids": ["x"], "figure": {"x": "holdout"}}


def test_a_record_must_be_one_line(tmp_path):
    results = ResultsDir(tmp_path, create=True)
    assert results.append({"id": "a", "text": "two\nlines"})  # escaped by JSON: one line
    assert results.read()[0][0]["text"] == "two\nlines"


def test_merge_takes_in_an_exported_study_without_touching_what_is_here(tmp_path):
    study = ResultsDir(tmp_path / "docs" / "study", create=True)
    for i in (1, 2):
        study.append(_line(i))
    study.write_sweep("s", {"name": "s", "run_ids": ["run1", "run2"], "figure": None})
    here = ResultsDir(tmp_path / "here", create=True)
    here.append(_line(2, test_accuracy=0.99))  # trained here too: this line stays
    here.append(_line(3))
    here.write_sweep("s", {"name": "s", "run_ids": ["run3", "run2"], "figure": None})
    assert here.merge(study.path) == (1, ["s"])
    records = {r["id"]: r for r in here.read()[0]}
    assert sorted(records) == ["run1", "run2", "run3"]
    assert records["run2"]["test_accuracy"] == 0.99 and records["run1"] == _line(1)
    assert here.read_sweeps()["s"]["run_ids"] == ["run3", "run2", "run1"]
    assert here.merge(study) == (0, ["s"])  # again: nothing more
    assert len(here.read()[0]) == 3 and not here.read()[1]
    assert not (here.path / "runs").exists()


def test_merge_refuses_itself_and_bad_lines(tmp_path):
    here = ResultsDir(tmp_path / "here", create=True)
    with pytest.raises(ValueError, match="into itself"):
        here.merge(tmp_path / "here" / ".")
    other = ResultsDir(tmp_path / "other", create=True)
    other.append(_line(1))
    with open(other.results, "ab") as f:
        f.write(b'{"id": "cut')
    with pytest.raises(ValueError, match="1 bad line.*repair"):
        here.merge(other)
    assert here.read() == ([], [])
    with pytest.raises(FileNotFoundError, match="not a sweep results directory"):
        here.merge(tmp_path)


DEEP = b"[" * 100_000 + b"]" * 100_000  # json.loads: RecursionError


@pytest.mark.parametrize("where", ["results.jsonl", "sweep.json", "sweeps", "sweeps/s.json"])
def test_a_planted_link_in_a_results_folder_is_never_read_through(tmp_path, where):
    results = ResultsDir(tmp_path / "r", create=True)
    results.append(_line(1))
    results.write_sweep("s", {"name": "s", "run_ids": ["run1"]})
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.json").write_text('{"run_ids": ["TOPSECRET"]}')
    (secret / "file").write_text(json.dumps({"id": "TOPSECRET", "format": FORMAT,
                                             "format_version": FORMAT_VERSION}))  # fmt: skip
    planted = results.path / where
    shutil.rmtree(planted) if planted.is_dir() else planted.unlink()
    planted.symlink_to(secret if where == "sweeps" else secret / "file")
    with pytest.raises(UnsafePath, match="symbolic link"):
        again = ResultsDir(results.path)
        again.read(), again.read_sweeps()


def test_a_fifo_results_file_is_refused_without_waiting(tmp_path):
    results = ResultsDir(tmp_path, create=True)
    os.mkfifo(results.results)  # reading it would wait for a writer forever
    with within(5), pytest.raises(DamagedFile, match="not a plain file"):
        results.read()
    with within(5), pytest.raises(DamagedFile, match="not a plain file"):
        results.append(_line(1))


def test_json_nested_too_deeply_is_a_bad_line_or_one_error(tmp_path):
    results = ResultsDir(tmp_path, create=True)
    results.append(_line(1))
    with open(results.results, "ab") as f:
        f.write(DEEP + b"\n")
    records, problems = results.read()
    assert [r["id"] for r in records] == ["run1"]
    assert len(problems) == 1
    assert "line 2: not a whole JSON record (nested too deeply)" in problems[0]
    results.sweeps.mkdir()
    (results.sweeps / "s.json").write_bytes(DEEP)
    with pytest.raises(DamagedFile, match="s.json nests deeper"):
        results.read_sweeps()
    (results.sweeps / "s.json").write_text('{"name": "s"}')
    with pytest.raises(DamagedFile, match="s.json is not a sweep definition"):
        results.read_sweeps()
    (results.path / "sweep.json").write_bytes(DEEP)
    with pytest.raises(IncompatibleResultsError, match="sweep.json nests deeper"):
        ResultsDir(tmp_path)
