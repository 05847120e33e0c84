"""The PVR rules: pure, backend-free NumPy references (the tf.data pipelines follow them)."""

from pvr_keras.tasks.aggregations import AGGREGATIONS, Aggregation, aggregate
from pvr_keras.tasks.block import BlockTask
from pvr_keras.tasks.boolean import (
    BOOLEAN_AGGREGATIONS,
    BOOLEAN_WINDOW_MODES,
    BooleanFunction,
    BooleanTask,
    f3,
    frozen_bits,
    frozen_mask,
)
from pvr_keras.tasks.domains import Domain
from pvr_keras.tasks.functions import FunctionTask, parse_target
from pvr_keras.tasks.token import WINDOW_MODES, TokenTask

__all__ = ["AGGREGATIONS", "BOOLEAN_AGGREGATIONS", "BOOLEAN_WINDOW_MODES", "WINDOW_MODES",
           "Aggregation", "BlockTask", "BooleanFunction", "BooleanTask", "Domain",
           "FunctionTask", "TokenTask", "aggregate", "f3", "frozen_bits", "frozen_mask",
           "parse_target"]  # fmt: skip
from pvr_keras.kinds.chain.task import ChainTask  # noqa: E402, F401  (its kind's folder)
