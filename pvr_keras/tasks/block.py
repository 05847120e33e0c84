"""An alias of ``pvr_keras.kinds.block.task``, where the block rule lives (its kind's folder)."""

from pvr_keras.kinds.block.task import (
    AGGREGATIONS,
    HOLDOUT_2X2,
    MAX_GRID,
    NUM_CLASSES,
    NUM_DIGITS,
    SOURCE_SHAPES,
    SOURCES,
    BlockTask,
)

__all__ = ["AGGREGATIONS", "HOLDOUT_2X2", "MAX_GRID", "NUM_CLASSES", "NUM_DIGITS",
           "SOURCE_SHAPES", "SOURCES", "BlockTask"]  # fmt: skip
