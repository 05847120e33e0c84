"""Alias of ``pvr_keras.kinds.boolean.tf_data``, the boolean kind's tf.data generator (in its
folder): this old path keeps importing the same objects."""

from pvr_keras.kinds.boolean.tf_data import (
    CHUNK_EXAMPLES,
    TF_RULES,
    boolean_arrays,
    boolean_dataset,
    check_rule,
    make_examples,
    stream_key,
    tf_aggregate,
    tf_label,
)

__all__ = ["CHUNK_EXAMPLES", "TF_RULES", "boolean_arrays", "boolean_dataset", "check_rule",
           "make_examples", "stream_key", "tf_aggregate", "tf_label"]  # fmt: skip
