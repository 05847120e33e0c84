"""An alias of ``pvr_keras.kinds.token.tf_data``, the token kind's tf.data stream (its folder)."""

from pvr_keras.kinds.token.tf_data import (
    CHUNK_EXAMPLES,
    TF_RULES,
    check_rule,
    make_examples,
    stream_key,
    tf_aggregate,
    tf_label,
    token_arrays,
    token_dataset,
)

__all__ = ["CHUNK_EXAMPLES", "TF_RULES", "check_rule", "make_examples", "stream_key",
           "tf_aggregate", "tf_label", "token_arrays", "token_dataset"]  # fmt: skip
