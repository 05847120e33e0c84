"""A task kind's spec, and the registry of kinds by name or reference.

A ``TaskKind`` joins a task dataclass (the rule, NumPy), its data generators (tf.data and the
JAX twin, same signature, named ``"module:function"``), the models it trains, its default
training settings, its data preparation and how its runs are named and recorded. The built-in
kinds (``token``, ``block``, ``sequence``) register themselves when this package is imported;
``kind("my_pkg.kinds:PARITY")`` (or ``"path/kinds.py:PARITY"``) loads one of yours.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

from pvr_keras.references import is_reference, normalise_reference, resolve
from pvr_keras.registry import MODEL_KINDS


@dataclasses.dataclass(frozen=True)
class TaskKind:
    """What the library needs to train and evaluate one kind of task.

    Attributes:
        name: the kind's name (``token``, ``block``, ``sequence``, ``boolean``, yours).
        task: the task dataclass: its fields are the run's task section (flags, sweep axes);
            ``task.label`` is the NumPy rule.
        models: the model kind it trains (``MODEL_KINDS``).
        recipe: its default ``TrainRecipe`` (training section defaults).
        dataset: ``"module:function"`` of its tf.data generator: ``f(request)`` of a
            ``data.request.StreamRequest`` (the library's take one), which the library calls
            with the request's fields, ``f(task, n, *, split, seed, holdout, batch_size,
            shuffle, epochs, first_epoch)`` (+ ``data_dir`` with ``images``) -> batches of
            (x, y); a generator of yours may take just these.
        device: the JAX twin of ``dataset`` (same signature, same examples), or None.
        arrays: ``"module:function"`` ``f(task, n, *, split, seed, holdout)`` -> (x, y, ...).
        model_arguments: ``task -> dict``: the builder's task arguments.
        check: ``(task, holdout) -> holdout``: checks the task for this kind and the holdout
            setting, and returns the holdout normalised (an int k, or a bool for blocks).
        check_run: ``run -> None``: checks a whole run of this kind (its sizes against its
            task: the gotu kind's ``draw="all"``), raising a ValueError; or None.
        defaults: the kind's defaults of other run fields (``model``, ``num_examples``, ...).
        identity: run fields always in a run's identity (the others only when they differ
            from the kind's default); None: every field.
        iid_eval: a holdout run also reports its accuracy on an IID test set.
        eval_batch_size: batch of the test and training-accuracy evaluations.
        images: its examples are drawn from TFDS images (``data_dir``, ``download``).
        prepare: ``"module:function"`` of ``f(task, data_dir, *, download)``, which prepares
            its data before training (TFDS images), or None.
        metric: ``"accuracy"`` (classification, the default) or ``"mse"`` (regression).
        id_parts: ``run -> list of str``: the readable part of a run id after the model name
            (the token kind: ``["w2", "mod_sum", "h1"]``).
    """

    name: str
    task: type
    models: str
    recipe: Any
    dataset: str
    arrays: str
    model_arguments: Callable[[Any], dict]
    check: Callable[[Any, Any], Any]
    device: str | None = None
    defaults: dict = dataclasses.field(default_factory=dict)
    identity: tuple[str, ...] | None = None
    iid_eval: bool = False
    eval_batch_size: int = 4096
    images: bool = False
    prepare: str | None = None
    metric: str = "accuracy"
    id_parts: Callable[[Any], list] | None = None
    check_run: Callable[[Any], None] | None = None

    def __post_init__(self):
        if self.models not in MODEL_KINDS:
            raise ValueError(
                f"models must be one of {', '.join(MODEL_KINDS)}; received {self.models!r}"
            )
        if not dataclasses.is_dataclass(self.task):
            raise ValueError(f"task must be a dataclass; received {self.task!r}")
        if self.metric not in ("accuracy", "mse"):
            raise ValueError(f"metric must be accuracy or mse; received {self.metric!r}")

    def stream(self, input):
        """The generator function for ``input`` (``"tfdata"`` or ``"device"``), imported."""
        if input == "device":
            if self.device is None:
                raise ValueError(f"the {self.name} kind has no device generator (input=tfdata)")
            return resolve(self.device)
        return resolve(self.dataset)

    def prepare_data(self, task, data_dir=None, *, download=True):
        """Prepares the data the task draws from (a no-op for kinds without ``prepare``)."""
        if self.prepare is not None:
            resolve(self.prepare)(task, data_dir, download=download)


_kinds = {}


def register_kind(spec):
    """Registers a ``TaskKind`` by its name; returns it (a module may end with this line)."""
    if not isinstance(spec, TaskKind):
        raise ValueError(f"register_kind takes a TaskKind; received {type(spec).__name__}")
    known = _kinds.get(spec.name)
    if known is not None and known is not spec and known != spec:
        raise ValueError(f"task kind {spec.name!r} is registered already")
    _kinds[spec.name] = spec
    return spec


def kind_names():
    """The registered task kinds (the built-in ones, and yours once registered)."""
    return tuple(k for k in _kinds if not is_reference(k))


def kind(name):
    """The ``TaskKind`` called ``name``, or named by a ``"module:attribute"`` reference.

    Raises:
        ValueError: unknown name, or a reference that does not hold a ``TaskKind``.
    """
    if isinstance(name, TaskKind):
        return name
    if name in _kinds:
        return _kinds[name]
    if not is_reference(name):
        raise ValueError(
            f"kind must be one of {', '.join(kind_names())} or a 'module:attribute' reference "
            f"to a TaskKind; received {name!r}"
        )
    found = resolve(normalise_reference(name))
    if not isinstance(found, TaskKind):
        raise ValueError(f"{name} is not a TaskKind (found {type(found).__name__})")
    _kinds[name] = found
    return found
