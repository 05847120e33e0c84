"""Reading a run folder or a results line never runs code the user did not name.

Each case plants a Python file that writes a marker file when imported, names it in a record
(a builder by ``model`` / ``model_source``, a task kind by ``kind`` / ``kind_source``) and
reads the record through an entry point: nothing may write the marker unless the user opts in
(``trust_code=True`` / ``--trust-code``, and then only for the file the run trained with)."""

import json
import pathlib
import subprocess
import sys
import zipfile

import pytest

from pvr_keras import files, registry
from pvr_keras.errors import UntrustedCode
from pvr_keras.runconfig import Run
from pvr_keras.sweeps import FIGURES, ResultsDir

REPO = pathlib.Path(__file__).resolve().parents[1]


def _plant(folder, marker, name="evil.py", body="def mlp(**kwargs):\n    return None\n"):
    path = folder / name
    path.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n{body}")
    return path


def _run_folder(folder, model_file=None, *, sha256=None, config=None, **more):
    """A finished run folder whose record names ``model_file``'s ``mlp`` as its builder (or
    holds ``config``)."""
    from pvr_keras.training import records

    folder.mkdir(parents=True)
    if config is None:
        config = Run.make("token", model=f"{model_file}:mlp").to_dict()
        more["model_source"] = str(model_file)
    record = {
        "format": records.FORMAT, "format_version": records.FORMAT_VERSION,
        "status": "complete", "config": config, "final": {}, "history": {}, **more,
        **({"model_source_sha256": sha256} if sha256 else {}),
    }  # fmt: skip
    (folder / "record.json").write_text(json.dumps(record))
    with zipfile.ZipFile(folder / "model.keras", "w") as archive:  # a zip, not a model
        archive.writestr("config.json", "{}")
    return folder


@pytest.fixture
def planted(tmp_path):
    marker = tmp_path / "marker"
    return marker, _plant(tmp_path, marker)


def test_load_run_imports_no_code_a_record_names(planted, tmp_path):
    from pvr_keras import training

    marker, evil = planted
    folder = _run_folder(tmp_path / "run", evil)
    with pytest.raises(UntrustedCode, match="names code to import.*--trust-code"):
        training.load_run(folder)
    assert not marker.exists()


def test_trust_code_imports_only_the_file_the_run_trained_with(planted, tmp_path):
    from pvr_keras import training

    marker, evil = planted
    other = _run_folder(tmp_path / "other", evil, sha256="0" * 64)  # another file's hash
    with pytest.raises(UntrustedCode, match="not the file"):
        training.load_run(other, trust_code=True)
    unhashed = _run_folder(tmp_path / "unhashed", evil)
    with pytest.raises(UntrustedCode, match="records no SHA-256"):
        training.load_run(unhashed, trust_code=True)
    assert not marker.exists()
    # The recorded file, opted in: imported (then the stand-in model.keras fails to load).
    mine = _run_folder(tmp_path / "mine", evil, sha256=files.sha256(evil))
    with pytest.raises(ValueError):
        training.load_run(mine, trust_code=True)
    assert marker.exists()


def test_a_task_kind_named_by_a_record_is_not_imported(tmp_path):
    from pvr_keras import training

    marker = tmp_path / "marker"
    kind_file = _plant(tmp_path, marker, "evil_kind.py", "KIND = None\n")
    config = {"kind": f"{kind_file}:KIND", "model": "mlp", "seed": 0}
    folder = _run_folder(tmp_path / "run", config=config, kind_source=str(kind_file))
    with pytest.raises(UntrustedCode):
        training.load_run(folder)
    assert not marker.exists()


def test_evaluate_refuses_in_one_line(planted, tmp_path):
    marker, evil = planted
    folder = _run_folder(tmp_path / "run", evil)
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "evaluate.py"), str(folder)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--trust-code" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists()


def test_drawing_and_migrating_records_import_no_kind(tmp_path):
    """make_figures.py and migrate_runs.py --check on records of a kind of someone's own
    code: they draw / check without importing it."""
    marker = tmp_path / "marker"
    kind_file = _plant(tmp_path, marker, "evil_kind.py", "KIND = None\n")
    results = ResultsDir(tmp_path / "results", create=True)
    lines = []
    for n in (1000, 3000):
        run = Run.make("token", num_examples=n)
        lines.append({"id": run.run_id, "sweep": "size_window", **run.to_dict(),
                      "kind": f"{kind_file}:KIND", "test_accuracy": 0.5,
                      "train_accuracy": 1.0, "failed": False})  # fmt: skip
    results.write_sweep("size_window", {"name": "size_window", "figure": FIGURES["size_window"],
                                        "run_ids": [r["id"] for r in lines]})  # fmt: skip
    for line in lines:
        results.append(line)
    run_dir = tmp_path / "results" / "runs" / "r"
    run_dir.mkdir(parents=True)
    (run_dir / "record.json").write_text(json.dumps({"config": {"kind": f"{kind_file}:KIND"}}))
    for tool, args in (("make_figures.py", []), ("migrate_runs.py", ["--check"])):
        done = subprocess.run(
            [sys.executable, str(REPO / "tools" / tool), str(results.path), *args],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, (tool, done.stderr[-2000:])
        assert not marker.exists(), tool
    assert (results.path / "figures" / "size_window_test_accuracy.png").is_file()


def test_a_reference_the_user_names_is_theirs(planted):
    """The opt-in of the command line: a reference given by the user may be imported while a
    record is read (the recipes trust every reference given as a flag)."""
    marker, evil = planted
    with registry.reading("a record"), pytest.raises(UntrustedCode):
        registry.load_module(str(evil))
    registry.trust(f"{evil}:mlp")
    with registry.reading("a record"):
        registry.load_module(str(evil))
    assert marker.exists()


@pytest.fixture
def planted_package(tmp_path, monkeypatch):
    """A package ``runz_<n>`` on the import path whose ``__init__`` writes a marker, with a
    plain ``nets.py`` builder module: ``(marker, package name)``."""
    marker = tmp_path / "marker"
    name = f"runz_{tmp_path.name.replace('-', '_')}"
    package = tmp_path / "path" / name
    package.mkdir(parents=True)
    _plant(package, marker, "__init__.py", "")
    (package / "nets.py").write_text("def mlp(**kwargs):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path / "path"))
    yield marker, name
    for loaded in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[loaded]


def test_a_dotted_reference_is_found_without_running_its_package(planted_package, tmp_path):
    """Finding a module reference's source (to check the name, to read a builder's flags)
    runs no package ``__init__``; reading a record naming it refuses before importing."""
    from pvr_keras import training
    from pvr_keras.cli import model_flags

    marker, name = planted_package
    assert registry.source_file(f"{name}.nets").name == "nets.py"
    assert model_flags.builder_source(f"{name}.nets:mlp")[0].name == "nets.py"
    config = Run.make("token", model=f"{name}.nets:mlp").to_dict()
    folder = _run_folder(tmp_path / "run", config=config)
    for trust_code in (False, True):  # --trust-code covers files, not a module's package
        with pytest.raises(UntrustedCode, match=f"--trust-module {name}.nets"):
            training.load_run(folder, trust_code=trust_code)
    assert not marker.exists()
    registry.trust_module(f"{name}.nets")  # the user names it: now it may be imported
    with pytest.raises(ValueError):  # the stand-in model.keras does not load
        training.load_run(folder)
    assert marker.exists()


def test_trust_code_runs_the_hashed_bytes_not_a_planted_pyc(planted, tmp_path):
    """A ``.pyc`` beside the recorded file, with the file's mtime and size in its header
    (what Python's cache checks), is never run: the checked source is compiled instead."""
    import importlib.util
    from importlib import _bootstrap_external

    from pvr_keras import training

    marker, _ = planted
    nets = tmp_path / "nets.py"
    nets.write_text("def mlp(**kwargs):\n    return None\n")
    evil_code = compile(f"open({str(marker)!r}, 'w').write('ran')\nmlp = None\n", "x", "exec")
    info = nets.stat()
    pyc = pathlib.Path(importlib.util.cache_from_source(str(nets)))
    pyc.parent.mkdir()
    pyc.write_bytes(_bootstrap_external._code_to_timestamp_pyc(evil_code, info.st_mtime,
                                                               info.st_size))  # fmt: skip
    folder = _run_folder(tmp_path / "run", nets, sha256=files.sha256(nets))
    with pytest.raises(ValueError):  # imported, then the stand-in model.keras fails to load
        training.load_run(folder, trust_code=True)
    assert not marker.exists()
    assert callable(registry.resolve(f"{nets}:mlp"))


def test_a_file_swapped_after_the_check_is_not_run(planted, tmp_path, monkeypatch):
    """The SHA-256 is of the bytes that run: a file replaced between ``--trust-code``'s
    check and the import is refused, not run."""
    from pvr_keras import training

    marker, evil = planted
    nets = tmp_path / "nets.py"
    nets.write_text("def mlp(**kwargs):\n    return None\n")
    folder = _run_folder(tmp_path / "run", nets, sha256=files.sha256(nets))
    checked = registry.trust_file

    def swap_after_check(path, sha256=None):
        checked(path, sha256)
        nets.write_bytes(evil.read_bytes())  # the race, deterministically

    monkeypatch.setattr(registry, "trust_file", swap_after_check)
    with pytest.raises(UntrustedCode, match="changed after it was checked"):
        training.load_run(folder, trust_code=True)
    assert not marker.exists()


def test_a_module_the_user_names_is_trusted_only_if_found(tmp_path):
    with pytest.raises(ValueError, match="cannot find module"):
        registry.trust_module("no_such_pkg_47.nets")
    with pytest.raises(ValueError, match="not a module name"):
        registry.trust_module("../x")


def test_finding_a_module_asks_only_finders_that_run_no_code():
    """setuptools' ``_distutils_hack`` finder imports setuptools to answer for ``distutils.*``:
    a name from a record is located by the import system's own finders (and editable
    installs' tables) only, so locating it imports nothing at all."""
    code = ("import sys; from pvr_keras import references; before = set(sys.modules); "
            "references.source_file('distutils.core'); "
            "print(sorted(set(sys.modules) - before))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.parametrize("name", ["config.json", "config_holdout.json"])
def test_a_flat_config_in_a_recipes_folder_imports_no_kind(planted_package, tmp_path, name):
    """A recipe's folder holding a config of the flat layout (written before runs had one
    config) whose ``kind`` names a file or a package module: comparing it with the new run
    imports neither (the package's ``__init__`` neither), and the recipe refuses it."""
    from pvr_keras.cli import folders

    marker, package = planted_package
    (tmp_path / "path" / package / "kinds.py").write_text("KIND = None\n")
    kind_file = _plant(tmp_path, marker, "evil_kind.py", "KIND = None\n")
    for kind in (f"{kind_file}:KIND", f"{package}.kinds:KIND"):
        out = tmp_path / kind.replace("/", "_").replace(":", "_")
        out.mkdir()
        (out / name).write_text(json.dumps({"kind": kind, "model": "mlp", "window": 2}))
        with pytest.raises(UntrustedCode, match="names code to import"):
            folders.check_config(out, Run.make("token"), name=name)
        assert not marker.exists(), kind


def test_a_flat_config_read_by_a_recipe_runs_nothing(planted, tmp_path):
    """``train.py --out D`` with such a config in D: one line, exit 2, no code run."""
    marker, _ = planted
    kind_file = _plant(tmp_path, marker, "evil_kind.py", "KIND = None\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"kind": f"{kind_file}:KIND", "model": "mlp"}))
    done = subprocess.run(
        [sys.executable, str(REPO / "recipes" / "train.py"), "--out", str(out), "--epochs", "1"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "names code to import" in done.stderr
    assert not marker.exists()


def test_evaluate_with_another_window_imports_no_aggregation_a_record_names(tmp_path):
    """``evaluate.py RUN --window 1`` rebuilds the run's task with another window: an
    aggregation file its record names is not imported for it (without ``--trust-code``)."""
    marker = tmp_path / "marker"
    aggs = _plant(tmp_path, marker, "my_aggs.py", "def SECOND(v):\n    return v[..., 0]\n")
    run = Run.make("token", window=2, width=0.125)
    config = {**run.to_dict(), "aggregation": f"{aggs}:SECOND"}
    folder = _run_folder(tmp_path / "run", config=config, aggregation_source=str(aggs))
    from pvr_keras.training import runs

    runs.model_builder(run)().save(folder / "model.keras")  # a real model of the run
    for extra in ([], ["--window", "1"], ["--window", "1", "--holdout", "1"]):
        done = subprocess.run(
            [sys.executable, str(REPO / "tools" / "evaluate.py"), str(folder), *extra],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 2, (extra, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "--trust-code" in done.stderr, extra
        assert not marker.exists(), extra
