"""Window aggregations: their names, their NumPy rules, and aggregations of your own.

Two families. ``token`` rules (the token, image-sequence and block tasks) take the window's
values, (N, w) ints in [0, num_values), and ``num_values``; they return (N,) int labels in
the same range. The paper names them (Figure 16) but not their ties; the tie rules are pinned
here (docs/guide.md, "Semantics pinned beyond the paper"; ``tests/tasks/test_token.py``
checks them):

- ``mod_sum``: sum of the window modulo ``num_values``.
- ``median``: the lower middle value of the sorted window when the window is even.
- ``maj_vote``: the most common value; ties go to the smallest value.
- ``min`` / ``max``: smallest / largest value.

``boolean`` rules (``BooleanTask``) take a window of bits, (N, w) floats of +1/-1, and
``present``, (N, w) bools (False where a truncated window is cut off, left out); they return
(N,) float labels: ``parity`` (the product), ``majority`` (the sign of the sum, 0 on a tie),
``min``, ``max``.

Each backend keeps its rules in one table keyed by these names: ``NUMPY`` and
``NUMPY_BOOLEAN`` here, ``TF_RULES`` in ``kinds/token/tf_data.py`` and
``kinds/boolean/tf_data.py``, ``JAX_RULES`` in ``kinds/token/jax_data.py`` and
``kinds/boolean/jax_data.py`` (``tests/data`` checks that they hold the same names).
``NAMES`` lists each family's names; they come from here.

An aggregation of your own is an ``Aggregation`` in a file, named wherever an aggregation
name goes by reference (``"my_aggs.py:second_max"``, or ``"my_pkg.aggs:second_max"``): one
rule over an array namespace ``xp`` (NumPy, ``tf.experimental.numpy``, ``jax.numpy``), or one
rule per backend. Its file is imported only when labels are made, and only if it is yours (a
reference you named, ``registry.trust``: reading a record never imports it). Before a
TensorFlow or JAX rule makes any example, it is checked against the NumPy rule on random
windows (``check_backend``); the NumPy rule's labels are checked on every call.
"""

import dataclasses
from collections.abc import Callable

import numpy as np

from pvr_keras import checks, registry
from pvr_keras.errors import UntrustedCode

AGGREGATIONS = ("mod_sum", "median", "maj_vote", "min", "max")
BOOLEAN_AGGREGATIONS = ("parity", "majority", "min", "max")
NAMES = {"token": AGGREGATIONS, "boolean": BOOLEAN_AGGREGATIONS}
BACKENDS = ("numpy", "tensorflow", "jax")
CHECK_ROWS = 2048  # random windows of the backend check


class Names(tuple):
    """A family's names as flag choices that also admit a reference (``file.py:name``):
    argparse refuses an unknown name and lists these."""

    def __contains__(self, value):
        return registry.is_reference(value) or tuple.__contains__(self, value)


# ------------------------------------------------------------------ the NumPy rules ----


def mod_sum(window, num_values):
    return window.sum(axis=1) % num_values


def median(window, num_values):
    del num_values
    return np.sort(window, axis=1)[:, (window.shape[1] - 1) // 2]


def maj_vote(window, num_values):
    counts = np.zeros((window.shape[0], num_values), np.int64)
    np.add.at(counts, (np.arange(window.shape[0])[:, None], window), 1)
    return counts.argmax(axis=1)  # argmax returns the first maximum: the smallest value


def minimum(window, num_values):
    del num_values
    return window.min(axis=1)


def maximum(window, num_values):
    del num_values
    return window.max(axis=1)


NUMPY = {"mod_sum": mod_sum, "median": median, "maj_vote": maj_vote, "min": minimum,
         "max": maximum}  # fmt: skip


def parity(window, present):
    return np.where(present, window, 1).prod(axis=1)


def majority(window, present):
    return np.sign(np.where(present, window, 0).sum(axis=1))


def bits_min(window, present):
    return np.where(present, window, 1).min(axis=1)


def bits_max(window, present):
    return np.where(present, window, -1).max(axis=1)


NUMPY_BOOLEAN = {"parity": parity, "majority": majority, "min": bits_min, "max": bits_max}
NUMPY_TABLES = {"token": NUMPY, "boolean": NUMPY_BOOLEAN}


# ------------------------------------------------------------------ yours ----


@dataclasses.dataclass(frozen=True)
class Aggregation:
    """An aggregation of your own: ``rule`` for every backend, or a rule per backend.

    Args:
        rule: ``rule(window, arg, xp)`` with ``xp`` the backend's array namespace (``numpy``,
            ``tensorflow.experimental.numpy``, ``jax.numpy``); use ``xp``'s functions, not
            array methods. ``arg`` is ``num_values`` (token family) or ``present`` (boolean).
        numpy, tensorflow, jax: ``f(window, arg)`` for that backend (each replaces ``rule``
            there). TensorFlow rules run inside an XLA-compiled ``tf.function``.
        family: ``"token"`` (int windows -> int labels in 0..num_values-1) or ``"boolean"``
            (+1/-1 windows and ``present`` -> float labels).

    Example (a file ``my_aggs.py``):
        second_max = Aggregation(rule=lambda window, num_values, xp: xp.sort(window, axis=1)[:, -2])
    """

    rule: Callable | None = None
    numpy: Callable | None = None
    tensorflow: Callable | None = None
    jax: Callable | None = None
    family: str = "token"

    def __post_init__(self):
        if self.family not in NAMES:
            raise ValueError(f"family must be one of {', '.join(NAMES)}; received {self.family!r}")
        for name in ("rule", *BACKENDS):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise ValueError(f"{name} must be a function; received {value!r}")
        missing = [b for b in BACKENDS if self.rule is None and getattr(self, b) is None]
        if missing:
            raise ValueError(
                f"an Aggregation needs a rule for every backend: give rule (one rule over xp) "
                f"or {', '.join(missing)}"
            )

    def on(self, backend):
        """The rule of ``backend`` as ``f(window, arg)``."""
        own = getattr(self, backend)
        if own is not None:
            return own
        xp = _namespace(backend)
        rule = self.rule
        return lambda window, arg: rule(window, arg, xp)


def _namespace(backend):
    if backend == "numpy":
        return np
    if backend == "tensorflow":
        import tensorflow.experimental.numpy as tnp

        return tnp
    import jax.numpy as jnp

    return jnp


def slug(aggregation):
    """An aggregation's name in a run id: the attribute's name for a reference."""
    return aggregation.rpartition(":")[2] if registry.is_reference(aggregation) else aggregation


def _known(family):
    return ", ".join(NAMES[family])


def check_aggregation(aggregation, family="token"):
    """A built-in name or a reference to an ``Aggregation`` (normalised, the file and name
    checked without importing it); else a ValueError that lists the names.

    Example:
        >>> check_aggregation("median")
        'median'
    """
    names = NAMES[family]
    if isinstance(aggregation, str) and aggregation in names:
        return aggregation
    if not registry.is_reference(aggregation):
        raise ValueError(
            f"aggregation must be one of {_known(family)} or a reference to an Aggregation "
            f"of yours ('my_aggs.py:name' or 'my_pkg.aggs:name'); received {aggregation!r}"
        )
    ref = registry.check_reference(aggregation, "aggregation")
    registry.trust_named(ref)  # named in this process (a task you made), not by a record
    return ref


def _reference(aggregation, family):
    """A reference, normalised (as ``check_aggregation``, trusting nothing)."""
    if not registry.is_reference(aggregation):
        check_aggregation(aggregation, family)  # the error that lists the names
    return registry.normalise_reference(aggregation)


def find(aggregation, family="token"):
    """The ``Aggregation`` a reference names, imported if it is yours (``registry.trust``,
    or already imported).

    Raises:
        UntrustedCode: the reference came from a record and you did not name it.
        ValueError: it names something that is not an ``Aggregation`` of ``family``.
    """
    ref = _reference(aggregation, family)
    if not registry.is_trusted(ref):
        raise UntrustedCode(
            f"aggregation {ref} names code a record gave, not you: pass --trust-code "
            f"(trust_code=True) if it is the file the run recorded, or name it yourself "
            f"(--aggregation {ref}, or registry.trust({ref!r})) to import it"
        )
    found = registry.resolve(ref)
    if not isinstance(found, Aggregation):
        raise ValueError(
            f"{ref} is not an Aggregation (found {type(found).__name__}): write "
            f"{ref.rpartition(':')[2]} = Aggregation(rule=...) in that file"
        )
    if found.family != family:
        raise ValueError(f"{ref} is a {found.family} aggregation; this task needs {family}")
    return found


def rule(aggregation, backend, family="token"):
    """The rule of ``backend`` for a built-in name (``None``: that backend's own table has
    it) or a reference (``f(window, arg)``)."""
    if aggregation in NAMES[family]:
        return NUMPY_TABLES[family][aggregation] if backend == "numpy" else None
    return find(aggregation, family).on(backend)


def check_labels(aggregation, labels, window, arg, family="token"):
    """The labels of a rule of yours, checked: (N,), and ints in 0..num_values-1 (token) or
    finite numbers (boolean). Returns them as int64 / float32."""
    labels = checks.check_real_dtype(f"the labels of aggregation {aggregation}", np.asarray(labels))
    n = len(window)
    if labels.shape != (n,):
        raise ValueError(
            f"aggregation {aggregation} must return one label per window, shape ({n},); "
            f"returned shape {labels.shape}"
        )
    if family == "boolean":
        if not np.issubdtype(labels.dtype, np.number) or not np.isfinite(labels).all():
            raise ValueError(f"aggregation {aggregation} must return finite numbers")
        return labels.astype(np.float32)
    bad = ~np.isin(labels, np.arange(arg)) if np.issubdtype(labels.dtype, np.number) else None
    if bad is None or bad.any():
        row = 0 if bad is None else int(np.argmax(bad))
        raise ValueError(
            f"aggregation {aggregation} must return integer labels in 0..{arg - 1}; it "
            f"returned {labels[row].tolist()!r} for the window {window[row].tolist()}"
        )
    return labels.astype(np.int64)


def aggregate(aggregation, window, num_values):
    """Applies ``aggregation`` to ``window`` of shape (N, w); returns (N,) int64 labels."""
    window = np.asarray(window, np.int64)
    found = rule(aggregation, "numpy")
    labels = found(window, num_values)
    if aggregation in NUMPY:
        return labels.astype(np.int64)
    return check_labels(aggregation, labels, window, num_values)


def aggregate_bits(aggregation, window):
    """The aggregation of each row of ``window`` ((N, w) of +1/-1; 0 marks a position cut
    off a truncated window, left out): float32 (N,)."""
    window = np.asarray(window, np.int64)
    present = window != 0
    found = rule(aggregation, "numpy", "boolean")
    if aggregation in NUMPY_BOOLEAN:
        return found(window, present).astype(np.float32)
    labels = found(window.astype(np.float32), present)
    return check_labels(aggregation, labels, window, present, "boolean")


# ------------------------------------------------------------------ the backend check ----

_CHECKED = set()


def check_windows(family, width, num_values=None, rows=CHECK_ROWS, seed=0):
    """Random windows of the backend check, as NumPy: ``(window, arg)`` with the edge cases
    first (all equal, all smallest, all largest; for bits, cut-off windows)."""
    rng = np.random.default_rng(seed)
    if family == "token":
        window = rng.integers(0, num_values, (rows, width), dtype=np.int64)
        window[0], window[1], window[2] = 0, num_values - 1, window[2, 0]
        return window, num_values
    window = (1 - 2 * rng.integers(0, 2, (rows, width))).astype(np.float32)
    kept = rng.integers(1, width + 1, rows)  # a truncated window keeps its first k bits
    kept[: rows // 2] = width
    present = np.arange(width)[None] < kept[:, None]
    return window, present


def check_backend(aggregation, backend, compute, *, width, num_values=None, family="token"):
    """Before a rule of yours makes examples on ``backend``: its labels on random windows
    equal the NumPy rule's (once per aggregation, backend and window shape).

    Args:
        compute: ``f(window, arg) -> labels`` running the backend's rule on NumPy inputs and
            returning NumPy.

    Raises:
        ValueError: the backends disagree (says on which window), or the NumPy labels are
            not labels.
    """
    if aggregation in NAMES[family]:
        return
    done = (registry.file_of(aggregation), aggregation, backend, family, width, num_values)
    if done in _CHECKED:
        return
    window, arg = check_windows(family, width, num_values)
    numpy_rule = find(aggregation, family).on("numpy")
    expected = check_labels(aggregation, numpy_rule(window, arg), window, arg, family)
    got = np.asarray(compute(window, arg))
    same = got.shape == expected.shape and np.allclose(
        got.astype(np.float64), expected.astype(np.float64), rtol=1e-6, atol=1e-6
    )
    if not same:
        if got.shape == expected.shape:
            row = int(np.argmax(~np.isclose(got.astype(np.float64), expected, atol=1e-6)))
            detail = f"{backend} {got[row].tolist()!r}"
        else:
            row, detail = 0, f"{backend} labels of shape {got.shape}"
        raise ValueError(
            f"aggregation {aggregation}: its {backend} rule disagrees with its NumPy rule: "
            f"for the window {window[row].tolist()} NumPy gives {expected[row].tolist()!r}, "
            f"{detail} "
            f"(checked on {len(window)} random windows of width {width})"
        )
    _CHECKED.add(done)
