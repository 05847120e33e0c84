"""Builds ``TrainData`` for each task family from the data pipelines.

``input="tfdata"`` (the default) streams tf.data pipelines; ``input="device"`` (JAX backend
only) makes the same examples, in the same order, with JAX programs on the accelerator
(``data.device``, ``data.device_images``), and never imports TensorFlow for token tasks.
"""

import importlib

import keras

from pvr_keras import data
from pvr_keras.training.loop import TrainData

TRAIN_EVAL_EXAMPLES = 10_000
INPUTS = ("tfdata", "device")


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


def default_input():
    """``"device"`` on the JAX backend, ``"tfdata"`` on TensorFlow."""
    return "device" if keras.backend.backend() == "jax" else "tfdata"


def _source(input, tfdata_name, device_module, device_name):
    """The stream function of a task family for an input choice."""
    if check_input(input) == "device":
        return getattr(importlib.import_module(f"pvr_keras.data.{device_module}"), device_name)
    return getattr(data, tfdata_name)


def _train_data(
    stream,
    num_examples,
    *,
    test_examples,
    batch_size,
    train_eval_examples,
    eval_batch_size,
    input,
):
    """TrainData from ``stream(split, size, **dataset_kwargs)`` of one task family."""

    def make_train(first_epoch):
        return stream(
            "train",
            num_examples,
            batch_size=batch_size,
            shuffle=True,
            epochs=None,
            first_epoch=first_epoch,
        )

    test = stream("test", test_examples, batch_size=eval_batch_size, shuffle=False)
    train_eval = stream(
        "train",
        min(num_examples, train_eval_examples),
        batch_size=eval_batch_size,
        shuffle=False,
    )
    return TrainData(make_train, num_examples, test, train_eval, input=input, batch_size=batch_size)


def token_train_data(
    task,
    num_examples,
    *,
    test_examples,
    batch_size,
    seed=0,
    holdout=0,
    train_eval_examples=TRAIN_EVAL_EXAMPLES,
    eval_batch_size=4096,
    input="tfdata",
):
    """Train/test streams of a token task for ``training.train``.

    The training accuracy is evaluated on the first ``train_eval_examples`` training examples
    (the same examples the model trains on: example i is a pure function of its index). With
    ``holdout`` the test split holds only held-out windows (Section 6.2), and the run also
    reports its accuracy on an IID test set of the same size (``iid_test_accuracy``).
    ``input``: ``"tfdata"`` or ``"device"`` (see the module docstring).
    """
    source = _source(input, "token_dataset", "device", "token_stream")

    def stream(split, size, **kwargs):
        return source(task, size, split=split, seed=seed, holdout=holdout, **kwargs)

    train_data = _train_data(
        stream,
        num_examples,
        test_examples=test_examples,
        batch_size=batch_size,
        train_eval_examples=train_eval_examples,
        eval_batch_size=eval_batch_size,
        input=input,
    )
    if holdout:
        train_data.final_evals["iid_test"] = source(
            task, test_examples, split="test", seed=seed, batch_size=eval_batch_size, shuffle=False
        )
    return train_data


def block_train_data(
    task,
    num_examples,
    *,
    test_examples,
    batch_size,
    seed=0,
    holdout=False,
    data_dir=None,
    train_eval_examples=TRAIN_EVAL_EXAMPLES,
    eval_batch_size=500,
    input="tfdata",
):
    """Train/test streams of a block-style visual task (``BlockTask``) for ``training.train``.

    As ``token_train_data``: the training accuracy is evaluated on the first
    ``train_eval_examples`` training examples. With ``holdout`` (Figure 6) the training split
    never holds a held-out digit in its cell and the test split holds only those.
    """
    source = _source(input, "block_dataset", "device_images", "block_stream")

    def stream(split, size, **kwargs):
        return source(
            task, size, split=split, seed=seed, holdout=holdout, data_dir=data_dir, **kwargs
        )

    return _train_data(
        stream,
        num_examples,
        test_examples=test_examples,
        batch_size=batch_size,
        train_eval_examples=train_eval_examples,
        eval_batch_size=eval_batch_size,
        input=input,
    )


def sequence_train_data(
    task,
    num_examples,
    *,
    test_examples,
    batch_size,
    seed=0,
    holdout=0,
    data_dir=None,
    train_eval_examples=TRAIN_EVAL_EXAMPLES,
    eval_batch_size=500,
    input="tfdata",
):
    """Train/test streams of the image-sequence task (a ``TokenTask`` drawn as MNIST digits,
    Figure 2) for ``training.train``; as ``token_train_data``, with holdout-k on the tokens."""
    source = _source(input, "sequence_dataset", "device_images", "sequence_stream")

    def stream(split, size, **kwargs):
        return source(
            task, size, split=split, seed=seed, holdout=holdout, data_dir=data_dir, **kwargs
        )

    return _train_data(
        stream,
        num_examples,
        test_examples=test_examples,
        batch_size=batch_size,
        train_eval_examples=train_eval_examples,
        eval_batch_size=eval_batch_size,
        input=input,
    )
