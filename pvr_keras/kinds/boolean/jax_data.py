"""Boolean PVR made on the JAX device: the twin of ``tf_data``, bit for bit, no TensorFlow.

Example ``i`` is the same pure function of (seed, split, frozen bits, i) as in
``boolean_dataset``: the same key (``keys``), the same 64-bit hash (``data.jax_random``, a
pair of uint32 words: bit j < 32 of the low word, bit j - 32 of the high one), the same
frozen bits and labels, the same epoch orders.

Example:
    >>> from pvr_keras.kinds.boolean import jax_data
    >>> stream = jax_data.boolean_stream(f3(), 1900, batch_size=64)
    >>> x, y = stream[0]
    >>> x.shape, y.shape
    ((64, 11), (64,))
"""

import jax
import jax.numpy as jnp
import numpy as np

from pvr_keras.data import jax_random
from pvr_keras.data.checks import check_memory, check_size
from pvr_keras.data.jax_stream import DeviceStream
from pvr_keras.data.jax_stream import collect as _collect
from pvr_keras.data.request import StreamRequest, stream_request
from pvr_keras.kinds.boolean import keys
from pvr_keras.kinds.boolean.keys import draw_plan, pattern_columns
from pvr_keras.kinds.boolean.task import (
    BooleanFunction,
    check_target,
    holdout_of,
    rule_of,
    split_frozen,
)
from pvr_keras.tasks import aggregations

ARRAY_BATCH = 65_536


def _parity(window, present):
    return jnp.prod(jnp.where(present, window, 1.0), axis=1)


def _majority(window, present):
    return jnp.sign(jnp.sum(jnp.where(present, window, 0.0), axis=1))


def _min(window, present):
    return jnp.min(jnp.where(present, window, 1.0), axis=1)


def _max(window, present):
    return jnp.max(jnp.where(present, window, -1.0), axis=1)


# The JAX rules, by name (``tasks.aggregations.NUMPY_BOOLEAN``'s twins).
JAX_RULES = {"parity": _parity, "majority": _majority, "min": _min, "max": _max}


def jax_aggregate(aggregation, window, present):
    """The twin of ``tf_data.tf_aggregate``: (B, w) float +1/-1, bool present -> (B,)."""
    found = JAX_RULES.get(aggregation)
    if found is not None:
        return found(window, present)
    own = aggregations.rule(aggregation, "jax", "boolean")
    return own(window, present).astype(jnp.float32)


def check_rule(task):
    """A Boolean aggregation of yours agrees with its NumPy rule on JAX before it makes any
    example (``tasks.aggregations.check_backend``)."""
    if task.aggregation is None or task.aggregation in JAX_RULES:
        return
    width = len(task.subset) if isinstance(task, BooleanFunction) else task.window

    def compute(window, present):
        own = aggregations.rule(task.aggregation, "jax", "boolean")
        return np.asarray(jax.jit(own)(jnp.asarray(window), jnp.asarray(present)))

    aggregations.check_backend(task.aggregation, "jax", compute, width=width, family="boolean")


def jax_label(task, x):
    """The twin of the task's ``label``: x (B, d) +1/-1 -> (B,) float32."""
    x = x.astype(jnp.float32)
    if isinstance(task, BooleanFunction):
        if task.aggregation is not None:
            window = x[:, list(task.subset)]
            return jax_aggregate(task.aggregation, window, jnp.ones(window.shape, bool))
        out = jnp.zeros(x.shape[:1], jnp.float32)
        for bits, coefficient in task.terms:
            out = out + np.float32(coefficient) * jnp.prod(x[:, list(bits)], axis=1)
        return out
    p, v = task.pointer_bits, task.num_value_bits
    powers = (2 ** np.arange(p - 1, -1, -1)).astype(np.int32)
    pointer = jnp.sum(((x[:, :p] + 1) / 2).astype(jnp.int32) * powers, axis=1)
    positions = pointer[:, None] + np.arange(task.window, dtype=np.int32)
    if task.window_mode == "cyclic":
        positions, present = positions % v, jnp.ones(positions.shape, bool)
    else:
        present = positions < v
        positions = jnp.minimum(positions, v - 1)
    window = jnp.take_along_axis(x[:, p:], positions, axis=1)
    return jax_aggregate(task.aggregation, window, present)


def make_examples(task, key, frozen, split="train"):
    """``fn(index, constants=()) -> {"x", "y"}`` for (B,) uint32 indices, traceable in
    ``jax.jit``: x int8 (B, d), y float32 (B,), equal to ``tf_data.make_examples``."""
    d = task.num_bits
    word = np.array([1 if j >= 32 else 0 for j in range(d)])  # 1: the high word
    shift = np.array([j % 32 for j in range(d)], np.uint32)
    keep = np.array([not (frozen >> j) & 1 for j in range(d)])
    plan = draw_plan(task, key, split)
    inside, own_shift = pattern_columns(plan, d)
    task = rule_of(task)  # a FunctionTask's function labels its points
    check_rule(task)

    def cube_bits(index):
        slots = 1 if plan.mode == "cube" else 2
        hi, lo = jax_random.random_bits(key, index, slots)  # (B, slots) each
        words = jnp.where(word[None] == 1, hi[:, :1], lo[:, :1])  # (B, d)
        x = 1 - 2 * ((words >> shift[None]) & 1).astype(jnp.int32)
        x = jnp.where(keep[None], x, 1)
        if plan.mode == "patterns":  # the domain's bits: a seen pattern, uniformly
            choice = jax_random.uniform_int(hi[:, 1], len(plan.table))
            pattern = jnp.asarray(plan.table.astype(np.int32))[choice]
            own = (pattern[:, None] >> own_shift.astype(np.int32)[None]) & 1
            x = jnp.where(inside[None], 1 - 2 * own, x)
        return x

    def rows_bits(index):
        table = jnp.asarray(plan.table.astype(np.int32))
        rows = table[index.astype(jnp.uint32) % np.uint32(len(plan.table))]
        return 1 - 2 * ((rows[:, None] >> np.arange(d, dtype=np.int32)[None]) & 1)

    def examples(index, constants=()):
        del constants
        x = rows_bits(index) if plan.mode == "rows" else cube_bits(index)
        return {"x": x.astype(jnp.int8), "y": jax_label(task, x)}

    return examples


def boolean_stream(request=None, num_examples=None, /, **fields):
    """Batched Boolean examples made on the JAX device: ``boolean_dataset``'s twin (same
    request, same examples, same order); a ``DeviceStream`` of (x int8, y float32)."""
    r = stream_request(request, num_examples, fields, batch_size=64)  # checked when made
    task, num_examples, split, seed, holdout = r.task, r.num_examples, r.split, r.seed, r.holdout
    check_target(task)
    check_size(num_examples)
    frozen = split_frozen(task, holdout, split)  # checks the holdout (the task has no check)
    key = keys.stream_key(task.num_bits, seed, split, frozen)
    return DeviceStream(make_examples(task, key, frozen, split), num_examples, r.batch_size, key,
                        shuffle=r.shuffle, epochs=r.epochs, first_epoch=r.first_epoch)  # fmt: skip


def boolean_arrays(task, num_examples, *, split="train", seed=0, frozen=(), holdout=0):
    """The first ``num_examples`` examples of a split as NumPy, made on the device: equal to
    ``data.boolean_arrays`` for the same arguments."""
    holdout = holdout_of(task, frozen, holdout)
    check_memory(check_size(num_examples), task.num_bits + 4, "boolean_arrays")
    request = StreamRequest(task, num_examples, split, seed, holdout,
                            min(num_examples, ARRAY_BATCH), shuffle=False)  # fmt: skip
    stream = boolean_stream(request)
    return _collect(stream)
