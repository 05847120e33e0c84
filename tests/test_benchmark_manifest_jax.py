"""The JAX device twins regenerate every token and Boolean split to the committed manifest
(those of ``REGENERATED``: all but 8 of f3's frozen-bit configs; the tf.data streams and the
NumPy sources are checked in tests/benchmarks/test_manifest.py)."""

import pytest

from tests.benchmarks.test_manifest import check_every_split


@pytest.mark.slow  # every split on JAX
def test_jax_regenerates_every_split_to_the_manifest():
    from pvr_keras.kinds.boolean import jax_data as device_boolean
    from pvr_keras.kinds.token import jax_data as device

    def arrays(task, n, **where):
        maker = device_boolean.boolean_arrays if hasattr(task, "num_bits") else device.token_arrays
        return maker(task, n, **where)

    check_every_split(arrays)
