"""``model.fit(dataset, epochs=N)``, the way a Keras user calls it, on the library's streams:
each epoch of ``fit`` sees the next epoch's order, and ``initial_epoch``/``first_epoch``
resume the orders of an uninterrupted run."""

import keras
import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.tasks import TokenTask

TASK = TokenTask(window=2)
N, BATCH = 300, 64  # 5 batches a pass, the last one short


P = 2039.0  # a prime small enough that every product below stays exact in float32


class OrderPrint(keras.metrics.Metric):
    """A fingerprint of the labels ``fit`` consumes, in order: sum over steps s and rows r of
    y[s, r] * (r + 1) * 31^s, mod P; fit resets it each epoch, so one value per epoch."""

    def __init__(self, **kwargs):
        super().__init__(name="order", **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.scale = self.add_variable(shape=(), initializer="ones", name="scale")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y = keras.ops.cast(keras.ops.reshape(y_true, (-1,)), "float32")
        rows = keras.ops.cast(keras.ops.arange(keras.ops.shape(y)[0]) + 1, "float32")
        batch = keras.ops.mod(keras.ops.sum(y * rows), P)
        total, scale = self.total.value, self.scale.value
        self.total.assign(keras.ops.mod(total + batch * scale, P))
        self.scale.assign(keras.ops.mod(scale * 31.0, P))

    def reset_state(self):  # the default zeroes every variable, the scale too
        self.total.assign(0.0)
        self.scale.assign(1.0)

    def result(self):
        return self.total.value


def reference(y_batches):
    total, scale = 0, 1
    for y in y_batches:
        batch = int((y.astype(np.int64) * np.arange(1, len(y) + 1)).sum()) % int(P)
        total, scale = (total + batch * scale) % int(P), scale * 31 % int(P)
    return total


def _model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((TASK.seq_len,), dtype="int32")
    x = keras.layers.Embedding(10, 2)(inputs)
    outputs = keras.layers.Dense(10)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(0.0),  # the weights do not matter, only the order
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[OrderPrint()],
    )
    return model


def _fit_orders(dataset, epochs, initial_epoch=0):
    history = _model().fit(dataset, epochs=epochs, initial_epoch=initial_epoch, verbose=0)
    return history.history["order"]


def test_fit_sees_a_new_order_each_epoch_and_resumes_it():
    stream = dict(batch_size=BATCH, seed=4, shuffle=True)
    orders = _fit_orders(data.token_dataset(TASK, N, **stream), epochs=4)
    # Epoch e of fit is exactly the pass the dataset makes with first_epoch=e.
    expected = [
        reference([y.numpy() for _, y in data.token_dataset(TASK, N, first_epoch=e, **stream)])
        for e in range(4)
    ]
    np.testing.assert_array_equal(orders, expected)
    assert len(set(orders)) == 4  # a new order every epoch
    # Killed after epoch 2: a new process resumes at epoch 2 with first_epoch=2.
    resumed = _fit_orders(data.token_dataset(TASK, N, first_epoch=2, **stream), 4, 2)
    np.testing.assert_array_equal(resumed, expected[2:])


def test_unshuffled_stream_is_the_same_every_epoch():
    orders = _fit_orders(data.token_dataset(TASK, N, batch_size=BATCH, shuffle=False), 3)
    assert orders[0] == orders[1] == orders[2]


@pytest.mark.parametrize("epochs", [2])
def test_multi_pass_iterations_continue_the_count(epochs):
    """Two passes per iteration: iterating twice gives epochs 0-1, then 2-3."""
    ds = data.token_dataset(TASK, N, batch_size=N, seed=1, epochs=epochs)
    first = [y.numpy() for _, y in ds]
    second = [y.numpy() for _, y in ds]
    later = [y.numpy() for _, y in data.token_dataset(TASK, N, batch_size=N, seed=1,
                                                       epochs=2, first_epoch=2)]  # fmt: skip
    np.testing.assert_array_equal(np.stack(second), np.stack(later))
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[0], second[0])


def test_block_stream_through_fit(tmp_path):
    """The block (and image-sequence) streams share the count: a new order per fit epoch."""
    import tensorflow_datasets as tfds

    from pvr_keras.data import images
    from pvr_keras.tasks import BlockTask
    from tests.tfds_fakes import fake_prepared

    fake_prepared(tmp_path, ["mnist"])
    task = BlockTask()
    stream = dict(split="train", seed=2, batch_size=20, data_dir=tmp_path)
    images.clear_cache()
    try:
        with tfds.testing.mock_data(num_examples=50):
            ds = data.block_dataset(task, 100, **stream)
            expected = [
                reference([y.numpy() for _, y in data.block_dataset(task, 100, first_epoch=e,
                                                                    **stream)])
                for e in range(3)
            ]  # fmt: skip
            inputs = keras.Input(task.image_shape)
            model = keras.Model(inputs, keras.layers.Dense(10)(keras.layers.Flatten()(inputs)))
            model.compile(
                optimizer=keras.optimizers.SGD(0.0),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=[OrderPrint()],
            )
            orders = model.fit(ds, epochs=3, verbose=0).history["order"]
    finally:
        images.clear_cache()
    np.testing.assert_array_equal(orders, expected)
    assert len(set(orders)) == 3
