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

import functools

import keras

from pvr_keras import kinds
from pvr_keras.references import resolve
from pvr_keras.runconfig import INPUTS, MAX_SEED
from pvr_keras.training.loop import TrainData

# Size cap of a run's validation set: evaluated after every epoch, so it costs little beside
# the training accuracy and the test set it sits next to.
VALIDATION_EXAMPLES = 5_000


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


def stream(
    kind, task, split, num_examples, *, seed, holdout, batch_size, input="tfdata",
    data_dir=None, first_epoch=None,
):  # fmt: skip
    """A stream of ``num_examples`` examples of ``task``: batches of ``(x, y)``.

    Args:
        kind: a task kind name or ``kinds.TaskKind``.
        task: the kind's task.
        split: ``"train"`` or ``"test"``.
        seed, holdout: the stream's seed and holdout (checked against the task).
        batch_size: examples per batch.
        input: ``"tfdata"`` or ``"device"`` (see the module docstring).
        data_dir: TFDS data dir of image kinds.
        first_epoch: None: one pass in index order (an evaluation); an epoch number: a
            training stream, reshuffled by its epoch number and repeating forever from that
            epoch (so a resumed run sees the same order).

    Example:
        >>> test = stream("token", TokenTask(window=2), "test", 5_000, seed=0, holdout=0,
        ...               batch_size=4096)
    """
    spec = kinds.kind(kind)
    source = spec.stream(check_input(input))
    extra = {"data_dir": data_dir} if spec.images else {}
    if first_epoch is None:
        order = {"shuffle": False}
    else:
        order = {"shuffle": True, "epochs": None, "first_epoch": first_epoch}
    return source(task, num_examples, split=split, seed=seed, holdout=spec.check(task, holdout),
                  batch_size=batch_size, **extra, **order)  # fmt: skip


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
    holdout = spec.check(task, holdout)
    eval_batch = eval_batch_size or spec.eval_batch_size
    if validation_examples is None:
        validation_examples = min(test_examples, VALIDATION_EXAMPLES)

    def make(split, size, *, seed=seed, holdout=holdout, batch_size=eval_batch, **kwargs):
        return stream(spec, task, split, size, seed=seed, holdout=holdout,
                      batch_size=batch_size, input=input, data_dir=data_dir, **kwargs)  # fmt: skip

    def make_train(first_epoch):
        return make("train", num_examples, batch_size=batch_size, first_epoch=first_epoch)

    test = make("test", test_examples)
    train_eval = make("train", min(num_examples, train_eval_examples))
    validation = None
    if validation_examples:
        validation = make("train", validation_examples, seed=validation_seed(seed))
    arrays = None
    if spec.models == "bits":  # the training set as NumPy (the Degree-Curriculum's)
        arrays = functools.partial(_arrays, spec.arrays, task, num_examples, seed, holdout)
    data = TrainData(make_train, num_examples, test, train_eval, input=input,
                     batch_size=batch_size, metric=spec.metric,
                     validation=validation, arrays=arrays)  # fmt: skip
    if holdout and spec.iid_eval:
        data.final_evals["iid_test"] = make("test", test_examples, holdout=spec.check(task, 0))
    return data


def _arrays(ref, task, num_examples, seed, holdout):
    """The training split as NumPy arrays, by the kind's ``arrays`` (imported when asked)."""
    return resolve(ref)(task, num_examples, split="train", seed=seed, holdout=holdout)[:2]


def run_data(run, input=None, *, validation_examples=None):
    """The streams of a ``runconfig.Run`` (its system's input, or ``input``)."""
    return train_data(
        run.kind,
        run.task,
        run.data.num_examples,
        test_examples=run.data.test_examples,
        batch_size=run.train.batch_size,
        seed=run.data.seed,
        holdout=run.data.holdout,
        data_dir=run.system.data_dir,
        train_eval_examples=run.data.train_eval_examples,
        validation_examples=validation_examples,
        input=input or run_input(run),
    )


def run_input(run):
    """The input a run's streams are made with: its system's, else ``default_input``."""
    return run.system.input or default_input(run.kind)
