"""The training and evaluation streams of a run, for any task kind.

``input="tfdata"`` (the default) streams the kind's tf.data pipeline; ``input="device"``
(JAX backend only) makes the same examples, in the same order, with the kind's JAX twin on
the accelerator (``data.device``, ``data.device_images``); the token twin never imports
TensorFlow.
"""

import keras

from pvr_keras import kinds
from pvr_keras.runconfig import INPUTS
from pvr_keras.training.loop import TrainData


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
    eval_batch_size=None,
    input="tfdata",
):
    """Train/test streams of a task of ``kind`` for ``training.train``.

    The training accuracy is evaluated on the first ``train_eval_examples`` training examples
    (the same examples the model trains on: example i is a pure function of its index). With
    ``holdout`` the test split holds only held-out examples (token: windows, Section 6.2;
    blocks: Figure 6); a kind with ``iid_eval`` then also reports the accuracy on an IID test
    set of the same size (``iid_test_accuracy``).

    Args:
        kind: a task kind name or ``kinds.TaskKind`` (``"token"``, ``"block"``, ...).
        task: the kind's task.
        input: ``"tfdata"`` or ``"device"`` (see the module docstring).
        data_dir: TFDS data dir of image kinds.
        eval_batch_size: batch of the evaluations (default: the kind's).

    Example:
        >>> data = train_data("token", TokenTask(window=2), 30_000, test_examples=5_000,
        ...                   batch_size=1024)
    """
    spec = kinds.kind(kind)
    source = spec.stream(check_input(input))
    holdout = spec.check(task, holdout)
    extra = {"data_dir": data_dir} if spec.images else {}
    eval_batch = eval_batch_size or spec.eval_batch_size

    def stream(split, size, *, holdout=holdout, **kwargs):
        return source(task, size, split=split, seed=seed, holdout=holdout, **extra, **kwargs)

    def make_train(first_epoch):
        return stream("train", num_examples, batch_size=batch_size, shuffle=True, epochs=None,
                      first_epoch=first_epoch)  # fmt: skip

    test = stream("test", test_examples, batch_size=eval_batch, shuffle=False)
    train_eval = stream(
        "train", min(num_examples, train_eval_examples), batch_size=eval_batch, shuffle=False
    )
    data = TrainData(make_train, num_examples, test, train_eval, input=input,
                     batch_size=batch_size, metric=spec.metric)  # fmt: skip
    if holdout and spec.iid_eval:
        iid = spec.check(task, 0)
        data.final_evals["iid_test"] = stream(
            "test", test_examples, holdout=iid, batch_size=eval_batch, shuffle=False
        )
    return data


def run_data(run, input=None):
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
        input=input or run.system.input or default_input(run.kind),
    )
