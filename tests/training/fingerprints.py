"""What ``model.fit`` trains on, batch by batch: for order, reshuffle and resume tests.

``tapped(model, log)`` puts a ``Tap`` layer in front of a token model. In training calls (and
only there) it hands the batch of tokens it is given to ``log`` from inside the compiled
train step (``jax.debug.callback`` on JAX, ``tf.py_function`` on TensorFlow), as one int64
code per example (the tokens written as the digits of one number: the example itself, not a
hash). So the log holds what the optimizer stepped on, in order, whatever iterators Keras
made of the dataset or how far its prefetching ran ahead.
"""

import json
import time

import keras
import numpy as np


def example_codes(x, num_values=10):
    """(B, seq_len) tokens -> (B,) int64: the digits x[0] ... x[-1]."""
    x = np.asarray(x).astype(np.int64)
    return x @ num_values ** np.arange(x.shape[1] - 1, -1, -1, dtype=np.int64)


class BatchLog:
    """The training batches a ``Tap`` saw, in order (``batches``); with ``path``, also one
    JSON line per batch there (readable after the process is killed: ``read_batch_log``)."""

    def __init__(self, path=None):
        self.batches = []
        self.path = path

    def record(self, x):
        codes = example_codes(x)
        self.batches.append(codes)
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(json.dumps(codes.tolist()) + "\n")


def read_batch_log(path):
    """The batches a ``BatchLog(path)`` wrote, as a list of code arrays."""
    return [np.array(json.loads(line), np.int64) for line in path.read_text().splitlines()]


class Tap(keras.layers.Layer):
    """Identity on its input; in a training call, also sends the input batch to ``log``."""

    def __init__(self, log, **kwargs):
        super().__init__(**kwargs)
        self._log = log
        self.supports_jit = False  # tf.py_function: XLA cannot compile it (Keras's flag)

    def call(self, x, training=False):
        if not training:
            return x
        if keras.backend.backend() == "jax":
            import jax

            jax.debug.callback(self._log.record, x, ordered=True)
            return x
        import tensorflow as tf

        def record(batch):
            self._log.record(batch.numpy())
            return np.int64(0)

        done = tf.py_function(record, [x], tf.int64)
        with tf.control_dependencies([done]):
            return tf.identity(x)


class Progress(keras.callbacks.Callback):
    """Counts the batches ``fit`` trained on; at ``(epoch, batch)`` ``stop`` raises
    ``Interrupted`` (an in-process kill) or, with ``stall``, writes a line to ``path`` and
    waits there to be killed."""

    def __init__(self, stop=None, *, path=None, stall=False):
        super().__init__()
        self.stop, self.path, self.stall = stop, path, stall
        self.batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1
        if self.stop is None or (self.epoch, batch) != tuple(self.stop):
            return
        if not self.stall:
            raise Interrupted(f"interrupted after batch {batch} of epoch {self.epoch}")
        with open(self.path, "a") as f:
            f.write(f"stalled at epoch {self.epoch} batch {batch}\n")
        time.sleep(600)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch


class Interrupted(Exception):
    pass


class WithCallbacks(keras.Model):
    """A functional model whose ``fit`` also runs ``extra_callbacks``: how a test joins the
    ``fit`` call that ``training.train`` makes."""

    def __init__(self, *args, extra_callbacks=(), **kwargs):
        super().__init__(*args, **kwargs)
        self._extra = tuple(extra_callbacks)

    def fit(self, *args, callbacks=None, **kwargs):
        return super().fit(*args, callbacks=[*(callbacks or []), *self._extra], **kwargs)


def tapped(model, log, *callbacks):
    """``model`` behind a ``Tap`` into ``log``, as a model whose ``fit`` also runs
    ``callbacks``."""
    tokens = keras.Input(model.input.shape[1:], dtype=model.input.dtype, name="tokens")
    logits = model(Tap(log, name="tap")(tokens))
    return WithCallbacks(tokens, logits, extra_callbacks=callbacks, name=model.name)


def checkpoint_arrays(run_dir):
    """{name: array} of every weight and optimizer variable in a run's checkpoint."""
    import h5py

    arrays = {}
    with h5py.File(run_dir / "checkpoint" / "model.weights.h5", "r") as f:
        f.visititems(
            lambda name, item: (
                arrays.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None
            )
        )
    return arrays
