"""One ``StreamRequest`` for every generator: a request and its fields make the same batches,
and the generators' defaults fill what a request leaves unset."""

import inspect

import numpy as np
import pytest

from pvr_keras.data.request import FIELDS, StreamRequest, stream_request
from pvr_keras.kinds.block import jax_data as device_images
from pvr_keras.kinds.block import tf_data as block_data
from pvr_keras.kinds.boolean import jax_data as device_boolean
from pvr_keras.kinds.boolean import tf_data as boolean
from pvr_keras.kinds.sequence import jax_data as sequence_device
from pvr_keras.kinds.sequence import tf_data as sequence_data
from pvr_keras.kinds.token import jax_data as device
from pvr_keras.kinds.token import tf_data as token
from pvr_keras.tasks import BooleanTask, TokenTask, f3

GENERATORS = (token.token_dataset, device.token_stream, boolean.boolean_dataset,
              device_boolean.boolean_stream, block_data.block_dataset,
              device_images.block_stream, sequence_data.sequence_dataset,
              sequence_device.sequence_stream)  # fmt: skip


def test_the_eight_generators_take_a_request():
    for generator in GENERATORS:
        parameters = inspect.signature(generator).parameters
        assert list(parameters)[:2] == ["request", "num_examples"], generator.__name__
        assert set(parameters) <= {"request", "num_examples", "fields", "dtype"}


@pytest.mark.parametrize("generator", [token.token_dataset, device.token_stream])
def test_a_request_and_its_fields_make_the_same_batches(generator):
    task = TokenTask(window=2)
    request = StreamRequest(task, 300, split="test", seed=3, holdout=1, batch_size=128,
                            shuffle=True, first_epoch=2)  # fmt: skip
    by_request = [np.asarray(x) for x, _ in generator(request)]
    by_fields = [np.asarray(x) for x, _ in generator(task, 300, split="test", seed=3, holdout=1,
                                                     batch_size=128, first_epoch=2)]  # fmt: skip
    assert [len(x) for x in by_request] == [128, 128, 44]
    assert all((a == b).all() for a, b in zip(by_request, by_fields, strict=True))


def test_unset_fields_take_the_generators_defaults():
    request = StreamRequest(f3(), 100)
    assert stream_request(request, batch_size=64).batch_size == 64
    assert stream_request(request, batch_size=64, holdout=False).holdout is False
    assert stream_request(request.replace(batch_size=8), batch_size=64).batch_size == 8
    x, _ = next(iter(boolean.boolean_dataset(request)))
    assert len(x) == 64
    x, _ = device_boolean.boolean_stream(BooleanTask(), 100)[0]
    assert len(x) == 64


def test_bad_requests_say_what_is_wrong():
    task = TokenTask()
    with pytest.raises(ValueError, match="unknown stream fields batchsize; a StreamRequest has"):
        token.token_dataset(task, 10, batchsize=4)
    with pytest.raises(ValueError, match="give a StreamRequest, or a task, num_examples"):
        token.token_dataset(StreamRequest(task, 10), batch_size=4)
    with pytest.raises(ValueError, match="give a StreamRequest, or a task and num_examples"):
        token.token_dataset(task)
    assert FIELDS[:2] == ("task", "num_examples")
