"""Tracks what a Boolean model has learned, epoch by epoch, exactly on the whole cube.

``FourierTracker`` is a Keras callback: before the first step (epoch 0: the initial function,
as Abbe et al.'s tracking starts) and after every ``every`` epochs it evaluates the model on
the cube (``boolean.model_values``) and stores, in ``<run folder>/fourier.json``, the learned
function's Fourier coefficients on the tracked monomials, half its mean squared error on the
cube (the generalisation error of Abbe et al. 2022) and, with frozen bits, half its squared
error on the training distribution's part of the cube (every frozen bit +1, or the task's
seen domain). Given the min-degree interpolator of the target on the seen domain (Abbe et al.
2023; ``interpolation.min_degree_interpolator``), it also stores the learned function's leak
towards it (``interpolation.leak``: 1 the MDI, 0 the truth), its squared error on the unseen
points against the target and against the MDI, and its degree profile. The file is
rewritten whole each time (a killed run keeps the last complete one and its resumed epochs
overwrite what came after its checkpoint).

A cube too large to list (d above ``boolean.MAX_CUBE_BITS``), or ``points`` given: the
tracker evaluates the model on a fixed, seeded sample of that many uniform points of the cube
and stores estimates instead, the degree profile None, and says so in the file:
``"evaluation": {"kind": "sampled", "points": N, ...}`` (``sampled_tracking``). A file
without ``evaluation`` is exact on the whole cube.
"""

import json
import pathlib

import keras
import numpy as np

from pvr_keras import files
from pvr_keras.analysis import boolean, interpolation, sampled_tracking
from pvr_keras.checks import check_positive

FILE = "fourier.json"


def tracked_subsets(target, frozen=(), limit=64):
    """The monomials that matter when the bits ``frozen`` are frozen to +1: the target's
    support (nonzero coefficients, largest first, at most ``limit``) and, for each of them
    containing a frozen bit, the monomial without the frozen bits (where a frozen-trained
    network puts its weight). Subset integers, sorted."""
    coefficients = boolean.fourier_coefficients(target)
    support = np.flatnonzero(np.abs(coefficients) > 1e-9)
    support = support[np.argsort(-np.abs(coefficients[support]), kind="stable")][:limit]
    mask = boolean.subset_of(frozen)
    return sorted({int(s) for s in support} | {int(s) & ~mask for s in support})


def measures(values, target, frozen, subsets, *, seen=None, mdi=None):
    """The tracked numbers of a function on the cube (``values``) against ``target``.

    Args:
        frozen: the bits frozen to +1 in training (the training part: all of them +1).
        seen: or the training part as a boolean mask of the cube's rows.
        mdi: the min-degree interpolator of ``target`` on ``seen`` (values on the cube): adds
            ``seen_mse``, ``unseen_mse``, ``unseen_mse_to_mdi``, ``leak`` (None where the
            target equals its MDI on the unseen points) and ``degree_profile``.
    """
    coefficients = boolean.fourier_coefficients(values)
    if seen is None:
        rows = np.arange(len(values))
        seen = (rows & boolean.subset_of(frozen)) == 0  # every frozen bit +1 (row bit 0)
    error = (values - target) ** 2
    out = {
        "half_mse": float(error.mean() / 2),
        "in_distribution_half_mse": float(error[seen].mean() / 2),
        "coefficients": [float(coefficients[s]) for s in subsets],
    }
    if mdi is not None:
        unseen = ~seen
        out["seen_mse"] = float(error[seen].mean())
        out["unseen_mse"] = float(error[unseen].mean()) if unseen.any() else None
        out["unseen_mse_to_mdi"] = (
            float(np.mean((values[unseen] - mdi[unseen]) ** 2)) if unseen.any() else None
        )
        gap = unseen.any() and np.any(np.abs(target[unseen] - mdi[unseen]) > 1e-9)
        out["leak"] = interpolation.leak(values, target, mdi, seen) if gap else None
        out["degree_profile"] = [float(w) for w in boolean.degree_profile(values)]
    return out


class FourierTracker(keras.callbacks.Callback):
    """Stores a Boolean model's exact measures on the cube after every ``every`` epochs
    (estimates on a sample of it where the cube is too large to list).

    Args:
        task: the target (``BooleanTask`` or ``BooleanFunction``); sampled: a polynomial
            target (its coefficients are stored exactly).
        folder: the run folder (``fourier.json`` is written there).
        frozen: the bits frozen to +1 in training.
        every: epochs between two evaluations (the last epoch is always evaluated).
        subsets: monomials to track (default ``tracked_subsets``, and the MDI's support).
        seen: the training part of the cube as a mask of its rows (default: the frozen bits
            +1, or the task's seen ``domain``; sampled: always that default).
        mdi: the target's min-degree interpolator on ``seen``, to track the leak and the
            unseen errors (``measures``): its values on the cube, or its Fourier expansion
            {tuple of bits: coefficient} (``unseen.mdi_expansion``; sampled: only that).
        points: evaluate on a sample of this many uniform points of the cube instead of the
            whole cube (default: ``sampled_tracking.SAMPLE_POINTS`` where d is above
            ``boolean.MAX_CUBE_BITS``, else the whole cube).
        sample_seed: the sample's seed (one sample for every epoch).
    """

    def __init__(self, task, folder, frozen=(), every=1, subsets=None, *, seen=None, mdi=None,
                 points=None, sample_seed=0):  # fmt: skip
        super().__init__()
        every = check_positive("every", every)
        self.task, self.folder, self.every = task, pathlib.Path(folder), every
        self.frozen = tuple(int(b) for b in frozen)
        self.epochs = {}
        if points is None and task.num_bits > boolean.MAX_CUBE_BITS:
            points = sampled_tracking.SAMPLE_POINTS
        self.sample = None
        if points is not None:
            self._sampled(subsets, seen, mdi, points, sample_seed)
            return
        self.target = boolean.target_values(task)
        domain = getattr(task, "domain", "all")
        if seen is None and domain != "all":
            from pvr_keras.kinds.boolean.domains import Domain

            seen = Domain.parse(domain).mask(task.num_bits)
        self.seen = None if seen is None else np.asarray(seen, bool)
        if isinstance(mdi, dict):
            from pvr_keras.analysis.unseen import expansion_values

            mdi = expansion_values(mdi, task.num_bits)
        self.mdi = None if mdi is None else np.asarray(mdi, np.float64)
        if subsets is None:
            subsets = tracked_subsets(self.target, self.frozen)
            if self.mdi is not None:
                subsets = sorted(set(subsets) | set(tracked_subsets(self.mdi)))
        self.subsets = [int(s) for s in subsets]

    def _sampled(self, subsets, seen, mdi, points, seed):
        """Sets the sample up: its points, the target, seen mask and MDI there, the tracked
        monomials and their exact coefficients (the target's and the MDI's)."""
        from pvr_keras.analysis.unseen import expansion_at
        from pvr_keras.kinds.boolean.domains import Domain
        from pvr_keras.kinds.boolean.task import BooleanFunction
        from pvr_keras.kinds.gotu.targets import expansion_of

        if seen is not None:
            raise ValueError("a sampled tracker takes the training part from the task's domain "
                             "or the frozen bits, not a mask of the cube's rows")  # fmt: skip
        if mdi is not None and not isinstance(mdi, dict):
            raise ValueError("a sampled tracker takes the MDI as its Fourier expansion {tuple "
                             "of bits: coefficient} (unseen.mdi_expansion), not values on the "
                             "cube")  # fmt: skip
        function = getattr(self.task, "function", self.task)
        target = expansion_of(function) if isinstance(function, BooleanFunction) else None
        if target is None:
            raise ValueError(f"a sampled tracker stores the target's coefficients exactly: "
                             f"give a polynomial target; received {function}")  # fmt: skip
        x = sampled_tracking.sample_points(self.task.num_bits, points, seed)
        self.sample, self.target = x, np.asarray(self.task.label(x), np.float64)
        domain = getattr(self.task, "domain", "all")
        self.seen = (Domain.parse(domain).seen(x) if domain != "all"
                     else (x[:, list(self.frozen)] > 0).all(axis=1))  # fmt: skip
        self.mdi = None if mdi is None else expansion_at(mdi, x)
        if subsets is None:
            subsets = sampled_tracking.expansion_subsets(target, self.frozen)
            if mdi is not None:
                subsets = sorted(set(subsets) | set(sampled_tracking.expansion_subsets(mdi)))
        self.subsets = [int(s) for s in subsets]
        self.exact = {"target_coefficients":
                      sampled_tracking.expansion_coefficients(target, self.subsets)}  # fmt: skip
        if mdi is not None:
            self.exact["mdi_coefficients"] = sampled_tracking.expansion_coefficients(
                mdi, self.subsets
            )
        self.evaluation = {"kind": "sampled", "points": len(x), "seed": seed,
                           "seen_points": int(self.seen.sum()),
                           "unseen_points": int((~self.seen).sum())}  # fmt: skip

    def on_train_begin(self, logs=None):
        found = read(self.folder)
        if found is not None and found.get("subsets") == self.subsets:
            self.epochs = {int(k): v for k, v in found["epochs"].items()}
        if not self.epochs:  # a fresh run (a resumed one keeps its own epoch 0, or none)
            self._measure(0)

    def on_epoch_end(self, epoch, logs=None):
        done = epoch + 1
        last = done == self.params.get("epochs")
        if done % self.every and not last:
            return
        self._measure(done)

    def _measure(self, done):
        if self.sample is not None:
            values = boolean.model_outputs(self.model, self.sample)
            self.epochs[done] = sampled_tracking.sampled_measures(
                values, self.sample, self.target, self.seen, self.subsets, mdi=self.mdi
            )
            self._write(done, {**self.exact, "evaluation": self.evaluation})
            return
        values = boolean.model_values(self.model, self.task.num_bits)
        self.epochs[done] = measures(values, self.target, self.frozen, self.subsets,
                                     seen=self.seen, mdi=self.mdi)  # fmt: skip
        exact = {"target_coefficients": [
            float(c) for c in boolean.fourier_coefficients(self.target)[self.subsets]
        ]}  # fmt: skip
        if self.mdi is not None:
            exact["mdi_coefficients"] = [
                float(c) for c in boolean.fourier_coefficients(self.mdi)[self.subsets]
            ]
        self._write(done, exact)

    def _write(self, done, coefficients):
        """fourier.json: the tracked monomials, ``coefficients`` (the target's, the MDI's,
        and for a sample its ``evaluation``) and every epoch up to ``done``."""
        self.epochs = {k: v for k, v in self.epochs.items() if k <= done}
        payload = {
            "subsets": self.subsets,
            "subset_bits": [list(boolean.bits_of(s)) for s in self.subsets],
            "target_coefficients": coefficients["target_coefficients"],
            "frozen": list(self.frozen),
            **{k: v for k, v in coefficients.items() if k != "target_coefficients"},
            "epochs": {str(k): self.epochs[k] for k in sorted(self.epochs)},
        }
        files.write_text(self.folder / FILE, json.dumps(payload) + "\n")


def read(folder):
    """A run folder's ``fourier.json`` (None if there is none)."""
    path = pathlib.Path(folder) / FILE
    if not path.exists():
        return None
    try:
        found = files.read_json(path)
    except ValueError:  # not whole (or not a plain file): the tracker writes it again
        return None
    return found if isinstance(found, dict) else None
