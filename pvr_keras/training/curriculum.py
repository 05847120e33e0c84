"""The Degree-Curriculum (Abbe, Bengio, Lotfi, Rizk 2023, their ``main.py``): train on the
training examples of growing Hamming weight, a training mode of any run whose inputs are bits.

With leap l (``TrainRecipe.curriculum_leap``) and threshold eps (``curriculum_eps``): the
radius r starts at l, raised by l while no training example has H(x) <= r (H: the number of
-1 entries); each epoch trains on the training examples with H(x) <= r, in an order that is a
pure function of (seed, epoch); when that epoch's mean training loss is below eps, r rises
by l, or training stops once r >= d. Normal training with their stopping rule is l = d. The
record's ``curriculum`` holds the stages (radius, first epoch, first step, last epoch, steps),
the total steps, and whether the loss reached eps; it is saved with every epoch's checkpoint,
so a run killed mid-stage resumes at the same radius and epoch, bit for bit.
"""

import math

import keras
import numpy as np

ORDER_SALT = 0xDC  # the epoch orders' seed stream, apart from any other use of the run seed


def first_radius(weights, leap):
    """r = leap, raised by leap while no example has weight <= r."""
    weights = np.asarray(weights)
    if isinstance(leap, bool) or not isinstance(leap, int | np.integer) or leap < 1:
        raise ValueError(f"the curriculum's leap must be an integer >= 1; received {leap!r}")
    if not weights.size:
        raise ValueError("the curriculum needs at least one training example")
    r = leap
    while not (weights <= r).any():
        r += leap
    return r


def next_state(state, loss, num_bits):
    """The curriculum after an epoch of mean training loss ``loss`` (a new dict)."""
    state = {**state, "stages": [dict(s) for s in state["stages"]]}
    if not (loss < state["eps"]):
        return state
    if state["radius"] >= num_bits:
        state["reached_eps"] = True
        state["stopped"] = True
        return state
    state["radius"] = state["radius"] + state["leap"]
    stage = {"radius": state["radius"], "first_epoch": state["epochs"],
             "first_step": state["total_steps"], "epochs": 0, "steps": 0}  # fmt: skip
    state["stages"].append(stage)
    return state


def epoch_order(weights, radius, seed, epoch):
    """The indices of the training examples with weight <= radius, in this epoch's order."""
    chosen = np.flatnonzero(np.asarray(weights) <= radius)
    rng = np.random.default_rng([int(seed), int(epoch), ORDER_SALT])
    return chosen[rng.permutation(len(chosen))]


class _Stage(keras.callbacks.Callback):
    """After each epoch, before the recorder checkpoints: the stage rule on the epoch's loss,
    into the run record (so the checkpoint holds it)."""

    def __init__(self, run, num_bits, steps):
        super().__init__()
        self.run, self.num_bits, self.steps = run, num_bits, steps

    def on_epoch_end(self, epoch, logs=None):
        state = dict(self.run.record["curriculum"])
        stage = dict(state["stages"][-1])
        stage["epochs"] += 1
        stage["steps"] += self.steps
        state["stages"] = [*state["stages"][:-1], stage]
        state["epochs"] += 1
        state["total_steps"] += self.steps
        loss = float((logs or {}).get("loss", math.nan))
        self.run.record["curriculum"] = next_state(state, loss, self.num_bits)


def fit(run, model, data, callbacks, verbose, initial_epoch, num_epochs):
    """Trains ``model`` by the Degree-Curriculum from ``initial_epoch`` (a resumed run's
    state is in ``run.record["curriculum"]``), at most ``num_epochs`` epochs.

    ``callbacks``: the run's (the recorder that checkpoints, then the user's); ``verbose``:
    ``(fit's verbose, the line printers)`` of ``epochs.progress``."""
    recipe = run.options.recipe
    x, y = data.arrays()
    x = np.asarray(x)
    weights = (x < 0).sum(axis=1)
    num_bits = x.shape[1]
    state = run.record.get("curriculum")
    if state is None:
        radius = first_radius(weights, recipe.curriculum_leap)
        state = {"leap": recipe.curriculum_leap, "eps": recipe.curriculum_eps, "radius": radius,
                 "epochs": 0, "total_steps": 0, "reached_eps": False, "stopped": False,
                 "stages": [{"radius": radius, "first_epoch": 0, "first_step": 0, "epochs": 0,
                             "steps": 0}]}  # fmt: skip
        run.record["curriculum"] = state
    for epoch in range(initial_epoch, num_epochs):
        state = run.record["curriculum"]
        if state["stopped"]:
            break
        order = epoch_order(weights, state["radius"], run.options.seed, epoch)
        steps = math.ceil(len(order) / recipe.batch_size)
        fit_verbose, more = verbose
        model.fit(
            x[order], y[order], batch_size=recipe.batch_size, epochs=epoch + 1,
            initial_epoch=epoch, shuffle=False, validation_data=data.validation,
            callbacks=[_Stage(run, num_bits, steps), *callbacks, *more], verbose=fit_verbose,
        )  # fmt: skip
        if run.saw_nan:
            break


__all__ = ["epoch_order", "first_radius", "fit", "next_state"]
