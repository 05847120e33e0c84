"""The token-sequence PVR rule (Sections 3.1, 4.1, 6.2 and Appendix D of the paper).

A sequence ``x`` of ``seq_len`` tokens in ``0..num_values-1``. Position 0 is the pointer;
positions ``1..seq_len-1`` hold the values. A pointer ``p`` selects the window of value
positions ``p, p+1, ..., p+window-1`` (0-based among ``x[1:]``, wrapping modulo the number of
value positions) and the label is the aggregation of the values there.

``window_mode`` says which pointers are drawn, never how a pointer is read:

- ``"cyclic"`` (default): every pointer ``0..n-1`` is drawn (``n = seq_len - 1``); windows
  that run past the last value position wrap around to the first. Every pointer value stays
  meaningful for every window size, so the pointer distribution is the same across a sweep
  over windows, which is what a study of complexity needs.
- ``"restricted"``: only pointers ``0..n-window`` are drawn, so no window wraps. The pointer
  distribution then changes with the window size.

The paper's "complexity m" / "number of neighbours" is ``window - 1``.
"""

import dataclasses
import itertools
import math

import numpy as np

from pvr_keras.checks import check_int, check_memory_need, is_integer
from pvr_keras.fields import field
from pvr_keras.tasks.aggregations import AGGREGATIONS, Names, aggregate, check_aggregation
from pvr_keras.tasks.inputs import integer_tokens

WINDOW_MODES = ("cyclic", "restricted")
MAX_VALUES = 2**31 - 1  # tokens and labels are int32
MAX_WINDOW_CODES = 2**53  # holdout draws a window as one integer below num_values**window
# Memory to draw one token of an example (its hash slot, the token, the window's gathers: 32
# bytes measured in NumPy), and maj_vote's count of every value in a window (TensorFlow's
# one-hot: 8 bytes per window position and value).
DRAW_BYTES = 64
VOTE_BYTES = 8


@dataclasses.dataclass(frozen=True)
class TokenTask:
    """A token PVR task: the rule, its parameters and its NumPy reference labels.

    Args:
        seq_len: tokens per sequence, pointer included (>= 2). The paper uses 11.
        num_values: vocabulary size; tokens are ``0..num_values-1`` and so are the labels.
        window: number of value positions aggregated (>= 1); complexity ``m = window - 1``.
        aggregation: one of ``mod_sum, median, maj_vote, min, max``, or a reference to an
            ``Aggregation`` of yours (``"my_aggs.py:second_max"``, ``tasks.aggregations``).
        window_mode: ``"cyclic"`` or ``"restricted"`` (see the module docstring).
        pointer: ``False`` gives the pointer-less control of Appendix D (pointer always 0).
        holdout_values: the tuple whose permutations holdout-k holds out (Section 6.2), one
            distinct value per window position; ``None`` (default) is the main text's
            ``(0, 1, ..., window-1)``. Appendix E holds out the permutations of ``(1, 2, 3)``
            at window 3: ``TokenTask(window=3, holdout_values=(1, 2, 3))`` with holdout 6.

    Example:
        >>> task = TokenTask(window=1)
        >>> int(task.label(np.array([[3, 2, 7, 1, 6, 0, 9, 4, 4, 8, 5]]))[0])
        6
    """

    seq_len: int = field("tokens per sequence, pointer included", default=11)
    num_values: int = field("token values (and classes)", default=10)
    window: int = field("window size (complexity + 1)", default=1)
    aggregation: str = field(
        "how the window's values make the label (or 'my_aggs.py:NAME', an Aggregation of yours)",
        Names(AGGREGATIONS),
        default="mod_sum",
    )
    window_mode: str = field(
        "windows wrap around, or only fitting ones are drawn", WINDOW_MODES, default="cyclic"
    )
    pointer: bool = field("--no-pointer: pointer always 0 (Appendix D)", default=True)
    holdout_values: tuple[int, ...] | None = field(
        "the tuple whose permutations holdout-k holds out (none: 0..window-1)", default=None
    )

    def __post_init__(self):
        check_int("seq_len", self.seq_len, 2)
        check_int("num_values", self.num_values, 2)
        if self.num_values > MAX_VALUES:
            raise ValueError(
                f"num_values must be <= {MAX_VALUES} (tokens are int32); received {self.num_values}"
            )
        check_int("window", self.window, 1)
        if self.window > self.num_positions:
            raise ValueError(
                f"window must be between 1 and the number of value positions "
                f"(seq_len - 1 = {self.num_positions}); received {self.window}"
            )
        object.__setattr__(self, "aggregation", check_aggregation(self.aggregation))
        check_memory_need(
            f"one example of {self.seq_len:,} tokens of {self.num_values:,} values "
            f"(window {self.window}, {self.aggregation})", self.example_bytes,
            "choose a shorter sequence or fewer values",
        )  # fmt: skip
        if self.window_mode not in WINDOW_MODES:
            raise ValueError(
                f"window_mode must be one of {', '.join(WINDOW_MODES)}; "
                f"received {self.window_mode!r}"
            )
        if not isinstance(self.pointer, bool | np.bool_):
            raise ValueError(f"pointer must be True or False; received {self.pointer!r}")
        if self.pointer and self.num_values < self.num_positions:
            raise ValueError(
                f"the pointer takes token values 0..{self.num_values - 1}, which cannot address "
                f"all {self.num_positions} value positions: num_values must be >= seq_len - 1 "
                f"= {self.num_positions}; received num_values={self.num_values}"
            )
        if self.holdout_values is not None:
            values = self.holdout_values
            if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
                raise ValueError(
                    f"holdout_values must be a tuple of {self.window} distinct values in "
                    f"0..{self.num_values - 1}; received {values!r}"
                )
            values = tuple(check_int("holdout_values[i]", v, 0) for v in values)
            if len(values) != self.window or len(set(values)) != len(values):
                raise ValueError(
                    f"holdout_values must hold window={self.window} distinct values; "
                    f"received {self.holdout_values!r}"
                )
            if max(values) >= self.num_values:
                raise ValueError(
                    f"holdout_values must be in 0..{self.num_values - 1}; received "
                    f"{self.holdout_values!r}"
                )
            # The default tuple, spelled out, is the default task.
            object.__setattr__(
                self, "holdout_values", None if values == tuple(range(self.window)) else values
            )

    @property
    def example_bytes(self):
        """About the memory drawing one example takes (``DRAW_BYTES`` a token; maj_vote also
        ``VOTE_BYTES`` per window position and value)."""
        vote = VOTE_BYTES * self.window * self.num_values if self.aggregation == "maj_vote" else 0
        return DRAW_BYTES * (self.seq_len + 2) + vote

    @property
    def num_positions(self):
        """Number of value positions, ``seq_len - 1``."""
        return self.seq_len - 1

    @property
    def num_classes(self):
        return self.num_values

    @property
    def complexity(self):
        """The paper's complexity m (number of neighbours): ``window - 1``."""
        return self.window - 1

    @property
    def pointer_values(self):
        """Number of pointer values drawn: pointers are ``0..pointer_values-1``."""
        if not self.pointer:
            return 1
        if self.window_mode == "restricted":
            return self.num_positions - self.window + 1
        return self.num_positions

    def window_positions(self, pointers):
        """Value positions (0-based among ``x[1:]``) each pointer selects: (N,) -> (N, window)."""
        offsets = np.arange(self.window)
        return (np.asarray(pointers, np.int64)[:, None] + offsets) % self.num_positions

    def label(self, x):
        """NumPy reference labels: (N, seq_len) int tokens -> (N,) int64 labels.

        Raises:
            ValueError: a shape other than (N, seq_len), a token that is not an integer
                (1.7, NaN) or outside 0..num_values-1.
        """
        x = integer_tokens(x)
        if x.ndim != 2 or x.shape[1] != self.seq_len:
            raise ValueError(
                f"x must have shape (N, seq_len={self.seq_len}); received shape {x.shape}"
            )
        if x.size and (x.min() < 0 or x.max() >= self.num_values):
            raise ValueError(
                f"tokens must be in 0..{self.num_values - 1}; received values in "
                f"{x.min()}..{x.max()}"
            )
        values = x[:, 1:].astype(np.int64)
        pointers = x[:, 0] if self.pointer else np.zeros(len(x), np.int64)
        positions = self.window_positions(pointers)
        window = np.take_along_axis(values, positions, axis=1)
        return aggregate(self.aggregation, window, self.num_values)

    def check_holdout(self, holdout):
        """Validates a holdout-k setting (Section 6.2): 0 <= k <= window!."""
        limit = math.factorial(self.window)
        if not is_integer(holdout):
            raise ValueError(f"holdout must be an integer in 0..{limit}; received {holdout!r}")
        if not 0 <= holdout <= limit:
            raise ValueError(
                f"holdout must be in 0..window! = 0..{limit} for window {self.window}; "
                f"received {holdout}"
            )
        if holdout and self.window > self.num_values:
            raise ValueError(
                f"holdout permutes the values 0..window-1, which needs window <= num_values "
                f"({self.num_values}); received window {self.window}"
            )
        if holdout and self.num_values**self.window > MAX_WINDOW_CODES:
            raise ValueError(
                f"holdout needs num_values**window <= 2**53 (each window is drawn as one "
                f"integer); received {self.num_values}**{self.window}"
            )
        return int(holdout)

    @property
    def held_out_base(self):
        """The tuple whose permutations holdout-k holds out: ``holdout_values`` or
        ``(0, 1, ..., window-1)``."""
        if self.holdout_values is not None:
            return self.holdout_values
        return tuple(range(self.window))

    def holdout_tuples(self, holdout):
        """The ``holdout`` held-out windows: the first k permutations of ``held_out_base``
        (default (0, ..., window-1)) in ``itertools.permutations`` order, identity first.
        Returns (k, window) int64."""
        return held_out_tuples(self, self.check_holdout(holdout))


def held_out_tuples(task, k):
    """``task.holdout_tuples(k)`` of a holdout-k checked already (a ``StreamRequest``'s)."""
    perms = itertools.islice(itertools.permutations(task.held_out_base), k)
    flat = np.fromiter(itertools.chain.from_iterable(perms), np.int64, count=k * task.window)
    return flat.reshape(k, task.window)


__all__ = ["AGGREGATIONS", "WINDOW_MODES", "TokenTask"]
