"""The engine measured on this machine: cached per machine and model, the cache read as
untrusted, and the worker processes that measure it (a worker that dies is named, not a
crash). Measurements are injected (no timing), except one real tiny calibration (slow)."""

import io
import json
import os
import sys

import pytest

from pvr_keras import calibration

MACHINE = {"cpu": "Test CPU", "vector": "avx2", "cores": 2, "versions": {"keras": "3"}}


class Measure:
    """A fake ``calibration.measure``: its figures, and the calls it got."""

    def __init__(self, ms, errors=None):
        self.ms, self.errors, self.calls = ms, errors or {}, []

    def __call__(self, model, arguments, batch_size, metric="accuracy"):
        self.calls.append((model, arguments, batch_size, metric))
        return dict(self.ms), dict(self.errors)


@pytest.fixture
def here(monkeypatch):
    monkeypatch.setattr(calibration, "machine", lambda: dict(MACHINE))


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    """The machine counts as quiet (the test suite itself keeps it busy)."""
    monkeypatch.setattr(calibration, "busy", lambda: None)


ARGUMENTS = {"dim": 64}


def _calibrated(path, measure, lines=None, model="mixer"):
    return calibration.calibrated(
        model, 0.125, 1024, arguments=ARGUMENTS, path=path, measure_fn=measure,
        say=(lines if lines is not None else []).append,
    )  # fmt: skip


def _cache(path, entry, name=None):
    """A calibration cache at ``path`` holding ``entry`` for ``_calibrated``'s model here."""
    name = name or calibration.family("mixer", 0.125, 1024, arguments=ARGUMENTS)
    data = {"format": calibration.FORMAT, "format_version": calibration.FORMAT_VERSION,
            "machines": {calibration.machine_key(MACHINE): {name: entry}}}  # fmt: skip
    path.write_text(json.dumps(data))


def test_measured_once_then_read_from_the_cache(tmp_path, here):
    path, lines = tmp_path / "cache" / "engines.json", []
    measure = Measure({"tensorflow": 226.0, "jax": 786.0})
    first = _calibrated(path, measure, lines)
    assert measure.calls == [("mixer", {"dim": 64}, 1024, "accuracy")]
    assert first["ms_per_step"] == {"tensorflow": 226.0, "jax": 786.0} and not first["cached"]
    assert any("measuring" in line for line in lines) and any(
        "measured in" in line for line in lines
    )
    again = _calibrated(path, Measure({}))  # not called: from the cache
    assert again["cached"] and again["ms_per_step"] == first["ms_per_step"]
    data = json.loads(path.read_text())
    assert data["format"] == calibration.FORMAT
    assert list(data["machines"]) == [calibration.machine_key(MACHINE)]


def test_another_machine_or_model_or_version_measures_again(tmp_path, monkeypatch):
    path = tmp_path / "engines.json"
    monkeypatch.setattr(calibration, "machine", lambda: dict(MACHINE))
    _calibrated(path, Measure({"tensorflow": 1.0, "jax": 2.0}))
    other_model = Measure({"tensorflow": 3.0, "jax": 1.0})
    assert _calibrated(path, other_model, model="mlp")["ms_per_step"]["jax"] == 1.0
    assert len(other_model.calls) == 1
    for changed in ({"cpu": "Other CPU"}, {"vector": "avx512"}, {"cores": 4},
                    {"versions": {"keras": "4"}}):  # fmt: skip
        monkeypatch.setattr(calibration, "machine", lambda c=changed: {**MACHINE, **c})
        measure = Measure({"tensorflow": 5.0, "jax": 6.0})
        assert not _calibrated(path, measure)["cached"] and len(measure.calls) == 1, changed
    assert len(json.loads(path.read_text())["machines"]) == 5  # every machine kept


DAMAGED = [
    b"\x00\xff not json",
    b'{"format": "pvr-keras/engine-calibration", "format_version": 1, "machines": ',
    b"[1, 2, 3]",
    b'{"format": "something-else", "machines": {}}',
    b'{"format": "pvr-keras/engine-calibration", "format_version": 99, "machines": {}}',
    b"[" * 100_000 + b"]" * 100_000,  # nested past the JSON reader's recursion
    b" " * (calibration.MAX_CACHE_BYTES + 1),
]


@pytest.mark.parametrize("content", DAMAGED, ids=range(len(DAMAGED)))
def test_a_damaged_or_foreign_cache_is_ignored_with_a_note_and_replaced(tmp_path, here, content):
    path, lines = tmp_path / "engines.json", []
    path.write_bytes(content)
    found = _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}), lines)
    assert found["ms_per_step"] == {"tensorflow": 2.0, "jax": 1.0} and not found["cached"]
    notes = [line for line in lines if "ignored" in line]
    assert len(notes) == 1 and str(path) in notes[0] and "\n" not in notes[0]
    assert json.loads(path.read_text())["format"] == calibration.FORMAT  # written whole again


@pytest.mark.parametrize("kind", ["fifo", "link", "folder"])
def test_a_cache_that_is_no_plain_file_is_ignored_without_blocking_or_following(
    tmp_path, here, kind
):
    path, lines = tmp_path / "engines.json", []
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait for a writer forever
    elif kind == "link":
        planted = tmp_path / "planted.json"
        name = calibration.family("mixer", 0.125, 1024, arguments=ARGUMENTS)
        machines = {calibration.machine_key(MACHINE): {name:
                    {"ms_per_step": {"tensorflow": 9.0, "jax": 9.0}}}}  # fmt: skip
        planted.write_text(json.dumps({"format": calibration.FORMAT,
                                       "format_version": calibration.FORMAT_VERSION,
                                       "machines": machines}))  # fmt: skip
        path.symlink_to(planted)
    else:
        path.mkdir()
    assert calibration.load(path, say=lines.append) == {}
    assert len(lines) == 1 and "ignored" in lines[0] and str(path) in lines[0]


def test_entries_that_are_not_figures_are_dropped_never_used(tmp_path, here):
    key = calibration.machine_key(MACHINE)
    name = calibration.family("mixer", 0.125, 1024, arguments=ARGUMENTS)
    bad = [{"ms_per_step": {"tensorflow": -1.0, "jax": 2.0}},
           {"ms_per_step": {"tensorflow": "__import__('os')", "jax": 2.0}},
           {"ms_per_step": {"torch": 1.0}}, {"ms_per_step": {"jax": True}},
           {"ms_per_step": {"jax": float("nan")}}, {"ms_per_step": {}}, "tf", None]  # fmt: skip
    for entry in bad:
        path = tmp_path / "engines.json"
        data = {"format": calibration.FORMAT, "format_version": 1, "machines": {key: {name: entry}}}
        path.write_text(json.dumps(data))
        measure = Measure({"tensorflow": 2.0, "jax": 1.0})
        assert not _calibrated(path, measure)["cached"] and len(measure.calls) == 1, entry


def test_figures_past_a_float_are_ignored_with_a_note(tmp_path, here):
    """A 400-digit number (JSON reads it as an int no float holds) is no figure: the entry
    is ignored with one line, and the model measured again."""
    path, lines = tmp_path / "engines.json", []
    _cache(path, {"ms_per_step": {"tensorflow": 1.0, "jax": 2.0}})
    path.write_text(path.read_text().replace("1.0", "1" + "0" * 400))
    found = _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}), lines)
    assert not found["cached"] and found["ms_per_step"] == {"tensorflow": 2.0, "jax": 1.0}
    notes = [line for line in lines if "ignored" in line]
    assert len(notes) == 1 and str(path) in notes[0] and "\n" not in notes[0]


@pytest.mark.parametrize("mode, owner", [(0o666, "me"), (0o664, "me"), (0o646, "me"),
                                         (0o644, "another")])  # fmt: skip
def test_a_cache_others_could_write_is_ignored_with_a_note(tmp_path, here, monkeypatch, mode,
                                                           owner):  # fmt: skip
    """Figures in a file another user owns, or one group or others may write, could be
    anyone's: ignored (one line), measured again, and the file replaced by one of ours."""
    path, lines = tmp_path / "engines.json", []
    _cache(path, {"ms_per_step": {"tensorflow": 9.0, "jax": 9.0}})
    path.chmod(mode)
    if owner == "another":
        monkeypatch.setattr(calibration.os, "getuid", lambda: path.stat().st_uid + 1)
    found = _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}), lines)
    assert not found["cached"] and found["ms_per_step"] == {"tensorflow": 2.0, "jax": 1.0}
    notes = [line for line in lines if "ignored" in line]
    assert len(notes) == 1 and str(path) in notes[0] and "\n" not in notes[0]
    monkeypatch.undo()
    monkeypatch.setattr(calibration, "machine", lambda: dict(MACHINE))
    monkeypatch.setattr(calibration, "busy", lambda: None)
    assert _calibrated(path, Measure({}))["cached"]  # the file written now is trusted


def test_entries_of_the_older_key_are_no_match(tmp_path, here):
    """A cache written when entries were keyed without the task's shape (``mixer width
    0.125 batch 1024``) is read without a note; its entry is no match, so the model is
    measured again, and the other entries stay."""
    path, lines = tmp_path / "engines.json", []
    old = "mixer width 0.125 batch 1024"
    _cache(path, {"ms_per_step": {"tensorflow": 9.0, "jax": 9.0}}, name=old)
    found = _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}), lines)
    assert not found["cached"] and not [line for line in lines if "ignored" in line]
    families = json.loads(path.read_text())["machines"][calibration.machine_key(MACHINE)]
    assert set(families) == {old, found["family"]}


def test_a_failed_candidate_is_reported_and_not_cached(tmp_path, here):
    path = tmp_path / "engines.json"
    found = _calibrated(path, Measure({"tensorflow": 2.0}, {"jax": "the jax worker exited (1)"}))
    assert found["errors"] == {"jax": "the jax worker exited (1)"}
    assert not path.exists()  # measured again next time


def test_the_cache_path_honours_the_environment():
    assert str(calibration.cache_path({"PVR_ENGINE_CACHE": "/x/e.json"})) == "/x/e.json"
    assert str(calibration.cache_path({"XDG_CACHE_HOME": "/c"})) == "/c/pvr_keras/engines.json"
    assert str(calibration.cache_path({})).endswith(".cache/pvr_keras/engines.json")


def test_the_cpu_is_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx2 avx512f\n")
    assert calibration.cpu_name(info) == "AMD EPYC 9R14"
    assert calibration.vector_units(info) == "avx512"
    info.write_text("flags\t\t: fpu avx avx2\n")
    assert calibration.vector_units(info) == "avx2"
    assert calibration.cpu_name(tmp_path / "missing")  # platform's name


# ---- the workers ----------------------------------------------------------------------------


def _exits_at_once(code):
    return [sys.executable, "-c", f"import sys; sys.exit({code})"]


def test_a_worker_that_exited_is_named_with_its_code_when_written_to():
    worker = calibration.Worker("torch", _exits_at_once(3))
    worker.process.wait()  # gone before we write: the write is a broken pipe
    answer = worker.ask(model="mlp")
    assert answer == {"error": "the torch worker exited (code 3)"}
    assert worker.ask(model="mlp") == answer  # and every time after
    worker.close()


def test_a_worker_whose_output_closes_is_named_with_its_code():
    reads_then_exits = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(5)"]
    worker = calibration.Worker("jax", reads_then_exits)
    assert worker.ask(model="mlp") == {"error": "the jax worker exited (code 5)"}
    worker.close()


def test_a_worker_answers_an_exception_as_a_line():
    commands = io.StringIO('{"n": 1}\n{"n": 0}\n')
    out = io.StringIO()
    calibration.serve(lambda c: {"inverse": 1 / c["n"]}, commands, out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"inverse": 1.0},
        {"error": "ZeroDivisionError: division by zero"},
    ]


def test_measure_reports_a_worker_that_dies_and_keeps_the_others(monkeypatch):
    real = calibration.Worker

    class Fake:
        def __init__(self, name, argv, env=None):
            self.name = name
            self.worker = real(name, _exits_at_once(7)) if name == "jax" else None

        def send(self, **command):
            if self.worker:
                self.worker.send(**command)

        def receive(self):
            return self.worker.receive() if self.worker else {"seconds": 0.2}

        def ask(self, **command):
            self.send(**command)
            return self.receive()

        def close(self):
            if self.worker:
                self.worker.close()

    monkeypatch.setattr(calibration, "Worker", Fake)
    ms, errors = calibration.measure("mlp", {}, 64, backends=["tensorflow", "jax"], steps=2)
    assert ms == {"tensorflow": pytest.approx(100.0)}
    assert errors == {"jax": "the jax worker exited (code 7)"}


def test_a_population_is_timed_in_turns_with_one_run_on_jax(monkeypatch):
    """The ratio of a population to one run holds under a load that changes: both are timed
    in the same rounds, in turns, each on a JAX worker of its own."""
    asked = []

    class Fake:
        def __init__(self, name, argv, env=None):
            self.name, self.backend = name, argv[-1]

        def send(self, **command):
            asked.append((self.name, self.backend, command.get("population"), command["steps"]))

        def receive(self):
            load = 1 + len(asked)  # the machine gets busier with every call
            population = asked[-1][2]
            return {"seconds": load * (0.3 if population else 0.1) * asked[-1][3]}

        def ask(self, **command):
            self.send(**command)
            return self.receive()

        def close(self):
            pass

    monkeypatch.setattr(calibration, "Worker", Fake)
    ms, errors = calibration.measure("mlp", {}, 64, backends=["jax"], population=2, rounds=3)
    assert errors == {} and set(ms) == {"jax", calibration.ALONE_BESIDE}
    together = ("jax", "jax", 2, calibration.STEPS_PER_POPULATION_CALL)
    alone = (calibration.ALONE_BESIDE, "jax", None, calibration.STEPS)
    assert asked == [together, alone] * 4  # compiled, then three rounds in turns
    # the loads of the turns are one call apart: the ratio stays near 3
    assert 2.5 < ms["jax"] / ms[calibration.ALONE_BESIDE] < 3.5


@pytest.mark.slow
def test_a_real_calibration_of_a_tiny_model_measures_both_backends():
    """The workers really train: a few steps of a tiny MLP on TensorFlow and on JAX."""
    arguments = {"embed_dim": 4, "widths": [8]}
    ms, errors = calibration.measure("mlp", arguments, 64, steps=1, rounds=1)
    assert errors == {}
    assert set(ms) == set(calibration.candidates()) and all(v > 0 for v in ms.values())


def test_figures_measured_on_a_busy_machine_are_used_but_not_cached(tmp_path, here, monkeypatch):
    path, lines = tmp_path / "engines.json", []
    monkeypatch.setattr(calibration, "busy", lambda: 5.5)
    found = _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}), lines)
    assert found["ms_per_step"] == {"tensorflow": 2.0, "jax": 1.0}
    assert not path.exists() and any("busy" in line and "5.5" in line for line in lines)
    monkeypatch.setattr(calibration, "busy", lambda: None)
    _calibrated(path, Measure({"tensorflow": 2.0, "jax": 1.0}))
    assert path.exists()  # measured again when quiet, and cached


def test_busy_is_the_load_above_the_cores(monkeypatch):
    monkeypatch.undo()  # the real calibration.busy
    monkeypatch.setattr(calibration, "cores", lambda: 2)
    monkeypatch.setattr(calibration.os, "getloadavg", lambda: (3.5, 1.0, 1.0))
    assert calibration.busy() == 3.5
    monkeypatch.setattr(calibration.os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    assert calibration.busy() is None
