"""The PVR rules: pure, backend-free NumPy references (the tf.data pipelines follow them)."""

from pvr_keras.tasks.aggregations import AGGREGATIONS, aggregate
from pvr_keras.tasks.block import BlockTask
from pvr_keras.tasks.token import WINDOW_MODES, TokenTask

__all__ = ["AGGREGATIONS", "WINDOW_MODES", "BlockTask", "TokenTask", "aggregate"]
