"""An alias of ``pvr_keras.kinds.token.jax_data``, the token kind's JAX twin (its folder)."""

from pvr_keras.kinds.token.jax_data import (
    ARRAY_BATCH,
    JAX_RULES,
    check_rule,
    jax_aggregate,
    jax_label,
    make_examples,
    token_arrays,
    token_stream,
)

__all__ = ["ARRAY_BATCH", "JAX_RULES", "check_rule", "jax_aggregate", "jax_label",
           "make_examples", "token_arrays", "token_stream"]  # fmt: skip
