"""The JAX device twins regenerate every token and Boolean split to the committed manifest
(the tf.data streams and the NumPy sources are checked in test_manifest.py)."""

import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import hashes
from tests.benchmarks.test_manifest import HASHED, _chunks


@pytest.mark.slow  # every split at both sizes on JAX
def test_jax_regenerates_every_split_to_the_manifest():
    from pvr_keras.data import device, device_boolean

    committed = hashes.manifest()
    for name in HASHED:
        config = benchmarks.get(name)
        arrays = device.token_arrays if config.family == "token" else device_boolean.boolean_arrays
        for size, splits in committed[name]["sizes"].items():
            for split, entry in splits.items():
                made = hashes.hash_rows(config.family, _chunks(config, split, size, arrays))
                assert made == entry["sha256"], (name, size, split)
