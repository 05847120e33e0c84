"""What the two block generators share, in plain Python: the stream key and the hash slots.

Example i of a split is a pure function of (seed, split, holdout, i): the 64-bit hash of i
under the split's key, ``SLOTS_PER_CELL`` slots per cell (row-major, cell 0 the pointer),
read the same way by tf.data (``tf_data``) and JAX (``jax_data``):

- slot 3k: the image of cell k, uniform among the images it may hold (the pointer: the MNIST
  split; a value cell: its source's split, or under Figure 6's holdout the images of the
  classes it may hold there);
- slots 3k + 1, 3k + 2: the row and column offset of that image inside its cell, uniform.

IID and holdout share the key: the same pointers and offsets, only the value pools differ.
"""

from pvr_keras.data import keys

SLOTS_PER_CELL = 3  # image, row offset, column offset


def stream_key(seed, split):
    """The key of a split's stream (``make_examples``'s ``key``), with or without holdout."""
    return keys.stream_key(seed, split)


def num_slots(task):
    """Hash slots per example: three a cell."""
    return SLOTS_PER_CELL * task.num_cells
