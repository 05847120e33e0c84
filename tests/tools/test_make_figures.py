"""tools/make_figures.py on synthetic results directories."""

import csv
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from pvr_keras.runconfig import Run
from pvr_keras.sweeps import FIGURES, ResultsDir
from tests import scripts
from tests.bounded import within
from tests.plots import assert_plot

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "make_figures.py"


@pytest.fixture(scope="module")
def tool():
    return scripts.load("tools/make_figures.py")


def _line(test, train=1.0, failed=False, sweep="size_window", **fields):
    run = Run.make("token", **fields)
    return {
        "id": run.run_id,
        "sweep": sweep,
        **run.to_dict(),
        "test_accuracy": test,
        "train_accuracy": train,
        "failed": failed,
    }


@pytest.fixture
def results(tmp_path):
    """A size_window sweep of 2 windows x 3 sizes x 2 seeds and a holdout sweep, one line cut."""
    results = ResultsDir(tmp_path / "results", create=True)
    lines = []
    for seed in (0, 1):
        for window in (1, 2):
            for n in (1000, 10000, 30000):
                test = min(1.0, 0.1 + n / 30000 / window) - 0.01 * seed
                lines.append(_line(test, window=window, num_examples=n, seed=seed))
    lines.append(_line(0.08, train=0.12, failed=True, window=2, num_examples=1000, seed=2))
    holdout = [
        _line(1.0, train=0.99, sweep="holdout", window=2, holdout=k, num_examples=20000)
        for k in range(3)
    ]
    holdout.append(
        _line(0.2, train=0.4, sweep="holdout", window=2, holdout=2, num_examples=20000, seed=1)
    )
    for name, mine in (("size_window", lines), ("holdout", holdout)):
        results.write_sweep(
            name, {"name": name, "figure": FIGURES[name], "run_ids": [r["id"] for r in mine]}
        )
        for line in mine:
            results.append(line)
    data = results.results.read_bytes()
    results.results.write_bytes(data[:-25])  # the last line (a holdout run) cut short
    return results


def test_draws_every_sweep_and_reports_the_cut_line(tool, results, tmp_path, capsys):
    out = tmp_path / "figures"
    written = tool.main([str(results.path), "--out", str(out)])
    names = sorted(p.name for p in written)
    assert names == [
        "holdout.csv",
        "holdout_test_accuracy.png",
        "holdout_train_accuracy.png",
        "size_window.csv",
        "size_window_test_accuracy.png",
        "size_window_train_accuracy.png",
    ]
    for path in written:
        if path.suffix == ".png":
            assert_plot(path)
    printed = capsys.readouterr().out
    assert "warning" in printed and "line 17" in printed and "truncated" in printed
    assert "size_window: 13/13 runs drawn" in printed
    assert "holdout: 3/4 runs drawn" in printed  # the cut line's run is missing, not invented
    with open(out / "size_window.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "test_accuracy"]
    by = {(r["window"], r["num_examples"]): r for r in rows}
    assert float(by["1", "30000"]["mean"]) == pytest.approx(0.995)
    assert (by["2", "1000"]["seeds"], by["2", "1000"]["failed"]) == ("2", "1")
    assert results.read()[1], "the tool only reads: the cut line is still there"


def test_default_output_folder_and_one_sweep(tool, results):
    written = tool.main([str(results.path), "--sweep", "holdout"])
    assert {p.parent for p in written} == {results.path / "figures"}
    assert all(p.name.startswith("holdout") for p in written)
    with pytest.raises(ValueError, match="received nope"):
        tool.main([str(results.path), "--sweep", "nope"])


def test_empty_or_corrupt_directories(tool, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tool.main([str(tmp_path / "missing")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="not a sweep results directory"):
        tool.main([str(tmp_path / "empty")])
    results = ResultsDir(tmp_path / "nothing", create=True)
    with pytest.raises(ValueError, match=r"no readable run record \(no lines\)"):
        tool.main([str(results.path)])
    results.results.write_text('{"id": "a", "test_acc\n{{{\n')
    with pytest.raises(ValueError, match=r"no readable run record \(2 unreadable lines\)"):
        tool.main([str(results.path)])
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "sweep.json").write_text(json.dumps({"format": "pvr-keras/sweep"}))
    with pytest.raises(ValueError, match="incompatible version"):
        tool.main([str(tmp_path / "old")])


def test_command_line_errors_exit_with_a_message(tmp_path):
    done = subprocess.run(
        [sys.executable, str(TOOL), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "make_figures: error:" in done.stderr and "not a sweep results directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_shared_by_two_sweeps_is_drawn_by_the_sweeps_that_list_it(tool, tmp_path, capsys):
    # A run first trained by one sweep ("holdout") and listed by another ("size_window")
    # whose results directory holds only the second sweep's definition (an exported study).
    results = ResultsDir(tmp_path / "results", create=True)
    shared = _line(1.0, sweep="holdout", window=2, num_examples=30000)
    own = _line(0.1, window=2, num_examples=1000)
    loose = _line(0.5, sweep="pointer", window=1, num_examples=1000)  # listed by no sweep
    for line in (shared, own, loose):
        results.append(line)
    ids = [shared["id"], own["id"]]
    results.write_sweep("size_window", {"name": "size_window", "run_ids": ids})
    written = tool.main([str(results.path), "--out", str(tmp_path / "f")])
    assert sorted({p.stem.split("_")[0] for p in written}) == ["pointer", "size"]
    printed = capsys.readouterr().out
    assert "size_window: 2/2 runs drawn" in printed and "pointer: 1/1 runs drawn" in printed
    assert "holdout" not in printed


@pytest.mark.parametrize("kind", ["link", "fifo", "deep sweep", "deep line"])
def test_a_planted_link_fifo_or_deep_json_is_one_line_exit_2(tmp_path, capsys, kind):
    """Issue 47: ``results.jsonl -> /etc/passwd`` was read through ("24 unreadable lines"),
    a FIFO there never ended, JSON 100,000 deep was a RecursionError traceback."""
    results = ResultsDir(tmp_path / "results", create=True)
    results.append(_line(0.5, window=1, num_examples=1000))
    secret = tmp_path / "secret"
    secret.write_text('{"id": "TOPSECRET-123", "test_accuracy": 1}\n' * 24)
    deep = b"[" * 100_000 + b"]" * 100_000
    if kind in ("link", "fifo"):
        results.results.unlink()
        results.results.symlink_to(secret) if kind == "link" else os.mkfifo(results.results)
    elif kind == "deep sweep":
        results.sweeps.mkdir()
        (results.sweeps / "size_window.json").write_bytes(deep)
    else:
        results.results.write_bytes(deep + b"\n")
    with within(10):
        status = scripts.exit_status("tools/make_figures.py", results.path)
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("make_figures: error:"), err
    assert err.count("\n") == 1 and "TOPSECRET" not in err, err
    assert {"link": "symbolic link", "fifo": "not a plain file", "deep sweep": "nests deeper",
            "deep line": "1 unreadable lines"}[kind] in err  # fmt: skip
    assert not (results.path / "figures").exists()


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        ({"run_ids": ["x"], "panels": 5, "discard_below": "0.5", "metrics": 5},
         "not a key of a sweep definition: discard_below, metrics, panels"),
        ({"figure": {"panels": 5}}, "figure.panels is 5"),
        ({"figure": {"discard_below": "0.5"}}, "figure.discard_below is '0.5'"),
        ({"figure": {"discard_below": 2}}, "figure.discard_below is 2"),
        ({"figure": {"discard_below": True}}, "figure.discard_below is True"),
        ({"figure": {"metrics": 5}}, "figure.metrics is 5"),
        ({"figure": {"metrics": []}}, "figure.metrics is []"),
        ({"figure": {"metrics": ["../../escaped_accuracy"]}}, "figure.metrics holds '../../"),
        ({"figure": {"metrics": ["model"]}}, "figure.metrics holds 'model'"),
        ({"figure": {"x": 5}}, "figure.x is 5"),
        ({"figure": {"title": ["a"]}}, "figure.title is ['a']"),
        ({"figure": {"colour": "red"}}, "not a key of a figure spec: colour"),
        ({"figure": 5}, "figure is 5"),
        ({"name": 5}, "name is 5"),
        ({"run_ids": [5]}, "run_ids holds 5"),
        ({"run_ids": "x"}, "run_ids is 'x'"),
    ],
)  # fmt: skip
def test_a_bad_sweep_definition_is_one_line_exit_2(tmp_path, capsys, definition, says):
    """Issue 63 item 12: a sweep file with ``panels`` 5, ``discard_below`` "0.5", ``metrics``
    5 was a traceback of make_figures.py, and import_results.py took such a study in. Both
    check a sweep's definition with one rule (``results.sweep_problem``): one line naming
    the file and the field, exit 2, nothing drawn or written."""
    study = tmp_path / "study"
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", study)
    path = study / "sweeps" / "holdout_paper.json"
    found = json.loads(path.read_text())
    figure = definition.pop("figure", found["figure"])
    if isinstance(figure, dict):  # one wrong field in the committed spec
        figure = {**found["figure"], **figure}
    path.write_text(json.dumps({**found, "figure": figure, **definition}))
    drawn, to = tmp_path / "drawn", tmp_path / "to"
    for tool, *argv in (("make_figures", study, "--out", drawn), ("import_results", study, to)):
        status = scripts.exit_status(f"tools/{tool}.py", *argv)
        err = capsys.readouterr().err
        assert status == 2 and err.startswith(f"{tool}: error: ") and err.count("\n") == 1, err
        assert str(path) in err and says in err, err
    assert not drawn.exists() and not to.exists()
    assert not list(tmp_path.rglob("escaped_accuracy*"))


def test_every_committed_sweep_definition_passes():
    """The rule of the test above takes every committed sweep."""
    from pvr_keras.sweeps.results import sweep_problem

    paths = list((REPO / "docs" / "results").rglob("sweeps/*.json"))
    assert len(paths) > 20
    for path in paths:
        assert sweep_problem(json.loads(path.read_text())) is None, path
