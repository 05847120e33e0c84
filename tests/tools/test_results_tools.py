"""tools/holdout_analysis.py and tools/export_results.py on a tiny medium holdout sweep."""

import json
import os
import pathlib
import shutil

import pytest

from tests import scripts
from tests.bounded import within

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow  # one tiny run
def test_tiny_sweep(tmp_path, monkeypatch):
    sweep = scripts.load("recipes/token_sweep.py")
    tool = scripts.load("tools/holdout_analysis.py")
    out = tmp_path / "results" / "token"  # the layout of tools/studies/medium_studies.sh
    sweep.main(["--sweep", "holdout", "--preset", "medium", "--windows", "2", "--holdouts",
                "2", "--sizes", "1000", "--seeds", "0", "--epochs", "1", "--min-steps", "0",
                "--warmup-epochs", "0",
                "--test-examples", "400", "--no-figures", "--out", str(out)])  # fmt: skip
    # The analysis skips runs without holdout: a holdout-0 line beside the one trained (its
    # folder the same, so that only the skip keeps it out) while it runs, not a second run.
    trained = (out / "results.jsonl").read_text()
    line = json.loads(trained)
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps({**line, "id": line["id"] + "-iid", "holdout": 0}) + "\n")
    [summary] = tool.main([str(out), "--test-examples", "400", "--train-examples", "3000"])
    (out / "results.jsonl").write_text(trained)
    line = next(json.loads(s) for s in (out / "results.jsonl").read_text().splitlines()
                if json.loads(s)["holdout"] == 2)  # fmt: skip
    # The same 400 held-out test examples as the run's test set: the same accuracy.
    assert summary["accuracy"] == pytest.approx(line["test_accuracy"], abs=1.5 / 400)
    assert [t["tuple"] for t in summary["tuples"]] == [[0, 1], [1, 0]]
    assert sum(t["count"] for t in summary["tuples"]) == 400
    assert sum(summary["predicted_counts"]) == 400
    assert all(t["train_rate_given_digit_anywhere"] == [0.0, 0.0] for t in summary["tuples"])
    assert json.loads((out / "holdout_analysis.json").read_text())[0]["id"] == line["id"]
    assert (out / "holdout_analysis.csv").read_text().count("\n") == 3  # header + 2 tuples
    assert (out / "holdout_analysis.png").stat().st_size > 5000

    # Exported: a results directory of its own, without models, that redraws its figures.
    exporter = scripts.load("tools/export_results.py")
    docs = tmp_path / "docs"
    exporter.main([str(tmp_path / "results"), str(docs)])
    study = docs / "holdout"
    exported = [json.loads(s) for s in (study / "results.jsonl").read_text().splitlines()]
    recorded = [json.loads(s) for s in (out / "results.jsonl").read_text().splitlines()]
    assert exported == recorded and not (study / "runs").exists()
    assert json.loads((study / "holdout_analysis.json").read_text())[0]["id"] == line["id"]
    # The records name the results folder as RESULTS, not the exporting machine's path.
    config = json.loads((study / "config_holdout_medium.json").read_text())
    assert config["recipe"]["out"] == "RESULTS/token"
    assert str(tmp_path) not in "".join(p.read_text() for p in study.rglob("*.json"))
    from pvr_keras.sweeps import make_figures

    written = make_figures(study, log=lambda *a: None)
    assert {p.name for p in written} >= {"holdout_medium_test_accuracy.png", "holdout_medium.csv"}
    assert not (docs / "thresholds").exists()  # not run: skipped
    # A failure part-way through a study (a figure that does not draw) leaves it as it was.
    before = sorted(p.relative_to(study) for p in study.rglob("*"))
    import pvr_keras.sweeps

    def broken(*args, **kwargs):
        raise TypeError("cannot draw")

    with monkeypatch.context() as patch:
        patch.setattr(pvr_keras.sweeps, "make_figures", broken)
        with pytest.raises(TypeError, match="cannot draw"):
            exporter.main([str(tmp_path / "results"), str(docs)])
    assert sorted(p.relative_to(study) for p in study.rglob("*")) == before
    exporter.main([str(tmp_path / "results"), str(docs)])  # and a later run goes on
    assert not list(docs.glob(".*.building"))
    # Started, but no run finished: skipped too, no empty study folder.
    from pvr_keras.sweeps import ResultsDir

    ResultsDir(out).write_sweep("size_window_medium", {"run_ids": ["not-finished"]})
    exporter.main([str(tmp_path / "results"), str(docs)])
    assert not (docs / "thresholds").exists() and (docs / "holdout" / "results.jsonl").is_file()


def _listing(folder):  # the lock file is not committed (.gitignore)
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.name != ".results.lock"
    )


def test_committed_studies_go_back_into_a_results_folder_and_export_the_same(tmp_path, capsys):
    """tools/import_results.py then tools/export_results.py: the committed records of the
    paper-recipe studies and the Boolean study come back unchanged, so a study can go on on
    another machine."""
    importer = scripts.load("tools/import_results.py")
    exporter = scripts.load("tools/export_results.py")
    committed = REPO / "docs" / "results"
    studies = [committed / "holdout_paper", committed / "fast_slow_paper"]
    token, boolean = tmp_path / "results" / "token", tmp_path / "results" / "boolean"
    importer.main([*map(str, studies), str(token)])
    assert "record(s) added" in capsys.readouterr().out
    importer.main([str(committed / "boolean"), str(boolean)])
    from pvr_keras.sweeps import ResultsDir

    ids = {r["id"] for s in studies for r in ResultsDir(s).read()[0]}
    assert {r["id"] for r in ResultsDir(token).read()[0]} == ids
    importer.main([*map(str, studies), str(token)])  # again: nothing doubles
    assert len(ResultsDir(token).read()[0]) == len(ids)
    exporter.main([str(tmp_path / "results"), str(tmp_path / "docs")])
    for study in [*studies, committed / "boolean"]:
        back = tmp_path / "docs" / study.name
        assert ResultsDir(back).read() == ResultsDir(study).read()
        assert ResultsDir(back).read_sweeps() == ResultsDir(study).read_sweeps()
        assert _listing(back) == _listing(study)
        for file in study.iterdir():  # the figures of holdout_paper are drawn again
            if file.is_file() and file.name not in importer.OWN:
                assert (back / file.name).read_bytes() == file.read_bytes(), file
    with pytest.raises(importer.BadInput, match="not an exported study"):
        importer.main([str(committed), str(token)])  # not a study folder


def test_the_paper_size_window_sweep_exports_as_figure11(tmp_path):
    """tools/studies/figure11_reduced.sh's sweep (size_window_paper in RESULTS/token) is a study of
    its own, drawn, and goes back in for a later machine."""
    from pvr_keras.sweeps import ResultsDir

    thresholds = ResultsDir(REPO / "docs" / "results" / "thresholds")
    lines = [r for r in thresholds.read()[0] if r["model"] == "mixer"][:2]
    definition = thresholds.read_sweeps()["size_window_medium"]
    token = ResultsDir(tmp_path / "results" / "token", create=True)
    for line in lines:
        token.append({**line, "sweep": "size_window_paper"})
    ids = [r["id"] for r in lines]
    token.write_sweep("size_window_paper", {**definition, "name": "size_window_paper",
                                            "run_ids": [*ids, "still-running"]})  # fmt: skip
    exporter = scripts.load("tools/export_results.py")
    exporter.main([str(tmp_path / "results"), str(tmp_path / "docs")])
    study = ResultsDir(tmp_path / "docs" / "figure11")
    assert [r["id"] for r in study.read()[0]] == ids
    assert study.read_sweeps()["size_window_paper"]["run_ids"] == ids
    assert (study.path / "figures" / "size_window_paper_test_accuracy.png").stat().st_size > 5000


def _bytes(folder):
    """``{path: bytes}`` of every file under ``folder`` (the lock file aside)."""
    paths = [folder / p for p in _listing(folder)]
    return {p: p.read_bytes() for p in paths if p.is_file()}


def test_exporting_again_keeps_what_is_committed(tmp_path, capsys):
    """A second export of the same records changes no byte (manifest stamp included); a run
    trained again under a committed id keeps its committed line; a config rewritten in another
    key order is not a change; a committed run the results folder lacks stays; a new run is
    added after the committed ones."""
    from pvr_keras.sweeps import ResultsDir

    importer = scripts.load("tools/import_results.py")
    exporter = scripts.load("tools/export_results.py")
    study = REPO / "docs" / "results" / "holdout_paper"
    token = tmp_path / "results" / "token"
    importer.main([str(study), str(token)])
    docs = tmp_path / "docs"
    exporter.main([str(tmp_path / "results"), str(docs)])
    first = _bytes(docs)
    (token / "sweep.json").write_text((token / "sweep.json").read_text().replace("20", "19"))
    exporter.main([str(tmp_path / "results"), str(docs)])
    assert _bytes(docs) == first
    capsys.readouterr()

    lines = ResultsDir(token).read()[0]
    rerun = {**lines[0], "wall_time_s": lines[0]["wall_time_s"] + 1.0}
    new = {**lines[1], "id": "a-new-run", "seed": 99}
    # the results folder after a machine that lacks run 2 and trained run 0 again
    (token / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [rerun, *lines[3:], lines[1], new])
    )
    definition = ResultsDir(token).read_sweeps()["holdout_paper"]
    ResultsDir(token).write_sweep("holdout_paper", {**definition, "run_ids": ["a-new-run"]})
    config = token / "config_holdout_paper.json"
    reordered = dict(reversed(json.loads(config.read_text()).items()))
    config.write_text(json.dumps(reordered))
    exporter.main([str(tmp_path / "results"), str(docs)])
    said = capsys.readouterr().out
    assert f"not this results folder's (trained again?): {lines[0]['id']}" in said
    exported = ResultsDir(docs / "holdout_paper")
    assert exported.read()[0] == [*lines, new]
    committed = (study / "results.jsonl").read_bytes()
    assert (docs / "holdout_paper" / "results.jsonl").read_bytes().startswith(committed)
    for name in ("sweep.json", "config_holdout_paper.json"):
        assert (docs / "holdout_paper" / name).read_bytes() == first[docs / "holdout_paper" / name]
    assert exported.read_sweeps()["holdout_paper"]["run_ids"] == [r["id"] for r in [*lines, new]]


def test_export_never_drops_a_committed_file_or_row(tmp_path, capsys):
    """Issue 35 item 3: two holdout studies imported into one results folder share one
    holdout_analysis.json (the first's); exporting must keep each study's committed rows and
    files, also when the results folder has no analysis at all, and leave no lock file."""
    importer = scripts.load("tools/import_results.py")
    exporter = scripts.load("tools/export_results.py")
    committed = REPO / "docs" / "results"
    studies = [committed / "holdout", committed / "holdout_paper"]
    docs = tmp_path / "docs"
    for study in studies:
        shutil.copytree(study, docs / study.name)
    importer.main([*map(str, studies), str(tmp_path / "results" / "token")])
    for missing_analysis in (False, True):
        if missing_analysis:
            (tmp_path / "results" / "token" / "holdout_analysis.json").unlink()
        exporter.main([str(tmp_path / "results"), str(docs)])
        for study in studies:
            back = docs / study.name
            for name in ("holdout_analysis.json", "holdout_analysis.csv"):
                assert (back / name).read_bytes() == (study / name).read_bytes(), (study, name)
            assert (back / "holdout_analysis.png").is_file()
        assert not [p for p in docs.rglob(".results.lock")]


def test_the_quick_records_export_as_studies_of_their_own(tmp_path):
    """tools/studies/quick_records.sh's folders that are not sweeps (Figure 5's noise sensitivity,
    the token_pvr run, the quick CNNs) export to study folders of the same names with every file
    the README's numbers are computed from, byte for byte."""
    committed = REPO / "docs" / "results"
    results = tmp_path / "results"
    names = ("noise_sensitivity", "token_pvr_quick", "block_holdout_quick")
    for name in names:
        shutil.copytree(committed / name, results / name)
    exporter = scripts.load("tools/export_results.py")
    exporter.main([str(results), str(tmp_path / "docs")])
    for name in names:
        back = _bytes(tmp_path / "docs" / name)
        assert {p.relative_to(tmp_path / "docs" / name): b for p, b in back.items()} == {
            p.relative_to(committed / name): b for p, b in _bytes(committed / name).items()
        }
    assert (tmp_path / "docs" / "noise_sensitivity" / "noise_sensitivity.json").is_file()
    assert (
        tmp_path / "docs" / "block_holdout_quick" / "resnet18" / "iid" / "record.json"
    ).is_file()


def _planted(tmp_path, kind):
    """A results folder with one damaged thing; ``secret.json`` outside it."""
    from pvr_keras.sweeps import ResultsDir

    results, secret = tmp_path / "RESULTS", tmp_path / "secret.json"
    secret.write_text('{"secret": "TOPSECRET-123"}')
    token = ResultsDir(results / "token", create=True)
    token.append({"id": "run1", "sweep": "holdout", "test_accuracy": 1.0})
    token.write_sweep("holdout", {"name": "holdout", "run_ids": ["run1"]})
    if kind == "linked file":  # a config, copied as it is
        (token.path / "config_holdout.json").symlink_to(secret)
    elif kind == "linked folder":  # a CNN's folder of a block_holdout study
        (tmp_path / "outside").mkdir()
        shutil.copy(secret, tmp_path / "outside" / "logits.json")
        (results / "figure7").mkdir()
        (results / "figure7" / "resnet18").symlink_to(tmp_path / "outside")
        shutil.rmtree(token.path)
    elif kind == "fifo":
        token.results.unlink()
        os.mkfifo(token.results)
    elif kind == "deep sweep":  # JSON 100,000 deep: a RecursionError
        (token.sweeps / "holdout.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    else:  # a gotu task's summary, 100,000 deep
        shutil.rmtree(token.path)
        ResultsDir(results / "task", create=True)
        (results / "task" / "gotu.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return results


@pytest.mark.parametrize("kind", ["linked file", "linked folder", "fifo", "deep sweep",
                                  "deep gotu"])  # fmt: skip
def test_export_refuses_a_link_fifo_or_deep_json_in_one_line(tmp_path, capsys, kind):
    """Issue 47: ``RESULTS/token/config_holdout.json -> /outside.json`` was copied into
    docs/results; a link, a FIFO or JSON 100,000 deep is one line, exit 2, nothing written."""
    results = _planted(tmp_path, kind)
    docs = tmp_path / "docs"
    with within(10):
        status = scripts.exit_status("tools/export_results.py", results, docs)
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("export_results: error:"), err
    assert err.count("\n") == 1 and "TOPSECRET" not in err, err
    assert {"linked file": "config_holdout.json is a symbolic link",
            "linked folder": "resnet18 is a symbolic link", "fifo": "not a plain file",
            "deep sweep": "holdout.json nests deeper", "deep gotu": "gotu.json nests deeper"
            }[kind] in err  # fmt: skip
    assert not docs.exists() or not [p for p in docs.rglob("*") if p.is_file()]


def test_a_gotu_export_writes_the_config_of_the_grid_it_analysed(tmp_path, capsys):
    """A gotu task folder whose config_gotu.json a later call rewrote (started with other
    seeds, stopped before its analysis) exports the config of the grid gotu.json analysed."""
    exporter = scripts.load("tools/export_results.py")
    committed = REPO / "docs" / "results" / "gotu" / "2parity"
    task = tmp_path / "results" / "2parity"
    shutil.copytree(committed, task)
    later = json.loads((task / "config_gotu.json").read_text())
    later["grid"] = {"seed": [4, 5]}
    later["run"]["seed"] = 4
    (task / "config_gotu.json").write_text(json.dumps(later, indent=2) + "\n")
    exporter.main([str(tmp_path / "results"), str(tmp_path / "docs")])
    back = tmp_path / "docs" / "gotu" / "2parity"
    assert (back / "config_gotu.json").read_bytes() == (committed / "config_gotu.json").read_bytes()
    assert json.loads((back / "config_gotu.json").read_text())["grid"] == {"seed": [1, 2, 3]}


class Killed(BaseException):  # not an Exception: no ``except Exception`` of the tool takes it
    """A kill -9 of the export at this step: nothing after it runs."""


def _half_removed(path):
    """What a kill part-way through ``shutil.rmtree(path)`` leaves: half its files gone."""
    found = sorted(p for p in pathlib.Path(path).rglob("*") if p.is_file())
    for file in found[: len(found) // 2]:
        file.unlink()


def _killed_export(exporter, results, docs, monkeypatch, at):
    """An export of ``results`` into ``docs`` killed before its ``at``-th rename, replace or
    removal of a tree under ``docs`` (a removal killed half-way); returns the number of such
    steps when it finished (``at`` beyond them), None when killed."""
    steps = [0]
    rename, replace, rmtree = os.rename, os.replace, shutil.rmtree

    def step(*paths):
        if any(str(p).startswith(str(docs)) for p in paths):
            steps[0] += 1
            return steps[0] == at
        return False

    def killed_rename(source, target, *args, **kwargs):
        if step(source, target):
            raise Killed
        return rename(source, target, *args, **kwargs)

    def killed_replace(source, target, *args, **kwargs):
        if step(source, target):
            raise Killed
        return replace(source, target, *args, **kwargs)

    def killed_rmtree(path, *args, **kwargs):
        if step(path):
            if os.path.isdir(path):
                _half_removed(path)
            raise Killed
        return rmtree(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "rename", killed_rename)
        patch.setattr(os, "replace", killed_replace)
        patch.setattr(shutil, "rmtree", killed_rmtree)
        try:
            exporter.export(results, docs, log=lambda *a: None)
        except Killed:
            return None
    return steps[0]


def test_an_export_killed_at_any_step_loses_no_committed_line(tmp_path, monkeypatch):
    """Issue 63 item 3: an export killed between removing the committed study and renaming
    the new one in left the only copy in ``.NAME.building``, which the next export removed
    first (a committed line the results folder lacks was lost). Killed before each of its
    steps (a removal killed half-way), and the next export killed again early: at every
    moment some folder holds every committed line, and the export after holds them all and
    leaves nothing beside the study."""
    from pvr_keras.sweeps import ResultsDir

    exporter = scripts.load("tools/export_results.py")
    committed = REPO / "docs" / "results" / "fast_slow_paper"  # copied, not drawn: quick
    lines = ResultsDir(committed).read()[0]
    ids = {r["id"] for r in lines}
    definition = ResultsDir(committed).read_sweeps()["fast_slow_paper"]

    def start(folder):
        """A committed study and a results folder that lacks one of its runs."""
        docs, results = folder / "docs", folder / "results"
        shutil.copytree(committed, docs / "fast_slow_paper")
        token = ResultsDir(results / "token", create=True)
        for line in lines[1:]:
            token.append(line)
        token.write_sweep("fast_slow_paper", {**definition, "run_ids": sorted(ids)})
        return docs, results

    def held(docs):  # a folder beside the study (or the study) holding every committed line
        folders = [p for p in docs.iterdir() if (p / "results.jsonl").is_file()]
        return any(ids <= {r["id"] for r in ResultsDir(p).read()[0]} for p in folders)

    docs, results = start(tmp_path / "legacy")  # as the earlier export left it, killed
    (docs / "fast_slow_paper").rename(docs / ".fast_slow_paper.building")
    exporter.export(results, docs, log=lambda *a: None)
    assert [r["id"] for r in ResultsDir(docs / "fast_slow_paper").read()[0]] == [
        r["id"] for r in lines
    ]
    docs, results = start(tmp_path / "count")
    steps = _killed_export(exporter, results, docs, monkeypatch, at=0)
    assert steps and held(docs)
    for at in range(1, steps + 1):
        for again in (None, 1, 2, 3):  # the next export killed too, early (its recovery)
            docs, results = start(tmp_path / f"{at}_{again}")
            assert _killed_export(exporter, results, docs, monkeypatch, at) is None
            assert held(docs), (at, sorted(p.name for p in docs.iterdir()))
            if again is not None:
                _killed_export(exporter, results, docs, monkeypatch, again)
                assert held(docs), (at, again, sorted(p.name for p in docs.iterdir()))
            exporter.export(results, docs, log=lambda *a: None)
            study = docs / "fast_slow_paper"
            assert [r["id"] for r in ResultsDir(study).read()[0]] == [r["id"] for r in lines], (
                at,
                again,
            )
            assert sorted(p.name for p in docs.iterdir()) == ["fast_slow_paper"], (at, again)


HUGE = "1" + "0" * 400  # a whole number no accuracy, count or array of NumPy holds


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("test_accuracy", "7.5", "test_accuracy is 7.5"),
        ("test_accuracy", "-3", "test_accuracy is -3"),
        ("test_accuracy", HUGE, "test_accuracy is a whole number of 401 digits"),
        ("iid_test_accuracy", "1.5", "iid_test_accuracy is 1.5"),
        ("iid_test_accuracy", '"0.5"', "iid_test_accuracy is '0.5'"),
        ("curve_test_accuracy", "[0.5, 2.0]", "curve_test_accuracy holds 2.0"),
        ("epochs_completed", "-1", "epochs_completed is -1"),
        ("num_examples", HUGE, "num_examples is a whole number of 401 digits"),
        ("num_params", "-5", "num_params is -5"),
        ("num_params", "5.5", "num_params is 5.5"),
        ("wall_time_s", "-2.0", "wall_time_s is -2.0"),
        ("seed", "1" + "0" * 30, "seed is a whole number of 31 digits"),
        ("curve_epoch", "[1, -2]", "curve_epoch holds -2"),
        ("holdout_values", f"[1, {HUGE}]", "holdout_values holds a whole number of 401"),
    ],
)
def test_import_refuses_numbers_no_run_records(tmp_path, capsys, field, value, says):
    """Issue 63 item 7: accuracies of 7.5, -3 and a 400-digit whole number were taken in
    (the figures then drew a mean accuracy of 3.06, or crashed). Each field is checked for
    its kind and range: one line naming the file, the line and the field; nothing written."""
    study = tmp_path / "holdout_paper"
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", study)
    lines = (study / "results.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record[field] = "SENTINEL"
    lines[1] = json.dumps(record).replace('"SENTINEL"', value)
    (study / "results.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "target"
    status = scripts.exit_status("tools/import_results.py", study, target)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert f"{study / 'results.jsonl'}, line 2" in err and says in err, err
    assert not target.exists()


def test_every_committed_line_is_a_run_record():
    """The rule of the test above takes every line of every committed study."""
    from pvr_keras.sweeps import ResultsDir
    from pvr_keras.sweeps.results import line_problem

    studies = [p.parent for p in (REPO / "docs" / "results").rglob("sweep.json")]
    assert len(studies) > 10
    for study in studies:
        for record in ResultsDir(study).read()[0]:
            assert line_problem(record) is None, (study, record["id"], line_problem(record))
