"""The high-level causal models of PVR and their interchange interventions (NumPy only).

Token PVR: the inputs are ``P`` (the pointer, ``x[0]``) and ``V0 .. V{n-1}`` (the values,
``x[1:]``); the intermediates are ``S_j = V_((P + j) mod n)`` for ``j < window`` (the pointed
window, ``S0`` the pointed value); the output is the task's aggregation of ``S0 .. S{w-1}``
(its own rule: ``mod_sum``, ``median``, ``maj_vote``, ``min``, ``max``, or an
``Aggregation`` of yours). A pointer-less task (``pointer=False``) reads ``S_j = V_j``: its
``P`` has no effect.

Block PVR (2x2, the paper's Figure 3 and iit's MNIST-PVR): the variables are ``TL, TR, BL,
BR``, the classes of the four cells in row-major order; ``TL`` is the pointer digit and the
output is the task's label of the four classes.

An interchange intervention gives each named variable the value it takes on the source (run
without intervention) and recomputes what depends on it, as pyvene's
``CausalModel.run_interchange`` does; several variables at once are allowed (an intervened
intermediate keeps the source's value even when an intervened input would change it).
"""

import numpy as np

from pvr_keras.kinds.block.task import BlockTask
from pvr_keras.kinds.token.task import TokenTask
from pvr_keras.tasks.aggregations import aggregate

BLOCK_VARIABLES = ("TL", "TR", "BL", "BR")
SUPPORTED = "a TokenTask or a 2x2 BlockTask"


def check_task(task):
    """``task`` if it has a high-level model here, else one line naming what does."""
    if isinstance(task, TokenTask):
        return task
    if isinstance(task, BlockTask):
        if task.grid != 2:
            raise ValueError(
                f"counterfactuals take 2x2 block tasks (variables {', '.join(BLOCK_VARIABLES)}); "
                f"received grid={task.grid}"
            )
        return task
    raise ValueError(
        f"counterfactuals have a high-level model of {SUPPORTED}; received "
        f"{type(task).__name__} (no causal model of its kind)"
    )


def variables(task):
    """The high-level variables of ``task``, in causal order.

    Token PVR: ``P, V0 .. V{n-1}, S0 .. S{w-1}``; 2x2 block PVR: ``TL, TR, BL, BR``.

    Example:
        >>> variables(TokenTask(window=2))
        ('P', 'V0', 'V1', 'V2', 'V3', 'V4', 'V5', 'V6', 'V7', 'V8', 'V9', 'S0', 'S1')
    """
    check_task(task)
    if isinstance(task, BlockTask):
        return BLOCK_VARIABLES
    values = tuple(f"V{i}" for i in range(task.num_positions))
    return ("P", *values, *(f"S{j}" for j in range(task.window)))


def check_variables(task, names):
    """A variable name or a non-empty list of distinct names -> a tuple, in causal order."""
    known = variables(task)
    given = [names] if isinstance(names, str) else names
    if (
        not isinstance(given, list | tuple)
        or not given
        or not all(isinstance(name, str) for name in given)
    ):
        raise ValueError(
            f"variables must be a variable name or a non-empty list of them ({', '.join(known)}); "
            f"received {names!r}"
        )
    unknown = [name for name in given if name not in known]
    if unknown:
        raise ValueError(
            f"variables of {type(task).__name__} are {', '.join(known)}; received "
            f"{', '.join(map(repr, unknown))}"
        )
    if len(set(given)) != len(given):
        raise ValueError(f"variables must be distinct; received {list(given)!r}")
    return tuple(name for name in known if name in given)


def _inputs(task, base, source):
    """Checked (n, width) int64 base and source of the same length."""
    # task.label checks shape, integrality and range with messages that name the task's sizes.
    base_labels = task.label(base)
    task.label(source)
    base, source = np.asarray(base).astype(np.int64), np.asarray(source).astype(np.int64)
    if len(base) != len(source):
        raise ValueError(
            f"base and source must hold the same number of examples; received {len(base)} and "
            f"{len(source)}"
        )
    return base, source, base_labels


def token_values(task, x):
    """Every variable of the token model on (n, seq_len) inputs: {name: (n,) int64}."""
    values = x[:, 1:]
    pointers = x[:, 0] if task.pointer else np.zeros(len(x), np.int64)
    window = np.take_along_axis(values, task.window_positions(pointers), axis=1)
    out = {"P": x[:, 0]}
    out.update({f"V{i}": values[:, i] for i in range(task.num_positions)})
    out.update({f"S{j}": window[:, j] for j in range(task.window)})
    return out


def _token_label(task, base, source, names):
    pointers = np.where("P" in names, source[:, 0], base[:, 0]) if task.pointer else None
    values = base[:, 1:].copy()
    for i in range(task.num_positions):
        if f"V{i}" in names:
            values[:, i] = source[:, i + 1]
    if pointers is None:
        pointers = np.zeros(len(base), np.int64)
    window = np.take_along_axis(values, task.window_positions(pointers), axis=1)
    source_window = token_values(task, source)
    for j in range(task.window):
        if f"S{j}" in names:
            window[:, j] = source_window[f"S{j}"]
    return aggregate(task.aggregation, window, task.num_values)


def label(task, base, source, variables):
    """Counterfactual labels: the label of each base when ``variables`` take the source's values.

    Args:
        task: a ``TokenTask`` or a 2x2 ``BlockTask``.
        base: (n, seq_len) tokens, or (n, 4) cell classes of a block task.
        source: the same shape: where the intervened variables take their values.
        variables: a variable name (``"P"``, ``"S1"``, ``"TR"``) or a list of them.

    Returns:
        (n,) int64 labels: the high-level model's output on the base with the interchange.

    Example:
        >>> task = TokenTask(window=1)
        >>> base = np.array([[0, 5, 6, 7, 1, 1, 1, 1, 1, 1, 1]])
        >>> source = np.array([[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
        >>> int(label(task, base, source, "P")[0])          # base values, source pointer 2
        7
    """
    task = check_task(task)
    names = check_variables(task, variables)
    base, source, _ = _inputs(task, base, source)
    if isinstance(task, BlockTask):
        cells = base.copy()
        for k, name in enumerate(BLOCK_VARIABLES):
            if name in names:
                cells[:, k] = source[:, k]
        return task.label(cells)
    return _token_label(task, base, source, names)


__all__ = ["BLOCK_VARIABLES", "check_task", "check_variables", "label", "token_values", "variables"]
