"""Alias of ``pvr_keras.kinds.boolean.task``, the boolean kind's task and rules (in its
folder): this old path keeps importing the same objects."""

from pvr_keras.kinds.boolean.task import (
    BOOLEAN_AGGREGATIONS,
    BOOLEAN_WINDOW_MODES,
    MAX_BITS,
    BooleanFunction,
    BooleanTask,
    aggregate_bits,
    check_bits,
    check_target,
    f3,
    frozen_bits,
    frozen_mask,
    holdout_of,
    rule_of,
    split_frozen,
)

__all__ = ["BOOLEAN_AGGREGATIONS", "BOOLEAN_WINDOW_MODES", "MAX_BITS", "BooleanFunction",
           "BooleanTask", "aggregate_bits", "check_bits", "check_target", "f3", "frozen_bits",
           "frozen_mask", "holdout_of", "rule_of", "split_frozen"]  # fmt: skip
