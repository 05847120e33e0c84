"""An alias of ``pvr_keras.kinds.token.task``, where the token rule lives (its kind's folder)."""

from pvr_keras.kinds.token.task import (
    AGGREGATIONS,
    MAX_VALUES,
    MAX_WINDOW_CODES,
    WINDOW_MODES,
    TokenTask,
    integer_tokens,
)

__all__ = ["AGGREGATIONS", "MAX_VALUES", "MAX_WINDOW_CODES", "WINDOW_MODES", "TokenTask",
           "integer_tokens"]  # fmt: skip
