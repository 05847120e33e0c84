"""The streams of a run, for any task kind: training, validation, test, and any other set.

``stream`` is the one function that makes a stream of examples of a task: training a run
(``run_data``), a tuning trial (``tuning``) and evaluating a finished run (``FinishedRun``)
all draw their examples through it, so the same split, size, seed and holdout are the same
examples wherever they are made.

``input="tfdata"`` (the default) streams the kind's tf.data pipeline; ``input="device"``
(JAX backend only) makes the same examples, in the same order, with the kind's JAX twin on
the accelerator (its ``TaskKind.device``, a ``jax_data`` module of its folder); the token
twin never imports TensorFlow.

A run's sets:

- training: ``num_examples`` examples of the train split, seed ``seed``, reshuffled each
  epoch;
- training accuracy: the first ``train_eval_examples`` of them, evaluated after each epoch;
- validation: ``validation_examples`` examples (default ``min(test_examples,
  VALIDATION_EXAMPLES)``) of the train split drawn with seed ``seed + 1``: the training
  distribution (a holdout run's validation has no held-out window, like its training set),
  never trained on and not the test set. Keras reports it as ``val_loss`` / ``val_accuracy``
  (model selection, early stopping, the tuner's objective); the run record as
  ``validation_loss`` / ``validation_accuracy``. The benchmark configs' ``validation``
  split is drawn the same way (``benchmarks.catalog``).
- test: ``test_examples`` examples of the test split, seed ``seed`` (with a holdout: only
  held-out examples), evaluated after each epoch as ``test_loss`` / ``test_accuracy``.
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import keras

from pvr_keras import kinds
from pvr_keras.data.request import FIELDS, StreamRequest, takes_request
from pvr_keras.references import resolve
from pvr_keras.runconfig import INPUTS, MAX_SEED

# Size cap of a run's validation set: evaluated after every epoch, so it costs little beside
# the training accuracy and the test set it sits next to.
VALIDATION_EXAMPLES = 5_000


@dataclasses.dataclass
class TrainData:
    """The data a run needs.

    Attributes:
        make_train: ``first_epoch -> dataset`` of training batches repeating forever, each
            epoch reshuffled by its epoch number (so a resumed run sees the same order).
        num_examples: training-set size (sets steps per epoch with the recipe's batch size).
        test: finite test dataset, evaluated after every epoch (``test_loss``,
            ``test_accuracy``).
        train_eval: finite dataset of training examples evaluated after every epoch (the
            "training accuracy" of the paper's plots and failed-run rule); ``None`` uses the
            running accuracy Keras reports during the epoch.
        final_evals: ``{name: finite dataset}`` evaluated once, after the last epoch, into
            the record's ``final`` as ``<name>_accuracy`` and ``<name>_loss`` (a holdout
            run's IID test set: ``iid_test``).
        input: where the batches are made, for the run record: ``"tfdata"`` (tf.data
            pipelines on the host) or ``"device"`` (JAX programs on the accelerator,
            the kind's ``jax_data``); the examples are the same.
        batch_size: the training batch the streams were made with (``*_train_data`` set
            it); ``train`` refuses a recipe of another batch size, since steps per epoch
            come from the recipe's. ``None``: not checked.
        metric: ``"accuracy"`` (classification: cross-entropy on logits) or ``"mse"``
            (regression on one output: mean squared error; see ``compile_model``).
        validation: finite dataset that ``fit`` evaluates after every epoch as its
            ``validation_data`` (Keras's ``val_loss`` / ``val_accuracy``, recorded as
            ``validation_loss`` / ``validation_accuracy``): examples neither trained on nor
            tested (``inputs.train_data``). ``None``: no validation.
        arrays: ``() -> (x, y)``: the training set as NumPy arrays, the same examples (kinds
            of bits: the Degree-Curriculum selects from them). ``None``: not available.
    """

    make_train: Callable[[int], Any]
    num_examples: int
    test: Any
    train_eval: Any = None
    final_evals: dict = dataclasses.field(default_factory=dict)
    input: str = "tfdata"
    batch_size: int | None = None
    metric: str = "accuracy"
    validation: Any = None
    arrays: Callable[[], Any] | None = None


def check_input(input):
    """Validates an input choice for this process's backend; returns it."""
    if input not in INPUTS:
        raise ValueError(f"input must be one of {', '.join(INPUTS)}; received {input!r}")
    if input == "device" and keras.backend.backend() != "jax":
        raise ValueError(
            "input='device' makes the batches with jitted JAX programs, so it needs the JAX "
            f"backend; received backend {keras.backend.backend()!r} (use input='tfdata')"
        )
    return input


def default_input(kind=None):
    """``"device"`` on the JAX backend, ``"tfdata"`` on TensorFlow (and for a kind without
    a device generator)."""
    if kind is not None and kinds.kind(kind).device is None:
        return "tfdata"
    return "device" if keras.backend.backend() == "jax" else "tfdata"


def validation_seed(seed):
    """The seed of a run's validation set: the next one (``seed + 1``, wrapping below
    ``MAX_SEED``)."""
    return (seed + 1) % MAX_SEED


def stream(kind, request, *, input="tfdata"):
    """A stream of the examples ``request`` asks for: batches of ``(x, y)``.

    Args:
        kind: a task kind name or ``kinds.TaskKind``.
        request: a ``data.request.StreamRequest`` of the kind's task (checked when it was
            made, its holdout included): its split, size, seed, holdout, batch and order
            (``shuffle=False, epochs=1``: one pass in index order, an evaluation;
            ``shuffle=True, epochs=None, first_epoch=e``: a training stream, reshuffled by its
            epoch number and repeating forever from epoch ``e``, so a resumed run sees the
            same order); ``data_dir`` for image kinds.
        input: ``"tfdata"`` or ``"device"`` (see the module docstring).

    The kind's generator is given the request itself, or its fields (a generator of yours
    that takes ``(task, num_examples, **fields)``; a field left ``None`` is left to its
    default).

    Example:
        >>> test = stream("token", StreamRequest(TokenTask(window=2), 5_000, split="test",
        ...                                      batch_size=4096, shuffle=False))
    """
    spec = kinds.kind(kind)
    source = spec.stream(check_input(input))
    if takes_request(source):
        return source(request)
    fields = {name: getattr(request, name) for name in FIELDS[2:]}  # after task, num_examples
    for name in ("holdout", "batch_size"):
        if fields[name] is None:  # the generator's default
            del fields[name]
    if not spec.images:
        del fields["data_dir"]
    return source(request.task, request.num_examples, **fields)


def train_data(
    kind,
    task,
    num_examples,
    *,
    test_examples,
    batch_size,
    seed=0,
    holdout=0,
    data_dir=None,
    train_eval_examples=10_000,
    validation_examples=None,
    eval_batch_size=None,
    input="tfdata",
):
    """The streams of a task of ``kind`` for ``training.train`` (see the module docstring
    for each set).

    The training accuracy is evaluated on the first ``train_eval_examples`` training examples
    (the same examples the model trains on: example i is a pure function of its index). With
    ``holdout`` the test split holds only held-out examples (token: windows, Section 6.2;
    blocks: Figure 6); a kind with ``iid_eval`` then also reports the accuracy on an IID test
    set of the same size (``iid_test_accuracy``).

    Args:
        kind: a task kind name or ``kinds.TaskKind`` (``"token"``, ``"block"``, ...).
        task: the kind's task.
        holdout: the kind's holdout setting (checked by the kind's ``check``).
        validation_examples: size of the validation set (default ``min(test_examples,
            VALIDATION_EXAMPLES)``; 0: none, and Keras reports no ``val_*``).
        input: ``"tfdata"`` or ``"device"`` (see the module docstring).
        data_dir: TFDS data dir of image kinds.
        eval_batch_size: batch of the evaluations (default: the kind's).

    Example:
        >>> data = train_data("token", TokenTask(window=2), 30_000, test_examples=5_000,
        ...                   batch_size=1024)
    """
    spec = kinds.kind(kind)
    check_input(input)
    request = StreamRequest(task, num_examples, "train", seed, spec.check(task, holdout),
                            batch_size, epochs=None, data_dir=data_dir)  # fmt: skip
    return _streams(spec, request, test_examples=test_examples,
                    train_eval_examples=train_eval_examples,
                    validation_examples=validation_examples, eval_batch_size=eval_batch_size,
                    input=input)  # fmt: skip


def run_data(run, input=None, *, validation_examples=None):
    """The streams of a ``runconfig.Run`` (its system's input, or ``input``): one request
    of the run's training set (checked once), from which every other set is derived."""
    data, input = run.data, check_input(input or run_input(run))
    request = StreamRequest(
        run.task,
        data.num_examples,
        "train",
        data.seed,
        data.holdout,
        run.train.batch_size,
        epochs=None,
        data_dir=run.system.data_dir,
    )
    return _streams(run.spec, request, test_examples=data.test_examples,
                    train_eval_examples=data.train_eval_examples,
                    validation_examples=validation_examples, input=input)  # fmt: skip


def _streams(spec, train, *, test_examples, train_eval_examples, validation_examples,
             eval_batch_size=None, input):  # fmt: skip
    """The ``TrainData`` of the training request ``train`` (``shuffle=True, epochs=None``):
    each other set is ``train`` with the fields that differ replaced (only they are checked
    again)."""
    evaluation = train.replace(batch_size=eval_batch_size or spec.eval_batch_size,
                               shuffle=False, epochs=1)  # fmt: skip
    if validation_examples is None:
        validation_examples = min(test_examples, VALIDATION_EXAMPLES)

    def make(request):
        return stream(spec, request, input=input)

    def make_train(first_epoch):
        return make(train.replace(first_epoch=first_epoch))

    test = evaluation.replace(split="test", num_examples=test_examples)
    test_stream = make(test)
    train_eval = make(evaluation.replace(num_examples=min(train.num_examples,
                                                          train_eval_examples)))  # fmt: skip
    validation = None
    if validation_examples:
        validation = make(evaluation.replace(num_examples=validation_examples,
                                             seed=validation_seed(train.seed)))  # fmt: skip
    arrays = None
    if spec.models == "bits":  # the training set as NumPy (the Degree-Curriculum's)
        arrays = functools.partial(_arrays, spec.arrays, train.task, train.num_examples,
                                   train.seed, train.holdout)  # fmt: skip
    data = TrainData(make_train, train.num_examples, test_stream, train_eval, input=input,
                     batch_size=train.batch_size, metric=spec.metric,
                     validation=validation, arrays=arrays)  # fmt: skip
    if train.holdout and spec.iid_eval:
        # holdout None: the generator's "no holdout" (0; False for blocks), nothing to check
        data.final_evals["iid_test"] = make(test.replace(holdout=None))
    return data


def _arrays(ref, task, num_examples, seed, holdout):
    """The training split as NumPy arrays, by the kind's ``arrays`` (imported when asked)."""
    return resolve(ref)(task, num_examples, split="train", seed=seed, holdout=holdout)[:2]


def run_input(run):
    """The input a run's streams are made with: its system's, else ``default_input``."""
    return run.system.input or default_input(run.kind)
