"""The Degree-Curriculum (Abbe, Bengio, Lotfi, Rizk 2023, "Generalization on the Unseen", their
``main.py``): a training mode of any run whose inputs are bits, on the training examples of
growing Hamming weight.

With leap l (``TrainRecipe.curriculum_leap``) and threshold eps (``curriculum_eps``), H(x) the
number of -1 entries of x and d the number of bits: the radius r starts at l, raised by l
while no training example has H(x) <= r; each epoch trains on the training examples with
H(x) <= r, in an order that is a pure function of (seed, epoch); when that epoch's mean
training loss (Keras's epoch ``loss``) is below eps, r rises by l, or training stops if
r >= d already. Their "normal training" (every example, stop when the loss is below eps) is
l = d. ``recipe.epochs`` is the most it trains.

The run record's ``curriculum`` holds the rule's settings and its stages, each with its
radius, its number of examples and steps per epoch, its first epoch and step (epochs and
steps trained before it: its epochs are the history's ``first_epoch + 1`` to ``end_epoch``),
its end (``end_epoch`` / ``end_step``: epochs and steps trained when its last epoch ended)
and whether an epoch's loss went below eps in it (``passed``); and the epochs and steps
trained in all (``epochs``, ``total_steps``: their Figure 4's iterations) and whether the
rule stopped training (``stopped``; else the epoch budget ran out, or the loss became NaN, or
a callback stopped it; ``radius`` is then the radius it would train next). It is written with
every epoch's checkpoint, so a run killed mid-stage resumes at the same radius and epoch and
ends bit for bit where an uninterrupted run ends.

Each epoch is one ``model.fit(..., initial_epoch=e, epochs=e + 1)`` on the stage's examples
(NumPy, from the kind's ``arrays``: the examples of the run's training stream), so the run's
per-epoch evaluation, record and checkpoint (``epochs.EpochRecorder``) and its validation set
are the normal path's. The callbacks see one training session: ``on_train_begin`` before the
first epoch, ``on_train_end`` after the last, ``params["epochs"]`` the budget.
"""

import math

import keras
import numpy as np

ORDER_SALT = 0xDC  # the epoch orders' seed stream, apart from any other use of the run seed


def hamming_weights(x):
    """H(x) of each row of bits in {+1, -1}: its number of -1 entries."""
    return (np.asarray(x) < 0).sum(axis=1)


def first_radius(weights, leap):
    """r = leap, raised by leap while no example has weight <= r."""
    weights = np.asarray(weights)
    if isinstance(leap, bool) or not isinstance(leap, int | np.integer) or leap < 1:
        raise ValueError(f"the curriculum's leap must be an integer >= 1; received {leap!r}")
    if not weights.size:
        raise ValueError("the Degree-Curriculum needs at least one training example")
    return leap * max(1, math.ceil(int(weights.min()) / leap))


def _stage(radius, weights, batch_size, epoch, step):
    examples = int((np.asarray(weights) <= radius).sum())
    return {"radius": int(radius), "examples": examples,
            "steps_per_epoch": math.ceil(examples / batch_size), "first_epoch": epoch,
            "first_step": step, "end_epoch": epoch, "end_step": step, "passed": False}  # fmt: skip


def start(weights, leap, eps, num_bits, batch_size):
    """The curriculum before the first epoch (a JSON-ready dict, the record's
    ``curriculum``)."""
    radius = first_radius(weights, leap)
    return {"leap": int(leap), "eps": float(eps), "num_bits": int(num_bits),
            "batch_size": int(batch_size), "radius": radius, "epochs": 0, "total_steps": 0,
            "stopped": False, "stages": [_stage(radius, weights, batch_size, 0, 0)]}  # fmt: skip


def after_epoch(state, loss, weights):
    """The curriculum after one epoch of the current stage with mean training loss ``loss``
    (a new dict; ``state`` is left as it was)."""
    state = {**state, "stages": [dict(s) for s in state["stages"]]}
    stage = state["stages"][-1]
    state["epochs"] += 1
    state["total_steps"] += stage["steps_per_epoch"]
    stage["end_epoch"], stage["end_step"] = state["epochs"], state["total_steps"]
    if not loss < state["eps"]:  # NaN too
        return state
    stage["passed"] = True
    if state["radius"] >= state["num_bits"]:
        state["stopped"] = True
        return state
    state["radius"] += state["leap"]
    state["stages"].append(_stage(state["radius"], weights, state["batch_size"],
                                  state["epochs"], state["total_steps"]))  # fmt: skip
    return state


def finish(state):
    """The curriculum of a finished run: without the stage its last passing epoch opened,
    if no epoch trained in it (the budget ran out, or the run stopped), so that every
    recorded stage trained; ``radius`` stays the radius it would have trained next."""
    last = state["stages"][-1]
    if len(state["stages"]) > 1 and last["end_epoch"] == last["first_epoch"]:
        state = {**state, "stages": state["stages"][:-1]}
    return state


def epoch_order(weights, radius, seed, epoch):
    """The indices of the training examples with weight <= radius, in this epoch's order: a
    pure function of (weights, radius, seed, epoch)."""
    chosen = np.flatnonzero(np.asarray(weights) <= radius)
    rng = np.random.default_rng([int(seed), int(epoch), ORDER_SALT])
    return chosen[rng.permutation(len(chosen))]


def check_bits(x, kind=None):
    """``x`` as an int8 array of rows of bits in {+1, -1}; else a ValueError naming the kind."""
    x = np.asarray(x)
    if x.ndim != 2 or not x.size or not np.isin(x, (-1, 1)).all():
        what = f"the {kind} kind's" if kind else "these"
        raise ValueError(
            f"the Degree-Curriculum (curriculum_leap > 0) orders examples by their number of -1 "
            f"bits: it needs inputs of bits in {{+1, -1}} (the boolean and gotu kinds); "
            f"{what} training inputs are of shape {x.shape} and dtype {x.dtype}"
        )
    return x


class _Stage(keras.callbacks.Callback):
    """After each epoch, before the recorder checkpoints: the stage rule on the epoch's mean
    loss, into the run record (so the checkpoint holds it)."""

    def __init__(self, run, weights):
        super().__init__()
        self.run, self.weights = run, weights

    def on_epoch_end(self, epoch, logs=None):
        loss = float((logs or {}).get("loss", math.nan))
        self.run.record["curriculum"] = after_epoch(self.run.record["curriculum"], loss,
                                                    self.weights)  # fmt: skip


HOOKS = tuple(f"on_{what}_{when}" for what in ("epoch", "batch", "train_batch", "test",
              "test_batch", "predict", "predict_batch") for when in ("begin", "end"))  # fmt: skip


class _Session(keras.callbacks.Callback):
    """A callback of the run, across one ``fit`` per epoch: its ``on_train_begin`` runs at the
    first, its ``on_train_end`` by ``finish``; its ``params["epochs"]`` is the budget. Every
    other hook is the callback's own method (so Keras sees which it overrides)."""

    def __init__(self, inner, num_epochs):
        super().__init__()
        self.inner, self.num_epochs = inner, num_epochs
        self.begun, self.end_logs = False, None
        for name in HOOKS:
            setattr(self, name, getattr(inner, name))
        if hasattr(inner, "async_safe"):
            self.async_safe = inner.async_safe

    def set_model(self, model):
        self.inner.set_model(model)

    def set_params(self, params):
        self.inner.set_params({**params, "epochs": self.num_epochs})

    def on_train_begin(self, logs=None):
        if not self.begun:
            self.begun = True
            self.inner.on_train_begin(logs)

    def on_train_end(self, logs=None):
        self.end_logs = logs

    def finish(self):
        if self.begun:
            self.inner.on_train_end(self.end_logs)


def fit(run, model, data, callbacks, verbose, initial_epoch, num_epochs):
    """Trains ``model`` by the Degree-Curriculum from ``initial_epoch`` (a resumed run's
    state is in ``run.record["curriculum"]``), at most up to epoch ``num_epochs``.

    ``callbacks``: the run's (the recorder that checkpoints, then the user's); ``verbose``:
    ``(fit's verbose, the line printers)`` of ``epochs.progress``."""
    recipe = run.options.recipe
    x, y = data.arrays()
    x = check_bits(x, run.record.get("kind"))
    weights = hamming_weights(x)
    if run.record.get("curriculum") is None:
        run.record["curriculum"] = start(weights, recipe.curriculum_leap, recipe.curriculum_eps,
                                         x.shape[1], recipe.batch_size)  # fmt: skip
    fit_verbose, lines = verbose
    sessions = [_Session(c, num_epochs) for c in [*callbacks, *lines]]
    stage = _Stage(run, weights)
    for epoch in range(initial_epoch, num_epochs):
        if run.record["curriculum"]["stopped"]:
            break
        order = epoch_order(weights, run.record["curriculum"]["radius"], run.options.seed, epoch)
        model.fit(
            x[order], y[order], batch_size=recipe.batch_size, epochs=epoch + 1,
            initial_epoch=epoch, shuffle=False, validation_data=data.validation,
            callbacks=[stage, *sessions], verbose=fit_verbose,
        )  # fmt: skip
        if run.saw_nan or model.stop_training:
            break
    for session in sessions:
        session.finish()


__all__ = ["after_epoch", "check_bits", "epoch_order", "finish", "first_radius", "fit",
           "hamming_weights", "start"]  # fmt: skip
