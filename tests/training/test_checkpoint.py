"""training/checkpoint.py: what is saved comes back; a kill at any step of a save leaves a
whole checkpoint (the newest one, or the one before it); a damaged checkpoint is found by its
checksums and the one before it used; a full disk is refused before writing."""

import functools
import os
import shutil

import keras
import numpy as np
import pytest

from pvr_keras.errors import DamagedFile, DiskFull, UnsafePath
from pvr_keras.training import checkpoint as checkpoint_module
from pvr_keras.training.checkpoint import CHECKSUMS, STATE, WEIGHTS, Checkpoint


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
    model.compile(keras.optimizers.SGD(0.1, momentum=0.9), "mse")
    return model


@functools.cache  # read only: saved and compared, never trained further
def _trained(steps, seed=0):
    """A model after ``steps`` SGD steps: weights and momentum both differ from a fresh one."""
    model = _model(seed)
    x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
    for _ in range(steps):
        model.train_on_batch(x, np.ones((8, 2), "float32"))
    return model


def _values(variables):
    return [keras.ops.convert_to_numpy(v).copy() for v in variables]


def _assert_same_state(restored, saved):
    for got, want in zip(_values(restored.weights), _values(saved.weights), strict=True):
        np.testing.assert_array_equal(got, want)
    got = _values(restored.optimizer.variables)
    want = _values(saved.optimizer.variables)
    assert len(got) == len(want) and int(restored.optimizer.iterations) == int(
        saved.optimizer.iterations
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_round_trip_of_weights_optimizer_and_state(tmp_path):
    saved = _trained(3)
    ckpt = Checkpoint(tmp_path / "checkpoint")
    assert ckpt.latest() is None and ckpt.restore(_model()) is None
    ckpt.save(saved, {"epoch": 3, "record": {"history": [0.5, 0.25]}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]  # no .old, no .tmp
    fresh = _model(seed=1)  # other initial weights, optimizer not built yet
    state = Checkpoint(tmp_path / "checkpoint").restore(fresh)
    assert state == {"epoch": 3, "record": {"history": [0.5, 0.25]}}
    _assert_same_state(fresh, saved)  # momentum and iteration count too, not only weights


def _listing(folder):
    """The checkpoint folders (a killed save's private temporary folder is not one: the
    next run's ``files.clean_temporaries`` removes it)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".tmp"))


def test_a_later_save_replaces_the_earlier_and_keeps_it_as_old(tmp_path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(_trained(1), {"epoch": 1})
    later = _trained(2)
    ckpt.save(later, {"epoch": 2})
    fresh = _model()
    assert ckpt.restore(fresh) == {"epoch": 2}
    _assert_same_state(fresh, later)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint", "checkpoint.old"]
    ckpt.save(_trained(3), {"epoch": 3})  # the one before the previous is dropped
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint", "checkpoint.old"]
    assert Checkpoint(tmp_path / "checkpoint")._verified(tmp_path / "checkpoint.old")


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no cleanup."""


class _Module:
    """A stand-in for the module ``real`` inside checkpoint.py only (Keras's own file calls
    must not count), whose function ``name`` dies at its ``call``-th call."""

    def __init__(self, real, name, call):
        self._real, self._name, self._call, self.calls = real, name, call, 0

    def __getattr__(self, attr):
        function = getattr(self._real, attr)
        if attr != self._name:
            return function

        def dying(*args, **kwargs):
            self.calls += 1
            if self.calls == self._call:
                raise Killed
            return function(*args, **kwargs)

        return dying


def _kill_at_replace(monkeypatch, call):
    """Makes the ``call``-th ``os.replace`` of a save die before it runs."""
    monkeypatch.setattr(checkpoint_module, "os", _Module(os, "replace", call))


def _kill_at_rmtree(monkeypatch, call):
    """Makes the ``call``-th ``shutil.rmtree`` of a save die before it runs."""
    monkeypatch.setattr(checkpoint_module, "shutil", _Module(shutil, "rmtree", call))


@pytest.mark.parametrize(
    "kill, expect_epoch",
    [
        ("weights", 1),  # while writing the new weights
        ("replace1", 1),  # before the first rename
        ("replace2", 1),  # current moved to .old, the new one not yet in place
        ("rmtree1", 1),  # before the one before the previous is dropped
    ],
)
def test_a_kill_during_a_save_leaves_a_complete_checkpoint(
    tmp_path, monkeypatch, kill, expect_epoch
):
    first, second = _trained(1), _trained(2)
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(first, {"epoch": 1})
    with monkeypatch.context() as patch:
        if kill == "weights":
            patch.setattr(second, "save_weights", lambda path: (open(path, "w").close(), _die()))
        elif kill.startswith("replace"):
            _kill_at_replace(patch, int(kill[-1]))
        else:
            _kill_at_rmtree(patch, int(kill[-1]))
        with pytest.raises(Killed):
            ckpt.save(second, {"epoch": 2})
    # A new process finds the newest complete checkpoint and loads it.
    fresh = _model(seed=5)
    assert Checkpoint(tmp_path / "checkpoint").restore(fresh) == {"epoch": expect_epoch}
    _assert_same_state(fresh, first if expect_epoch == 1 else second)
    # The next save works from whatever the kill left: the newest and the one before it.
    third = _trained(3)
    ckpt.save(third, {"epoch": 3})
    assert _listing(tmp_path) == ["checkpoint", "checkpoint.old"]
    assert ckpt.restore(_model()) == {"epoch": 3}


def _die():
    raise Killed


def test_a_kill_during_the_save_after_a_kill_keeps_a_checkpoint(tmp_path, monkeypatch):
    """Two kills in a row: the first leaves only ``.old``; the next save must not remove it
    before its own folder is in place."""
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(_trained(1), {"epoch": 1})
    with monkeypatch.context() as patch:
        _kill_at_replace(patch, 2)  # current -> .old done, .tmp -> current not
        with pytest.raises(Killed):
            ckpt.save(_trained(2), {"epoch": 2})
    assert ckpt.latest() == ckpt._old
    resumed = _trained(2)
    for call in (1, 2, 3):  # die at each removal and rename of the next save in turn
        for die in (_kill_at_rmtree, _kill_at_replace):
            with monkeypatch.context() as patch:
                die(patch, call)
                try:
                    ckpt.save(resumed, {"epoch": 2})
                except Killed:
                    pass
            assert ckpt.latest() is not None, (die.__name__, call)
            assert Checkpoint(tmp_path / "checkpoint").restore(_model())["epoch"] in (1, 2)


def test_an_incomplete_current_folder_falls_back_to_old(tmp_path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    older = _trained(1)
    ckpt.save(older, {"epoch": 1})
    os.replace(tmp_path / "checkpoint", tmp_path / "checkpoint.old")
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / WEIGHTS).write_bytes(b"")  # no state.json: not complete
    assert ckpt.latest() == tmp_path / "checkpoint.old"
    fresh = _model(seed=3)
    assert ckpt.restore(fresh) == {"epoch": 1}
    _assert_same_state(fresh, older)
    (tmp_path / "checkpoint.old" / STATE).unlink()
    assert ckpt.latest() is None and ckpt.restore(_model()) is None


def test_remove_deletes_both_checkpoints(tmp_path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(_trained(1), {"epoch": 1})
    ckpt.save(_trained(2), {"epoch": 2})
    ckpt.remove()
    assert list(tmp_path.iterdir()) == []


def _overwrite(path, offset=-200):
    data = bytearray(path.read_bytes())
    data[offset : offset + 16] = b"\xff" * 16  # bytes changed inside, size kept
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["truncate weights", "overwrite weights", "empty state"])
def test_a_damaged_checkpoint_falls_back_to_the_one_before(tmp_path, damage):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    messages = []
    ckpt.log = messages.append
    older = _trained(1)
    ckpt.save(older, {"epoch": 1})
    ckpt.save(_trained(2), {"epoch": 2})
    current = tmp_path / "checkpoint"
    if damage == "truncate weights":
        (current / WEIGHTS).write_bytes((current / WEIGHTS).read_bytes()[:1000])
    elif damage == "overwrite weights":
        _overwrite(current / WEIGHTS)  # would load silently, with wrong numbers
    else:
        (current / STATE).write_text("")
    fresh = _model(seed=3)
    assert ckpt.restore(fresh) == {"epoch": 1}
    _assert_same_state(fresh, older)
    assert any("damaged checkpoint" in m for m in messages)
    assert any("resuming from the previous checkpoint" in m for m in messages)


def test_no_whole_checkpoint_left_restarts_and_says_so(tmp_path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    messages = []
    ckpt.log = messages.append
    ckpt.save(_trained(1), {"epoch": 1})
    ckpt.save(_trained(2), {"epoch": 2})
    for folder in ("checkpoint", "checkpoint.old"):
        _overwrite(tmp_path / folder / WEIGHTS)
    assert ckpt.restore(_model()) is None
    assert any("the run starts again from epoch 0" in m for m in messages)
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_written_before_checksums_still_resumes(tmp_path):
    older = _trained(1)
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(older, {"epoch": 1})
    (tmp_path / "checkpoint" / CHECKSUMS).unlink()  # as the library wrote them before
    fresh = _model(seed=4)
    assert ckpt.restore(fresh) == {"epoch": 1}
    _assert_same_state(fresh, older)


def test_a_full_disk_is_refused_before_writing_and_keeps_the_last(tmp_path, monkeypatch):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.save(_trained(1), {"epoch": 1})

    class Usage:
        free = 10  # bytes

    monkeypatch.setattr(checkpoint_module.shutil, "disk_usage", lambda path: Usage)
    with pytest.raises(DiskFull, match="not enough free space for the next checkpoint"):
        ckpt.save(_trained(2), {"epoch": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    assert ckpt.restore(_model()) == {"epoch": 1}


@pytest.mark.parametrize("name", ["checkpoint", "checkpoint.old"])
@pytest.mark.parametrize("target", ["folder", "file", "dangling"])
def test_a_link_at_a_checkpoint_is_refused_and_not_written_through(tmp_path, name, target):
    outside = tmp_path / "outside"
    if target == "folder":
        outside.mkdir()
    elif target == "file":
        outside.write_text("keep")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / name).symlink_to(outside)
    ckpt = Checkpoint(tmp_path / "run" / "checkpoint")
    with pytest.raises(UnsafePath, match=f"{name} is a symbolic link"):
        ckpt.check()
    with pytest.raises(UnsafePath):  # planted during a run: the save refuses it too
        ckpt.save(_trained(1), {"epoch": 1})
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [name]  # no temporary left
    assert (target != "folder" or not any(outside.iterdir())) and (
        target != "file" or outside.read_text() == "keep"
    )


def test_a_file_at_the_checkpoint_is_refused(tmp_path):
    (tmp_path / "checkpoint").write_text("")
    with pytest.raises(DamagedFile, match="is not a folder"):
        Checkpoint(tmp_path / "checkpoint").check()
    Checkpoint(tmp_path / "none").check()  # nothing there yet: fine


@pytest.fixture
def no_hang():
    """Fails a test that waits more than 60 s (a reader blocked on a FIFO) instead of hanging."""
    import signal

    def timeout(*_):
        raise TimeoutError("a checkpoint reader waited more than 60 s")

    before = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


def _plant_weights_link(folder):
    (folder / WEIGHTS).unlink()
    (folder / WEIGHTS).symlink_to("/dev/zero")


def _plant_fifo(name):
    def plant(folder):
        (folder / name).unlink()
        os.mkfifo(folder / name)

    return plant


def _plant_deep_state(folder):
    (folder / STATE).write_text("[" * 100_000 + "]" * 100_000)
    sums = {WEIGHTS: checkpoint_module.files.sha256(folder / WEIGHTS),
            STATE: checkpoint_module.files.sha256(folder / STATE)}  # fmt: skip
    (folder / CHECKSUMS).write_text(__import__("json").dumps(sums))


@pytest.mark.parametrize("where", ["checkpoint", "checkpoint.old"])
@pytest.mark.parametrize(
    "plant",
    [
        _plant_weights_link,
        _plant_fifo(CHECKSUMS),
        _plant_fifo(STATE),
        _plant_fifo(WEIGHTS),
        _plant_deep_state,
    ],  # fmt: skip
    ids=[
        "weights link to /dev/zero",
        "FIFO checksums",
        "FIFO state",
        "FIFO weights",
        "state nested 100,000 deep",
    ],  # fmt: skip
)
def test_a_link_fifo_or_deep_file_in_a_checkpoint_is_damage_not_a_hang(
    tmp_path, where, plant, no_hang
):
    """Resume reads each checkpoint file as a plain file: a link (to /dev/zero), a FIFO or
    JSON nested 100,000 deep makes that checkpoint damaged (the other one is used), never a
    hang or a crash."""
    ckpt = Checkpoint(tmp_path / "checkpoint")
    messages = []
    ckpt.log = messages.append
    older, newer = _trained(1), _trained(2)
    ckpt.save(older, {"epoch": 1})
    ckpt.save(newer, {"epoch": 2})
    plant(tmp_path / where)
    fresh = _model(seed=5)
    state = ckpt.restore(fresh)
    if where == "checkpoint":
        assert state == {"epoch": 1}
        _assert_same_state(fresh, older)
    else:
        assert state == {"epoch": 2}
        _assert_same_state(fresh, newer)


def test_the_checkpoint_of_another_run_is_refused(tmp_path):
    """A checkpoint carries its run's id: one left in the folder by another run (another
    seed) is refused in one line, never continued as this run; the same run resumes."""
    from pvr_keras.errors import RunMismatch

    saved = _trained(2)
    Checkpoint(tmp_path / "checkpoint", run_id="mlp-s0").save(saved, {"epoch": 2})
    with pytest.raises(RunMismatch, match="checkpoint of run 'mlp-s0', not of this run 'mlp-s1'"):
        Checkpoint(tmp_path / "checkpoint", run_id="mlp-s1").restore(_model())
    fresh = _model(seed=6)
    assert Checkpoint(tmp_path / "checkpoint", run_id="mlp-s0").restore(fresh)["epoch"] == 2
    _assert_same_state(fresh, saved)
