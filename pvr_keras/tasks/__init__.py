"""The PVR rules: pure, backend-free NumPy references (the tf.data pipelines follow them)."""

from pvr_keras.tasks.aggregations import AGGREGATIONS, BOOLEAN_AGGREGATIONS, Aggregation, aggregate
from pvr_keras.tasks.block import BlockTask
from pvr_keras.tasks.token import WINDOW_MODES, TokenTask

__all__ = ["AGGREGATIONS", "BOOLEAN_AGGREGATIONS", "BOOLEAN_WINDOW_MODES", "WINDOW_MODES",
           "Aggregation", "BlockTask", "BooleanFunction", "BooleanTask", "Domain",
           "FunctionTask", "TokenTask", "aggregate", "f3", "frozen_bits", "frozen_mask",
           "parse_target"]  # fmt: skip
# The tasks of the kinds in their folders (pvr_keras/kinds/<name>/), after the token task
# (importing one runs pvr_keras.kinds, whose token kind takes it from here).
from pvr_keras.kinds.boolean.domains import Domain  # noqa: E402
from pvr_keras.kinds.boolean.task import (  # noqa: E402
    BOOLEAN_WINDOW_MODES,
    BooleanFunction,
    BooleanTask,
    f3,
    frozen_bits,
    frozen_mask,
)
from pvr_keras.kinds.chain.task import ChainTask  # noqa: E402, F401
from pvr_keras.kinds.gotu.targets import parse_target  # noqa: E402
from pvr_keras.kinds.gotu.task import FunctionTask  # noqa: E402
