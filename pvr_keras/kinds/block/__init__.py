"""The block kind: 2x2 (or 3x3) blocks of MNIST / CIFAR-10 images (Section 3.2, Figures 3 and
6-8), in one folder.

- ``task``: ``BlockTask`` (grid, cell, value source, window, aggregation) and its NumPy rule,
  ``label`` (of the cells' classes);
- ``keys``: the stream key and hash slots the two generators share;
- ``tf_data``: ``block_dataset`` and ``block_arrays`` (``data.block_dataset``,
  ``data.block_arrays``), composed by an XLA-compiled composer, and ``prepare`` (the TFDS
  images it reads);
- ``jax_data``: ``block_stream``, its twin made on the JAX device;
- ``kind``: the ``TaskKind`` (registered as ``block`` by ``pvr_keras.kinds``) and the presets
  of the block recipes (``PRESETS``: ``block_iid.py``, ``block_holdout.py``);
- ``benchmark``: its benchmark hooks (rows, TFDS features), at the benchmarks' layer.

The two generators make the same images, bit for bit. Importing this package loads only the
task (no framework); the kind registers when ``pvr_keras.kinds`` loads ``kind``.
"""

from pvr_keras.kinds.block.task import SOURCES, BlockTask

__all__ = ["SOURCES", "BlockTask"]
