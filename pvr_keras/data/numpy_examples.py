"""Token and Boolean PVR examples in plain NumPy, by index: an alias of each kind's own
``numpy_data`` (``pvr_keras.kinds.token.numpy_data``, ``pvr_keras.kinds.boolean.numpy_data``),
kept for the code that imports them from here."""

from pvr_keras.kinds.boolean.numpy_data import boolean_examples, boolean_points  # noqa: F401
from pvr_keras.kinds.token.numpy_data import token_examples  # noqa: F401
