"""An alias of ``pvr_keras.kinds.block.tf_data``, the block kind's tf.data stream (its folder)."""

from pvr_keras.kinds.block.tf_data import (
    CHUNK_EXAMPLES,
    DTYPES,
    block_arrays,
    block_dataset,
    check_dtype,
    make_composer,
    make_examples,
    prepare,
    stream_key,
    to_float,
)

__all__ = ["CHUNK_EXAMPLES", "DTYPES", "block_arrays", "block_dataset", "check_dtype",
           "make_composer", "make_examples", "prepare", "stream_key", "to_float"]  # fmt: skip
