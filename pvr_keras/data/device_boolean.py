"""Alias of ``pvr_keras.kinds.boolean.jax_data``, the boolean kind's generator on the JAX
device (in its folder): this old path keeps importing the same objects."""

from pvr_keras.kinds.boolean.jax_data import (
    ARRAY_BATCH,
    JAX_RULES,
    boolean_arrays,
    boolean_stream,
    check_rule,
    jax_aggregate,
    jax_label,
    make_examples,
)

__all__ = ["ARRAY_BATCH", "JAX_RULES", "boolean_arrays", "boolean_stream", "check_rule",
           "jax_aggregate", "jax_label", "make_examples"]  # fmt: skip
