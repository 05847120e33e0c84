"""An alias: the block and image-sequence kinds' JAX twins, now each in its kind's folder,
``pvr_keras.kinds.block.jax_data`` and ``pvr_keras.kinds.sequence.jax_data`` (which composer
makes the block images is that module's ``COMPOSE``)."""

from pvr_keras.kinds.block.jax_data import DTYPES, block_arrays, block_source, block_stream
from pvr_keras.kinds.block.jax_data import make_examples as make_block_examples
from pvr_keras.kinds.sequence.jax_data import make_examples as make_sequence_examples
from pvr_keras.kinds.sequence.jax_data import sequence_arrays, sequence_source, sequence_stream

__all__ = ["DTYPES", "block_arrays", "block_source", "block_stream", "make_block_examples",
           "make_sequence_examples", "sequence_arrays", "sequence_source",
           "sequence_stream"]  # fmt: skip
