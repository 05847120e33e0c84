"""Alias of the gotu kind's ``pvr_keras.kinds.gotu.task`` (``FunctionTask``) and
``pvr_keras.kinds.gotu.targets`` (targets written as text), in its folder: this old path keeps
importing the same objects."""

from pvr_keras.kinds.gotu.targets import (
    MAX_TARGET_VALUE,
    canonical_target,
    expansion_of,
    parse_target,
)
from pvr_keras.kinds.gotu.task import DRAWS, MAX_ENUMERATED_BITS, FunctionTask

__all__ = ["DRAWS", "MAX_ENUMERATED_BITS", "MAX_TARGET_VALUE", "FunctionTask",
           "canonical_target", "expansion_of", "parse_target"]  # fmt: skip
