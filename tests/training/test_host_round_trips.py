"""The training loop never waits for the host between steps, and steps per compiled call
change nothing but speed."""

import threading

import keras
import numpy as np
import pytest

from pvr_keras import models, training
from pvr_keras.runconfig import Run
from pvr_keras.tasks import TokenTask
from pvr_keras.training import distribute
from pvr_keras.training.inputs import default_input, train_data
from pvr_keras.training.loop import resolve_steps_per_execution

RUN = Run.make("token", num_examples=640, test_examples=64, train_eval_examples=64, batch_size=32,
               epochs=2, warmup_epochs=0, min_steps=0, schedule="constant")  # fmt: skip


def _train(out, *, per_call, callbacks=(), input=None):
    data = train_data("token", TokenTask(), 640, test_examples=64, batch_size=32, seed=0,
                      train_eval_examples=64, input=input or default_input())  # fmt: skip
    return training.train(
        RUN.replace(steps_per_execution=per_call), out, data=data, verbose=0, save_model=False,
        build_model=lambda: models.mlp(embed_dim=4, widths=(8,)), callbacks=list(callbacks),
    )  # fmt: skip


class _NoReadsBetweenSteps(keras.callbacks.Callback):
    """Between the first and the last call of each epoch (the steady state), the training
    thread must not read the device: JAX's ``transfer_guard_device_to_host("disallow")`` is
    on in that thread (it raises on an accelerator; CPU arrays are host memory, which it lets
    through), and, so that the test bites on a CPU too, every conversion of the step's logs
    to Python numbers in that thread (Keras does one per batch, reading the loss from the
    device, as soon as any callback looks at batch ends) is recorded. This callback itself
    only looks at batch beginnings, which never read the device.
    """

    def __init__(self, steps, per_call, monkeypatch):
        super().__init__()
        from keras.src.utils import python_utils

        self.steps, self.per_call = steps, per_call
        self.guarded, self.reads, self._guard = 0, [], None
        self.thread = threading.current_thread()
        pythonify = python_utils.pythonify_logs

        def watched(logs):
            if self._guard is not None and logs and threading.current_thread() is self.thread:
                self.reads.append(sorted(logs))
            return pythonify(logs)

        monkeypatch.setattr(python_utils, "pythonify_logs", watched)

    def _stop(self):
        if self._guard is not None:
            self._guard.__exit__(None, None, None)
            self._guard = None

    def on_train_batch_begin(self, batch, logs=None):
        import jax

        self._stop()
        if self.per_call <= batch < self.steps - self.per_call:  # not the first or last call
            self._guard = jax.transfer_guard_device_to_host("disallow")
            self._guard.__enter__()
            self.guarded += 1

    def on_epoch_end(self, epoch, logs=None):
        self._stop()

    def on_train_end(self, logs=None):
        self._stop()


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="JAX's arrays and transfer guard")
@pytest.mark.parametrize("per_call", [1, 4])
def test_steady_state_steps_read_nothing_from_the_device(tmp_path, per_call, monkeypatch):
    guard = _NoReadsBetweenSteps(steps=20, per_call=per_call, monkeypatch=monkeypatch)
    record = _train(tmp_path / "run", per_call=per_call, callbacks=[guard], input="device")
    assert guard.guarded == 2 * (20 // per_call - 2)  # guarded calls, both epochs
    assert guard.reads == [], f"device reads between steps: {guard.reads[:3]}"
    assert record["status"] == "complete" and record["steps_per_execution"] == per_call


def test_steps_per_call_change_nothing_but_speed(tmp_path):
    one = _train(tmp_path / "one", per_call=1)
    many = _train(tmp_path / "many", per_call=8)  # 20 steps an epoch: 5 per call
    assert one["steps_per_execution"] == 1 and many["steps_per_execution"] == 5
    for key in ("train_loss", "test_loss", "test_accuracy", "train_eval_accuracy"):
        np.testing.assert_array_equal(one["history"][key], many["history"][key], err_msg=key)


def test_the_default_is_up_to_32_steps_dividing_the_epoch():
    assert resolve_steps_per_execution(None, 1024) == 32
    assert resolve_steps_per_execution(None, 1000) == 25
    assert resolve_steps_per_execution(None, 5) == 5
    assert resolve_steps_per_execution(None, 293) == 1  # a prime number of steps
    assert resolve_steps_per_execution(8, 20) == 5
    # An engine's limit (tf.distribute: 1 step per call) caps what was asked.
    assert resolve_steps_per_execution(None, 1024, limit=1) == 1
    assert resolve_steps_per_execution(32, 1000, limit=10) == 10
    assert distribute.Placement(distribute.MIRRORED, ("cpu:0",)).max_steps_per_execution == 1
    assert distribute.Placement(distribute.SINGLE, ("cpu:0",)).max_steps_per_execution is None
    with pytest.raises(ValueError, match="steps_per_execution must be a positive integer"):
        resolve_steps_per_execution(0, 10)
