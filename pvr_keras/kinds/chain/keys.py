"""What the three chain generators share, in plain Python: the stream key and the hash slots.

Example i of a split is a pure function of (seed, split, i): the 64-bit hash of i under the
split's key (``pvr_keras.data.keys``), one hash per slot, read the same way by NumPy
(``numpy_data``), tf.data (``tf_data``) and JAX (``jax_data``):

- slot 0: the hop count k, uniform over the split's hop counts (``ChainTask.split_hops``);
- slots 1..L-1: the order key of position c (the hash's top 32 bits): positions 1..L-1
  ranked by (key, position) give a uniformly random order pi_1, ..., pi_(L-1). The cycle form
  visits 0, pi_1, ..., pi_(L-1), 0; the conditional form takes {pi_1, ..., pi_k} as its k
  pointers, in increasing order;
- conditional only: slot L the label, uniform in 0..pk; slots L+1..2L-1 the tokens of
  positions 1..L-1 off the chain, uniform in 0..L-1.
"""

from pvr_keras.data import keys

SALT = 0xC4A1  # the chain streams' own (after a 0 where token streams hold their holdout)


def stream_key(seed, split):
    """The 64-bit key of a chain stream of (seed, split)."""
    return keys.stream_key(seed, split, 0, SALT)


def num_slots(task):
    """Hash slots per example: L (cycle) or 2L (conditional)."""
    return task.length * (1 if task.form == "cycle" else 2)


def position_bits(task):
    """Bits to write a position 0..L-1 (the order keys' tie-break)."""
    return max(1, (task.length - 1).bit_length())
