"""Resume state that survives SIGKILL at any moment, a full disk and damaged files.

A checkpoint is a folder holding the model's weights with the optimizer state
(``model.weights.h5``, Keras ``save_weights``), ``state.json`` (epochs done, history so far,
resume count) and ``checksums.json`` (the SHA-256 of both, written last). It is written whole
in a fresh private folder and swapped in by renames, so ``checkpoint/`` is always a complete
checkpoint of some finished epoch; the one before it is kept as ``checkpoint.old/``. On
restore the checksums are verified: a damaged checkpoint (a truncated or overwritten file)
falls back to the previous one, and with none whole left the run starts again, saying why
(``DamagedCheckpoint`` is never silent). Before writing, the free space is checked against
the last checkpoint's size (a full disk inside ``save_weights`` can crash the process).
A symbolic link or a file where a checkpoint folder goes is refused before the run starts
(``Checkpoint.check``) and before each save: a checkpoint is never read or swapped through
a link, and each of its files is read as a plain file (a link, a FIFO or a device there makes
the checkpoint damaged, never a hang). A checkpoint carries the id of its run: a checkpoint
of another run left in the folder is refused (``RunMismatch``), not continued.
"""

import json
import os
import pathlib
import shutil
import stat
import tempfile

from pvr_keras import files
from pvr_keras.errors import DamagedFile, DiskFull, RunMismatch, UnsafePath

WEIGHTS = "model.weights.h5"
STATE = "state.json"
CHECKSUMS = "checksums.json"
MAX_STATE_BYTES = 64 << 20  # a state (the history so far) larger than this is damaged
MARGIN = 1.5  # free space wanted before a save, times the previous checkpoint's size


def needed_bytes(model):
    """About the bytes of a checkpoint (or a saved model) of ``model``: its weights and its
    optimizer's variables, with a little for the file formats."""
    import numpy as np

    variables = list(model.weights)
    if getattr(model, "optimizer", None) is not None:
        variables += list(model.optimizer.variables)
    data = sum(int(np.prod(v.shape)) * np.dtype(str(v.dtype)).itemsize for v in variables)
    return data + 64 * 1024 + 512 * len(variables)


class Checkpoint:
    """Atomic save/restore of (weights + optimizer, state dict) in ``directory``."""

    def __init__(self, directory, run_id=None):
        self.directory = pathlib.Path(directory)
        self.run_id = run_id  # saved in the state; a checkpoint of another run is refused
        self._old = self.directory.with_name(self.directory.name + ".old")
        self.log = print  # where a fallback to an older checkpoint is reported

    def check(self):
        """Refuses what is not a checkpoint folder at ``checkpoint/`` or ``checkpoint.old/``
        (nothing there is fine).

        Raises:
            UnsafePath: a symbolic link is there (the library neither reads a checkpoint
                through it nor swaps one over it).
            DamagedFile: a file (or anything but a folder) is there.
        """
        for folder in (self.directory, self._old):
            try:
                mode = os.lstat(folder).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(mode):
                raise UnsafePath(
                    f"{folder} is a symbolic link, not a checkpoint folder; the library does "
                    f"not read or write checkpoints through links (remove it and run again)"
                )
            if not stat.S_ISDIR(mode):
                raise DamagedFile(
                    f"{folder} is not a folder, so not a checkpoint (remove it and run again)"
                )

    def _verified(self, folder):
        """Whether ``folder`` is a whole checkpoint: files there, checksums matching (one
        written before checksums were: both files there and the state readable)."""
        try:
            if not (folder / CHECKSUMS).exists():
                files.read_json(folder / STATE)
                return files.sha256(folder / WEIGHTS) is not None and bool(
                    os.lstat(folder / WEIGHTS).st_size
                )
            expected = files.read_json(folder / CHECKSUMS, MAX_STATE_BYTES)
            return all(files.sha256(folder / name) == expected.get(name)
                       for name in (WEIGHTS, STATE))  # fmt: skip
        except (OSError, ValueError, AttributeError):  # DamagedFile, UnsafePath: ValueErrors
            return False

    def latest(self):
        """The folder of the newest whole checkpoint, or None."""
        for folder in (self.directory, self._old):
            if self._verified(folder):
                return folder
        return None

    def exists(self):
        """Whether any checkpoint folder is there (whole or not)."""
        return self.directory.exists() or self._old.exists()

    def _check_space(self, model):
        size = needed_bytes(model)
        previous = self.latest()
        if previous is not None:
            size = max(size, sum(p.stat().st_size for p in previous.iterdir() if p.is_file()))
        files.check_size_limit(MARGIN * size, f"the next checkpoint of {self.directory.parent}")
        free = shutil.disk_usage(self.directory.parent).free
        if free < MARGIN * size:
            raise DiskFull(
                f"not enough free space for the next checkpoint in {self.directory.parent} "
                f"({free / 1e6:.1f} MB free, about {MARGIN * size / 1e6:.1f} MB needed); the "
                f"last complete checkpoint is kept: free some space and run again to resume"
            )

    def save(self, model, state):
        self.check()  # a link planted during the run: refused, not swapped over
        self._check_space(model)
        # A fresh private folder (mkdtemp: O_EXCL, mode 0700) beside the checkpoint.
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=files.TEMP_PREFIX, dir=self.directory.parent))
        try:
            model.save_weights(tmp / WEIGHTS)
            if self.run_id is not None:
                state = {**state, "run_id": self.run_id}
            files.write_text(tmp / STATE, json.dumps(state, default=str))
            sums = {name: files.sha256(tmp / name) for name in (WEIGHTS, STATE)}
            files.write_text(tmp / CHECKSUMS, json.dumps(sums))
        except BaseException as error:
            shutil.rmtree(tmp, ignore_errors=True)
            if files.is_full(error):
                raise DiskFull(
                    f"no space left writing the checkpoint of {self.directory.parent}; the "
                    f"last complete one is kept: free some space and run again to resume"
                ) from None
            raise
        # Swap: current -> old (the one before is dropped), new -> current. A kill between
        # the renames leaves old whole; `latest` finds it. A current that is not whole is not
        # kept as old.
        if self._verified(self.directory):
            shutil.rmtree(self._old, ignore_errors=True)
            os.replace(self.directory, self._old)
        else:
            shutil.rmtree(self.directory, ignore_errors=True)
        os.replace(tmp, self.directory)

    def restore(self, model):
        """Loads the newest whole checkpoint into a compiled ``model``; returns its state, or
        None (no checkpoint, or none whole: then the run starts again, and says why)."""
        if not self.exists():
            return None
        for folder in (self.directory, self._old):
            if not folder.exists():
                continue
            if not self._verified(folder):
                self.log(f"{folder}: damaged checkpoint (a file is missing, cut short or "
                         f"changed: its checksum does not match); not used")  # fmt: skip
                continue
            try:
                state = files.read_json(folder / STATE, MAX_STATE_BYTES)
                sums = files.read_json(folder / CHECKSUMS) if (folder / CHECKSUMS).exists() else {}
            except (OSError, ValueError) as error:  # changed since it was verified
                self.log(f"{folder}: damaged checkpoint ({error}); not used")
                continue
            self._check_run(folder, state)
            if model.optimizer is not None and not model.optimizer.built:
                model.optimizer.build(model.trainable_variables)
            # Keras opens the weights by name: it reads a private copy of the bytes checked
            # here (never a link, a FIFO or a file swapped in since).
            with files.private_copy(folder / WEIGHTS, sha256=sums.get(WEIGHTS)) as weights:
                model.load_weights(weights)
            if folder == self._old:
                self.log(f"{self.directory.parent}: resuming from the previous checkpoint")
            return state
        self.log(
            f"{self.directory.parent}: no whole checkpoint left; the run starts again from "
            f"epoch 0 (its damaged checkpoints are removed)"
        )
        self.remove()
        return None

    def _check_run(self, folder, state):
        """Refuses the checkpoint of another run: one left in the folder by a run of another
        configuration (another seed, say) is never continued as this one."""
        if not isinstance(state, dict):
            raise DamagedFile(f"{folder / STATE} is not a checkpoint's state (not an object)")
        found = state.get("run_id")
        if self.run_id is not None and found is not None and found != self.run_id:
            raise RunMismatch(
                f"{folder} is the checkpoint of run {str(found)[:80]!r}, not of this run "
                f"{self.run_id!r}; use another out folder, or delete the checkpoint to start "
                f"this run from epoch 0"
            )

    def remove(self):
        for folder in (self.directory, self._old):
            shutil.rmtree(folder, ignore_errors=True)
