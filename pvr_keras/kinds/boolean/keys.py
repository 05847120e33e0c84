"""What the three Boolean generators share, in plain Python and NumPy: the stream key and how
a stream draws its points from a seen domain, so that NumPy (``numpy_data``), tf.data
(``tf_data``) and JAX (``jax_data``) make the same examples.

Example i of a split is a pure function of (seed, split, frozen bits, i): hashes of i under
the split's key (``stream_key``; ``pvr_keras.data.keys``), read in one of three ways
(``draw_plan``):

- ``cube``: every bit from the example's first hash word (bit j of it sets x_j = -1), as
  Boolean streams always did; frozen bits (a ``holdout``) are then set to +1. The test split,
  and every domain ``all`` drawn uniformly.
- ``patterns``: the bits outside the domain's bits from the first hash word, the domain's bits
  from a seen pattern chosen uniformly by the second word (``uniform_int``): uniform over the
  seen points, with the free bits the same as a ``cube`` draw of the same index.
- ``rows``: ``draw="all"``: example i is row ``table[i mod len(table)]`` of a fixed random
  order of the seen rows (the whole cube in the test split), keyed by the stream's key: the
  first ``len(table)`` examples are every seen point once.
"""

import dataclasses

import numpy as np

from pvr_keras.data import keys
from pvr_keras.kinds.boolean.domains import Domain

SALT = 0xB001  # apart from the token streams' salts (holdout-k, held-out tuple)


def stream_key(num_bits, seed, split, frozen):
    """The key of a Boolean stream: (seed, split, the split's frozen-bit mask, d)."""
    return keys.stream_key(seed, split, int(frozen), SALT, int(num_bits))


@dataclasses.dataclass(frozen=True)
class DrawPlan:
    """``mode``: cube, patterns or rows; ``bits``: the domain's bits (patterns);
    ``table``: int64 seen patterns of those bits, or the rows in order (rows)."""

    mode: str
    bits: tuple = ()
    table: np.ndarray | None = None


def domain_of(task):
    """The task's seen domain (``Domain``; ``all`` for a task without one)."""
    return Domain.parse(getattr(task, "domain", "all"))


def draw_plan(task, key, split):
    """The ``DrawPlan`` of a split of ``task``'s stream with ``key``."""
    d = task.num_bits
    domain = domain_of(task).check(d)
    if getattr(task, "draw", "uniform") == "all":
        if split == "train":
            rows = np.flatnonzero(domain.mask(d)).astype(np.int64)
        else:
            rows = np.arange(2**d, dtype=np.int64)
        order = np.random.default_rng([key & 0xFFFFFFFF, key >> 32, 0xA11]).permutation(len(rows))
        return DrawPlan("rows", table=rows[order])
    if split != "train" or domain.kind == "all":
        return DrawPlan("cube")
    bits = domain.depends_on(d)
    patterns = np.flatnonzero(domain.seen_patterns(d)).astype(np.int64)
    return DrawPlan("patterns", bits=tuple(bits), table=patterns)


def pattern_columns(plan, num_bits):
    """Per bit j: whether the pattern sets it, and which bit of the pattern does (0 else)."""
    inside = np.zeros(num_bits, bool)
    shift = np.zeros(num_bits, np.int64)
    for i, b in enumerate(plan.bits):
        inside[b], shift[b] = True, i
    return inside, shift


__all__ = ["SALT", "DrawPlan", "domain_of", "draw_plan", "pattern_columns", "stream_key"]
