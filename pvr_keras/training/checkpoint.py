"""Resume state that survives SIGKILL at any moment.

A checkpoint is a folder holding the model's weights with the optimizer state
(``model.weights.h5``, Keras ``save_weights``) and ``state.json`` (epochs done, history so
far, resume count). It is written whole under a temporary name and swapped in by renames, so
the folder on disk is always a complete checkpoint of some finished epoch.
"""

import json
import os
import pathlib
import shutil

WEIGHTS = "model.weights.h5"
STATE = "state.json"


class Checkpoint:
    """Atomic save/restore of (weights + optimizer, state dict) in ``directory``."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        self._old = self.directory.with_name(self.directory.name + ".old")
        self._tmp = self.directory.with_name(self.directory.name + ".tmp")

    def _complete(self, folder):
        return (folder / WEIGHTS).exists() and (folder / STATE).exists()

    def latest(self):
        """The folder of the newest complete checkpoint, or None."""
        for folder in (self.directory, self._old):
            if self._complete(folder):
                return folder
        return None

    def save(self, model, state):
        shutil.rmtree(self._tmp, ignore_errors=True)
        self._tmp.mkdir(parents=True)
        model.save_weights(self._tmp / WEIGHTS)
        with open(self._tmp / STATE, "w") as f:
            json.dump(state, f, default=str)
            f.flush()
            os.fsync(f.fileno())
        # Swap: current -> old, tmp -> current, drop old. A kill between the renames leaves
        # either current or old complete; `latest` finds it. When current is not complete (a
        # kill between the renames of the last save left only old), old is the one complete
        # checkpoint and stays until the new one is in place.
        if self._complete(self.directory):
            shutil.rmtree(self._old, ignore_errors=True)
            os.replace(self.directory, self._old)
        else:
            shutil.rmtree(self.directory, ignore_errors=True)
        os.replace(self._tmp, self.directory)
        shutil.rmtree(self._old, ignore_errors=True)

    def restore(self, model):
        """Loads the newest checkpoint into a compiled ``model``; returns its state or None."""
        folder = self.latest()
        if folder is None:
            return None
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(folder / WEIGHTS)
        return json.loads((folder / STATE).read_text())

    def remove(self):
        for folder in (self.directory, self._old, self._tmp):
            shutil.rmtree(folder, ignore_errors=True)
