"""An alias of ``pvr_keras.kinds.sequence.tf_data``, the image-sequence kind's tf.data stream
(its folder)."""

from pvr_keras.kinds.sequence.tf_data import (
    CHUNK_EXAMPLES,
    NUM_DIGITS,
    make_examples,
    prepare,
    sequence_arrays,
    sequence_dataset,
)

__all__ = ["CHUNK_EXAMPLES", "NUM_DIGITS", "make_examples", "prepare", "sequence_arrays",
           "sequence_dataset"]  # fmt: skip
