"""The multi-hop PVR rule (pointer chasing): ``ChainTask`` and its NumPy reference.

Two forms, both with tokens and labels in ``0..L-1`` (L = ``length``):

- ``"conditional"`` (C-VPR, Abnar et al. 2023): a sequence of L tokens. Start at position 0
  and follow ``x[c]`` while it grows (``x[c] > c``): the hops are the number of increases,
  the label the value read last (the first that did not grow). An example with k hops holds
  k distinct pointers p1 < ... < pk among positions 1..L-1, ``x[0] = p1``,
  ``x[p_j] = p_(j+1)``, ``x[pk]`` the label, uniform in ``0..pk`` (so the chain stops there),
  and every other position a uniform token. The label's mean moves with k: at L = 40 it is
  ``k L / (2 (k + 1))``, 10.0 at k = 1 and 17.8 at k = 8.
- ``"cycle"``: L + 1 tokens. ``x[0] = k``, the hop count; ``x[1:]`` is the successor map of
  one random cycle through all L positions (``x[1 + c]`` follows c); the label is the
  position reached from 0 after k + 1 steps.

``chain(x)`` gives the pointers followed before the label (p1..pk; on a cycle the first k
positions after 0), for chain-of-thought targets and per-hop scoring; ``count_hops(x)``
their number.
"""

import dataclasses

import numpy as np

from pvr_keras.checks import check_choice, check_int, check_memory_need, is_integer
from pvr_keras.fields import field
from pvr_keras.tasks.inputs import integer_tokens

FORMS = ("conditional", "cycle")
MAX_LENGTH = 2**31 - 1  # tokens and labels are int32
# Memory to draw one token of an example: its hash slots and the rank, sort and gather arrays
# of ``numpy_data.build`` (83 bytes measured for the conditional form, 48 for the cycle).
DRAW_BYTES = 128


def _check_hops(name, values, length, form):
    """``values`` as a sorted tuple of distinct hop counts that ``form`` can draw at
    ``length``, else a one-line ValueError saying why."""
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        raise ValueError(
            f"{name} must be a tuple of hop counts (integers in 1..{length - 1}); "
            f"received {values!r}"
        )
    values = tuple(values)
    if not values:
        raise ValueError(f"{name} must hold at least one hop count; received {values!r}")
    if not all(is_integer(v) for v in values):
        raise ValueError(f"{name} must be integers; received {values!r}")
    values = tuple(int(v) for v in values)
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must be distinct; received {values!r}")
    if min(values) < 1:
        raise ValueError(
            f"{name} must be in 1..{length - 1} (length {length}); received {values!r}"
        )
    if max(values) > length - 1:
        if form == "cycle":
            raise ValueError(
                f"the cycle form writes the hop count as token x[0] in 0..{length - 1}: "
                f"{name} must be at most length - 1 = {length - 1}; received {values!r}"
            )
        raise ValueError(
            f"k hops need k distinct pointers among positions 1..{length - 1}: {name} must be "
            f"at most length - 1 = {length - 1}; received {values!r}"
        )
    return tuple(sorted(values))


def _climb(x):
    """The conditional form: follow x[c] from position 0 while it grows."""
    rows, hops, steps = np.arange(len(x)), np.zeros(len(x), np.int64), []
    c, v = np.zeros(len(x), np.int64), x[:, 0]
    grows = v > c
    while grows.any():  # at most L - 1 increases
        c = np.where(grows, v, c)
        hops += grows
        steps.append(np.where(grows, c, -1))
        v = x[rows, c]
        grows = v > c
    return hops, v, steps


def _go_round(x):
    """The cycle form: x[0] + 1 steps from 0 along the successor map x[1:]."""
    rows, hops, steps = np.arange(len(x)), x[:, 0], []
    c = np.zeros(len(x), np.int64)
    for step in range(int(hops.max(initial=0)) + 1):
        c = np.where(step <= hops, x[rows, 1 + c], c)
        if step < hops.max(initial=0):
            steps.append(np.where(step < hops, c, -1))
    return hops, c, steps


@dataclasses.dataclass(frozen=True)
class ChainTask:
    """A multi-hop PVR task: its form, length and hop counts, and its NumPy rule.

    Args:
        length: L, the number of positions (>= 2): tokens, pointers and labels are
            ``0..L-1``; ``seq_len`` is L (conditional) or L + 1 (cycle).
        hops: the hop counts of the training split, each example's drawn uniformly from
            them (kept sorted).
        form: ``"conditional"`` or ``"cycle"`` (see the module docstring).
        test_hops: the hop counts of the test split (None, the default: ``hops``); e.g.
            ``(5, 6, 7, 8)`` to test generalisation to more hops than trained on.

    Example:
        >>> task = ChainTask(length=6, hops=(2,))
        >>> x = np.array([[2, 0, 4, 1, 3, 5]])     # 0 -> 2 -> 4, then 3 <= 4: stop
        >>> int(task.label(x)[0]), int(task.count_hops(x)[0]), task.chain(x).tolist()
        (3, 2, [[2, 4]])
    """

    length: int = field("L: positions, token values and classes (0..L-1)", default=40)
    hops: tuple[int, ...] = field(
        "hop counts of the training split (each example's drawn uniformly)", default=(1, 2, 3, 4)
    )
    form: str = field(
        "conditional (C-VPR: follow x[c] while it grows) or cycle (x[0] hops on one cycle)",
        FORMS,
        default="conditional",
    )
    test_hops: tuple[int, ...] | None = field(
        "hop counts of the test split (none: hops)", default=None
    )

    def __post_init__(self):
        check_int("length", self.length, 2)
        if self.length > MAX_LENGTH:
            raise ValueError(
                f"length must be at most {MAX_LENGTH} (tokens are int32); received {self.length}"
            )
        object.__setattr__(self, "length", int(self.length))
        check_choice("form", self.form, FORMS)
        check_memory_need(f"one example of length {self.length:,}", self.example_bytes,
                          "choose a shorter length")  # fmt: skip
        object.__setattr__(self, "hops", _check_hops("hops", self.hops, self.length, self.form))
        if self.test_hops is not None:
            test = _check_hops("test_hops", self.test_hops, self.length, self.form)
            # The default, spelled out, is the default task.
            object.__setattr__(self, "test_hops", None if test == self.hops else test)

    @property
    def seq_len(self):
        """Tokens per sequence: L (conditional) or L + 1 (cycle: x[0] is the hop count)."""
        return self.length + (self.form == "cycle")

    @property
    def example_bytes(self):
        """About the memory drawing one example takes (``DRAW_BYTES`` a token)."""
        return DRAW_BYTES * (self.seq_len + 2)

    @property
    def num_values(self):
        """Token values, ``0..L-1``."""
        return self.length

    @property
    def num_classes(self):
        return self.length

    def split_hops(self, split):
        """The hop counts drawn in ``split``: ``test_hops`` (else ``hops``) for the test
        split, ``hops`` for the training split."""
        check_choice("split", split, ("train", "test"))
        if split == "test" and self.test_hops is not None:
            return self.test_hops
        return self.hops

    @property
    def max_hops(self):
        """The most hops an example of either split has."""
        return max(self.hops + (self.test_hops or ()))

    # -- the rule -----------------------------------------------------------------------------

    def _tokens(self, x):
        x = integer_tokens(x)
        if x.ndim != 2 or x.shape[1] != self.seq_len:
            raise ValueError(
                f"x must have shape (N, seq_len={self.seq_len}); received shape {x.shape}"
            )
        if x.size and (x.min() < 0 or x.max() >= self.length):
            raise ValueError(
                f"tokens must be in 0..{self.length - 1}; received values in {x.min()}..{x.max()}"
            )
        return x

    def _follow(self, x):
        """(hops (N,), label (N,), the positions followed (N, most hops), -1 after each
        row's chain)."""
        x = self._tokens(x)
        hops, label, steps = (_go_round if self.form == "cycle" else _climb)(x)
        chain = np.stack(steps, axis=1) if steps else np.zeros((len(x), 0), np.int64)
        return hops, label, chain

    def check_holdout(self, holdout):
        """The chain kind has no holdout: its test split differs by ``test_hops``."""
        if holdout:
            raise ValueError(
                f"the chain kind has no holdout: its test split differs by its hop counts "
                f"(test_hops, e.g. --test-hops 5 6 7 8); received holdout={holdout!r}"
            )
        return 0

    def label(self, x):
        """NumPy reference labels: (N, seq_len) int tokens -> (N,) int64 labels.

        Raises:
            ValueError: a shape other than (N, seq_len), a token that is not an integer or
                outside 0..L-1.
        """
        return self._follow(x)[1]

    def count_hops(self, x):
        """The hop count of each sequence: (N, seq_len) -> (N,) int64 (conditional: the
        increases followed from position 0; cycle: ``x[:, 0]``)."""
        return self._follow(x)[0]

    def chain(self, x, width=None):
        """The pointers followed before the label: (N, seq_len) -> (N, width) int64, row i
        holding its ``count_hops`` positions (p1 .. pk; on a cycle the first k positions
        after 0) and then -1. ``width``: the most hops of the rows (default), or more."""
        hops, _, chain = self._follow(x)
        most = int(hops.max(initial=0))
        if width is None:
            width = most
        check_int("width", width, most)
        pad = np.full((len(chain), width - chain.shape[1]), -1, np.int64)
        return np.concatenate([chain[:, :width], pad], axis=1)


__all__ = ["FORMS", "ChainTask"]
