"""tools/import_results.py reads and checks every study and the target before it writes
anything: a damaged input is one line naming the file (exit 2), never a traceback, a hang or
a file written in the wrong place (issue 35, items 4-6)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests import scripts

REPO = pathlib.Path(__file__).resolve().parents[2]
STUDY = REPO / "docs" / "results" / "holdout_paper"
TOOL = REPO / "tools" / "import_results.py"


def _run(*args, cwd):
    return subprocess.run(
        [sys.executable, str(TOOL), *map(str, args)],
        capture_output=True, text=True, timeout=60, cwd=cwd,
    )  # fmt: skip


def _damage(kind, study, tmp_path):
    """Damages a copy of a committed study; returns the file the message must name."""
    results, sweep = study / "results.jsonl", study / "sweeps" / "holdout_paper.json"
    lines = results.read_text().splitlines()
    if kind == "truncated line":
        results.write_text("\n".join(lines[:-1] + [lines[-1][:40]]) + "\n")
    elif kind == "duplicate id":
        results.write_text("\n".join(lines + lines[:1]) + "\n")
    elif kind == "missing id":
        first = json.loads(lines[0])
        del first["id"]
        results.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    elif kind == "sweep.json not JSON":
        (study / "sweep.json").write_text("{not json")
        return study / "sweep.json"
    elif kind == "results.jsonl a folder":
        results.unlink()
        results.mkdir()
    elif kind == "results.jsonl a FIFO":
        results.unlink()
        os.mkfifo(results)
    elif kind == "sweep without run_ids":
        definition = json.loads(sweep.read_text())
        del definition["run_ids"]
        sweep.write_text(json.dumps(definition))
        return sweep
    elif kind == "a link in the study":
        outside = tmp_path / "secret.txt"
        outside.write_text("outside the study")
        (study / "notes.txt").symlink_to(outside)
        return study / "notes.txt"
    return results


DAMAGES = ["truncated line", "duplicate id", "missing id", "sweep.json not JSON",
           "results.jsonl a folder", "results.jsonl a FIFO", "sweep without run_ids",
           "a link in the study"]  # fmt: skip


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_study_is_one_line_and_writes_nothing(kind, tmp_path):
    study = tmp_path / "holdout_paper"
    shutil.copytree(STUDY, study)
    named = _damage(kind, study, tmp_path)
    target = tmp_path / "target"
    done = _run(study, target, cwd=tmp_path)
    assert done.returncode == 2, (kind, done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(named) in done.stderr, (kind, done.stderr)
    assert not target.exists()


def test_a_target_inside_a_run_folder_or_with_links_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "record.json").write_text("{}")
    done = _run(STUDY, run / "T8", cwd=tmp_path)
    assert done.returncode == 2 and "inside a run folder" in done.stderr, done.stderr
    assert not (run / "T8").exists()

    target = tmp_path / "target"
    target.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (target / "sweeps").symlink_to(elsewhere)
    done = _run(STUDY, target, cwd=tmp_path)
    assert done.returncode == 2 and "is a link" in done.stderr, done.stderr
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in target.iterdir()) == [
        "sweeps"
    ]

    done = _run(STUDY, STUDY / "inner", cwd=tmp_path)
    assert done.returncode == 2 and "into itself" in done.stderr
    assert not (STUDY / "inner").exists()

    a_file = tmp_path / "a_file"
    a_file.write_text("")
    done = _run(STUDY, a_file, cwd=tmp_path)
    assert done.returncode == 2 and "is a file" in done.stderr


def test_a_whole_study_still_imports(tmp_path):
    done = _run(STUDY, tmp_path / "target", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = len((STUDY / "results.jsonl").read_text().splitlines())
    assert f"{records} record(s) added" in done.stdout


def test_a_study_in_progress_imports_and_names_the_runs_still_to_train(tmp_path):
    # An export of a sweep that has not finished names runs it has no record of yet: taken
    # in, its recorded runs are skipped and the others trained when the sweep goes on.
    study = tmp_path / "study"
    shutil.copytree(STUDY, study)
    sweep = study / "sweeps" / "holdout_paper.json"
    definition = json.loads(sweep.read_text())
    definition["run_ids"] += ["mlp-not-there-1", "mlp-not-there-2"]
    sweep.write_text(json.dumps(definition))
    done = _run(study, tmp_path / "target", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 of its" in done.stdout and "not recorded yet" in done.stdout
    records = len((STUDY / "results.jsonl").read_text().splitlines())
    assert f"{records} record(s) added" in done.stdout


def test_every_committed_study_passes_the_checks():
    importer = scripts.load("tools/import_results.py")
    studies = sorted(p.parent for p in (REPO / "docs" / "results").rglob("sweep.json"))
    assert len(studies) >= 20
    for study in studies:
        importer.check_study(study)


def _with_line(study, change):
    """The study with its first line changed by ``change`` (a dict of fields; None deletes)."""
    results = study / "results.jsonl"
    lines = results.read_text().splitlines()
    first = json.loads(lines[0])
    first.update(change)
    first = {k: v for k, v in first.items() if v is not None}
    results.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")


NOT_A_RUN = [
    ("the issue's line", "not a run record: no status, failed, epochs_completed"),
    ("NaN accuracy", "test_accuracy is nan"),
    ("infinite curve value", "curve_test_accuracy holds inf"),
    ("NaN loss of a finished run", "train_loss is nan"),
    ("failed a string", "failed is 'no', not true or false"),
    ("epochs a bool", "epochs_completed is True, not a whole number"),
    ("a line 100,000 deep", "nests deeper than 64 levels"),
    ("a sweep 100,000 deep", "nests deeper than 64 levels"),
]


@pytest.mark.parametrize("kind, message", NOT_A_RUN)
def test_a_line_that_is_no_finished_runs_record_is_one_line_and_writes_nothing(
    kind, message, tmp_path, capsys
):
    """Issue 47 item 19: ``{"id":"nanrun","test_accuracy":NaN,"sweep":"holdout"}`` was taken
    in as a record; item 8: JSON 100,000 deep was a RecursionError traceback."""
    study = tmp_path / "holdout_paper"
    shutil.copytree(STUDY, study)
    results, named = study / "results.jsonl", study / "results.jsonl"
    if kind == "the issue's line":
        with open(results, "a") as f:
            f.write('{"id":"nanrun","test_accuracy":NaN,"sweep":"holdout"}\n')
    elif kind == "NaN accuracy":
        _with_line(study, {"test_accuracy": float("nan")})
    elif kind == "infinite curve value":
        _with_line(study, {"curve_test_accuracy": [0.5, float("inf")]})
    elif kind == "NaN loss of a finished run":  # only a run whose loss became NaN has one
        _with_line(study, {"train_loss": float("nan"), "status": "complete"})
    elif kind == "failed a string":
        _with_line(study, {"failed": "no"})
    elif kind == "epochs a bool":
        _with_line(study, {"epochs_completed": True})
    elif kind == "a line 100,000 deep":
        with open(results, "a") as f:
            f.write("[" * 100_000 + "]" * 100_000 + "\n")
    else:
        named = study / "sweeps" / "holdout_paper.json"
        named.write_text("[" * 100_000 + "]" * 100_000)
    target = tmp_path / "target"
    assert scripts.exit_status("tools/import_results.py", study, target) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(named) in err and message in err, err
    assert not target.exists()


def test_a_run_whose_loss_became_nan_still_imports(tmp_path):
    """The training loop records a NaN run's losses as they were (status "nan", failed)."""
    importer = scripts.load("tools/import_results.py")
    study = tmp_path / "holdout_paper"
    shutil.copytree(STUDY, study)
    nan = float("nan")
    _with_line(study, {"status": "nan", "failed": True, "train_loss": nan, "test_loss": nan,
                       "curve_train_loss": [2.3, nan]})  # fmt: skip
    importer.check_study(study)
    _with_line(study, {"test_accuracy": nan})  # its accuracies are numbers all the same
    with pytest.raises(importer.BadInput, match="test_accuracy is nan"):
        importer.check_study(study)
