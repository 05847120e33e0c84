"""What a data generator is asked for: one small frozen dataclass shared by every generator.

Every generator (``token_dataset``, ``boolean_dataset``, ``block_dataset``,
``sequence_dataset`` and their JAX twins ``token_stream``, ``boolean_stream``,
``block_stream``, ``sequence_stream``) takes a ``StreamRequest``, or its fields
(``token_dataset(task, 1000, batch_size=64)`` makes one):

    >>> from pvr_keras.tasks import TokenTask
    >>> request = StreamRequest(TokenTask(window=2), 10_000, split="test", shuffle=False)
    >>> request.replace(batch_size=256).batch_size
    256

A field left unset (``None``) takes the generator's default: its batch size (1024 for tokens,
64 for bits, 50 for images) and its "no holdout" (0, or False for blocks).

A request checks itself once, when it is made (its size, split, seed, batch, epochs, and its
holdout by the task's own ``check_holdout`` where the task has one), and ``replace`` checks
only the fields it changes; so it travels from a run to the generators as one object, and no
generator checks those fields again.
"""

import copy
import dataclasses
import inspect
from typing import Any

from pvr_keras.data.checks import check_positive, check_schedule
from pvr_keras.data.keys import check_seed, check_split


@dataclasses.dataclass(frozen=True)
class StreamRequest:
    """Which examples a generator makes, in which batches and order.

    Attributes:
        task: the kind's task (``TokenTask``, ``BooleanTask``, ``BlockTask``, ...).
        num_examples: size of the split (the same examples every epoch).
        split: ``"train"`` or ``"test"``; independent streams.
        seed: non-negative integer; same seed, same examples, on every backend and run.
        holdout: the kind's holdout setting (None: none).
        batch_size: examples per batch (None: the generator's default).
        shuffle: visit the examples in a new order each epoch, keyed by the epoch number.
        epochs: passes per iteration (None repeats forever, for ``fit(steps_per_epoch=...)``).
        first_epoch: epoch number of the first pass; it keys the order, so a resumed run sees
            what an uninterrupted one would.
        data_dir: TFDS data dir of image kinds (None: ``TFDS_DATA_DIR``, else
            ~/tensorflow_datasets); the other kinds ignore it.

    Raises:
        ValueError: a field out of its range (saying which); a holdout the task's
            ``check_holdout`` refuses (a task without one: its generator checks it).
    """

    task: Any
    num_examples: int
    split: str = "train"
    seed: int = 0
    holdout: Any = None
    batch_size: int | None = None
    shuffle: bool = True
    epochs: int | None = 1
    first_epoch: int = 0
    data_dir: str | None = None

    def __post_init__(self):
        self._check(FIELDS)

    def _check(self, names):
        """Checks the fields ``names`` (each once: all of them when the request is made, the
        changed ones on ``replace``); stores them normalised (NumPy integers as ``int``)."""
        checked = {}
        if "num_examples" in names:
            checked["num_examples"] = check_positive("num_examples", self.num_examples)
        if "split" in names:
            check_split(self.split)
        if "seed" in names:
            checked["seed"] = check_seed(self.seed)
        if "batch_size" in names and self.batch_size is not None:
            checked["batch_size"] = check_positive("batch_size", self.batch_size)
        if {"epochs", "first_epoch"} & set(names):
            check_schedule(self.epochs, self.first_epoch)
        check_holdout = getattr(self.task, "check_holdout", None)
        if {"task", "holdout"} & set(names) and self.holdout is not None and check_holdout:
            checked["holdout"] = check_holdout(self.holdout)
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def replace(self, **fields):
        """This request with ``fields`` changed; only those are checked (the holdout again
        with a new task)."""
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise ValueError(
                f"unknown stream fields {', '.join(unknown)}; a StreamRequest has "
                f"{', '.join(FIELDS)}"
            )
        changed = self._unchecked(**fields)
        changed._check(tuple(fields))
        return changed

    def _unchecked(self, **fields):
        changed = copy.copy(self)  # a frozen dataclass: no __init__, so no check
        for name, value in fields.items():
            object.__setattr__(changed, name, value)
        return changed


FIELDS = tuple(f.name for f in dataclasses.fields(StreamRequest))


def stream_request(request, num_examples=None, fields=None, *, batch_size, holdout=0):
    """A generator's ``StreamRequest`` with its defaults filled in.

    Args:
        request: a ``StreamRequest``, or the task (then ``num_examples`` and ``fields`` are
            the request's other fields).
        batch_size, holdout: the generator's defaults for unset fields.

    Raises:
        ValueError: a request given with more fields, or a field a request does not have.
    """
    fields = dict(fields or {})
    if request is None:  # the task and its size by keyword
        request = fields.pop("task", None)
        num_examples = fields.pop("num_examples", num_examples)
    if isinstance(request, StreamRequest):
        if num_examples is not None or fields:
            raise ValueError(
                "give a StreamRequest, or a task, num_examples and fields; not both "
                "(request.replace(...) changes a request)"
            )
    else:
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise ValueError(
                f"unknown stream fields {', '.join(unknown)}; a StreamRequest has "
                f"{', '.join(FIELDS)}"
            )
        if request is None or num_examples is None:
            raise ValueError("give a StreamRequest, or a task and num_examples")
        request = StreamRequest(request, num_examples, **fields)
    filled = {}
    if request.batch_size is None:
        filled["batch_size"] = batch_size
    if request.holdout is None:
        filled["holdout"] = holdout
    # The generator's own defaults: nothing to check.
    return request._unchecked(**filled) if filled else request


def takes_request(generator):
    """Whether ``generator`` takes a ``StreamRequest`` (as the library's generators do: a
    positional-only first parameter ``request``); a generator of yours may take the
    request's fields instead (``kinds.TaskKind.dataset``)."""
    try:
        first = next(iter(inspect.signature(generator).parameters.values()), None)
    except (TypeError, ValueError):  # no signature to read (a builtin)
        return False
    return first is not None and first.name == "request" and first.kind is first.POSITIONAL_ONLY


__all__ = ["FIELDS", "StreamRequest", "stream_request", "takes_request"]
