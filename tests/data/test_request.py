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


def test_a_request_checks_itself_once_and_replace_checks_what_it_changes(monkeypatch):
    checked, check = [], TokenTask.check_holdout

    def counted(task, holdout):
        checked.append(holdout)
        return check(task, holdout)

    monkeypatch.setattr(TokenTask, "check_holdout", counted)
    request = StreamRequest(TokenTask(window=2), 300, holdout=np.int64(1), batch_size=128)
    assert checked == [1] and type(request.holdout) is int  # checked and normalised
    test = request.replace(split="test", num_examples=100, seed=2, shuffle=False)
    assert checked == [1] and test.holdout == 1  # the holdout unchanged: not checked again
    x, _ = next(iter(token.token_dataset(test)))  # the generator takes it as it is
    assert checked == [1] and len(x) == 100
    assert request.replace(holdout=2).holdout == 2 and checked == [1, 2]
    assert request.replace(task=TokenTask(window=3)).holdout == 1 and checked == [1, 2, 1]
    stream_request(request.replace(holdout=None), batch_size=64)  # the generator's default
    assert checked == [1, 2, 1]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"holdout": 3}, r"holdout must be in 0..window! = 0..2 for window 2; received 3"),
        ({"holdout": "1"}, r"holdout must be an integer in 0..2; received '1'"),
        ({"num_examples": 0}, "num_examples must be a positive integer; received 0"),
        ({"split": "validation"}, "split must be one of"),
        ({"seed": -1}, "seed must be a non-negative integer; received -1"),
        ({"batch_size": 0}, "batch_size must be a positive integer; received 0"),
        ({"epochs": 0}, "epochs must be a positive integer or None; received 0"),
    ],
)
def test_a_bad_field_is_refused_when_the_request_is_made_or_changed(fields, message):
    made = {"task": TokenTask(window=2), "num_examples": 10, **fields}
    with pytest.raises(ValueError, match=message):
        StreamRequest(**made)
    with pytest.raises(ValueError, match=message):
        StreamRequest(TokenTask(window=2), 10).replace(**fields)
    with pytest.raises(ValueError, match=message):
        token.token_dataset(**made)  # a request made of the fields
