"""The PVR rules: pure, backend-free NumPy references (the tf.data pipelines follow them).

The rules of the kinds that are folders (``pvr_keras/kinds/<name>/task.py``: ``TokenTask``,
``BlockTask``, ``BooleanTask``, ``FunctionTask``, ``ChainTask``, ...) are re-exported here on
first use, so that importing this package never runs ``pvr_keras.kinds`` (whose folders
import ``tasks.aggregations``).
"""

import importlib

from pvr_keras.tasks.aggregations import AGGREGATIONS, BOOLEAN_AGGREGATIONS, Aggregation, aggregate

# Names from a kind's folder: {name: the module that defines it}.
_FOLDERS = {
    "BlockTask": "pvr_keras.kinds.block.task",
    "BOOLEAN_WINDOW_MODES": "pvr_keras.kinds.boolean.task",
    "BooleanFunction": "pvr_keras.kinds.boolean.task",
    "BooleanTask": "pvr_keras.kinds.boolean.task",
    "ChainTask": "pvr_keras.kinds.chain.task",
    "Domain": "pvr_keras.kinds.boolean.domains",
    "f3": "pvr_keras.kinds.boolean.task",
    "frozen_bits": "pvr_keras.kinds.boolean.task",
    "frozen_mask": "pvr_keras.kinds.boolean.task",
    "FunctionTask": "pvr_keras.kinds.gotu.task",
    "parse_target": "pvr_keras.kinds.gotu.targets",
    "TokenTask": "pvr_keras.kinds.token.task",
    "WINDOW_MODES": "pvr_keras.kinds.token.task",
}

__all__ = ["AGGREGATIONS", "BOOLEAN_AGGREGATIONS", "BOOLEAN_WINDOW_MODES", "WINDOW_MODES",
           "Aggregation", "BlockTask", "BooleanFunction", "BooleanTask", "ChainTask", "Domain",
           "FunctionTask", "TokenTask", "aggregate", "f3", "frozen_bits", "frozen_mask",
           "parse_target"]  # fmt: skip


def __getattr__(name):
    if name in _FOLDERS:
        return getattr(importlib.import_module(_FOLDERS[name]), name)
    raise AttributeError(f"module 'pvr_keras.tasks' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_FOLDERS))
