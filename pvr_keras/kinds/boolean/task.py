"""Boolean PVR and Boolean functions (Abbe, Bengio, Cornacchia, Kleinberg, Lotfi, Raghu, Zhang:
"Learning to Reason with Neural Networks: Generalization, Unseen Data and Boolean Measures",
NeurIPS 2022): the PVR rule over bits in {+1, -1}, and the other targets of that paper.

``BooleanTask(pointer_bits=p, window=w, aggregation, window_mode, value_bits=V)``: the first
p bits are the pointer, most significant first, +1 read as 1 and -1 as 0 (all -1 points to
value bit 0); the value bits are the next V (default 2**p), so d = p + V bits in all
(``num_bits``). The window is the w value bits from the pointed one: ``cyclic`` wraps over the
value bits, ``truncated`` cuts the window at the last value bit. The label is the window's
aggregation: ``parity`` (the product), ``majority`` (the sign of the sum, 0 on a tie), ``min``
or ``max`` (``tasks.aggregations``), or an ``Aggregation`` of yours by reference, as float32.
The paper's f3 is p=3, w=3, majority, truncated. ``domain``: where training examples are
drawn (``domains``: ``frozen:7``, ``any_of:0,1``, ``ball:3``, ...; default ``all``).

``BooleanFunction``: a function given by its Fourier expansion (``{(0, 1): 1.0, ...}``: the
coefficient of each monomial, a subset of bits), the parity or majority of a subset of bits,
or the staircase x0 + x0x1 + ... + x0...x(k-1) (f2 of the paper); ``.label(x)``, ``.num_bits``.

The cube (``analysis.boolean_cube``): row r has x_j = 1 - 2*((r >> j) & 1) (row 0 is all +1);
a subset S of bits is the integer s with bit j set iff j is in S.

    >>> task = BooleanTask(pointer_bits=2, window=2, aggregation="parity")
    >>> task.num_bits
    6
    >>> x = np.array([[-1, +1,  +1, -1, -1, +1]])   # pointer 01 -> value bit 1
    >>> float(task.label(x)[0])                     # x[3] * x[4] = (-1)(-1)
    1.0
"""

import dataclasses

import numpy as np

from pvr_keras.checks import check_int, is_integer
from pvr_keras.fields import field
from pvr_keras.kinds.boolean.domains import check_domain
from pvr_keras.tasks.aggregations import (
    BOOLEAN_AGGREGATIONS,
    Names,
    aggregate_bits,
    check_aggregation,
)

BOOLEAN_WINDOW_MODES = ("cyclic", "truncated")
MAX_BITS = 62  # a subset of bits is one int64 (the frozen bits of a holdout, a monomial)


def check_bits(x, num_bits):
    """``x`` as an int8 array of shape (N, num_bits) of +1 and -1, or a ValueError."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != num_bits:
        raise ValueError(f"x must have shape (N, {num_bits}) (bits); received shape {x.shape}")
    if x.size and not np.isin(x, (-1, 1)).all():
        found = np.unique(x[~np.isin(x, (-1, 1))])[:5]
        raise ValueError(f"bits must be +1 or -1; received values such as {found.tolist()}")
    return x.astype(np.int8)


@dataclasses.dataclass(frozen=True)
class BooleanTask:
    """PVR over bits (see the module docstring)."""

    pointer_bits: int = field("pointer bits p (the first p bits, most significant first)",
                              default=3)  # fmt: skip
    window: int = field("value bits aggregated", default=1)
    aggregation: str = field(
        "how the window's bits make the label (or 'my_aggs.py:NAME', an Aggregation of yours)",
        Names(BOOLEAN_AGGREGATIONS),
        default="parity",
    )
    window_mode: str = field(
        "windows wrap over the value bits (cyclic) or stop at the last (truncated)",
        BOOLEAN_WINDOW_MODES,
        default="cyclic",
    )
    value_bits: int | None = field("value bits (none: 2**pointer_bits)", default=None)
    domain: str = field(
        "the seen domain of training: all, frozen:0,1, any_of:0,1, parity:0,1,2 or ball:K "
        "(kinds.boolean.domains; the test split is the whole cube)",
        default="all",
    )

    def __post_init__(self):
        p = check_int("pointer_bits", self.pointer_bits, 1)
        if self.value_bits is not None:
            check_int("value_bits", self.value_bits, 1)
        if self.num_bits > MAX_BITS:  # before the window check, which names the value bits
            value_bits = "2**p" if self.value_bits is None else str(self.value_bits)
            raise ValueError(
                f"at most {MAX_BITS} bits in all (p pointer bits + {value_bits} value bits); "
                f"received pointer_bits={p}"
                + ("" if self.value_bits is None else f", value_bits={self.value_bits}")
            )
        check_int("window", self.window, 1)
        if self.window > self.num_value_bits:
            raise ValueError(
                f"window must be between 1 and the {self.num_value_bits} value bits; received "
                f"{self.window}"
            )
        object.__setattr__(self, "aggregation", check_aggregation(self.aggregation, "boolean"))
        object.__setattr__(self, "domain", check_domain(self.domain, self.num_bits))
        if self.window_mode not in BOOLEAN_WINDOW_MODES:
            raise ValueError(
                f"window_mode must be one of {', '.join(BOOLEAN_WINDOW_MODES)}; received "
                f"{self.window_mode!r}"
            )

    @property
    def num_value_bits(self):
        return 2**self.pointer_bits if self.value_bits is None else self.value_bits

    @property
    def num_bits(self):
        """d: pointer bits and value bits."""
        return self.pointer_bits + self.num_value_bits

    def pointer(self, x):
        """The value bit each row's pointer names: +1 is 1, -1 is 0, most significant first."""
        x = check_bits(x, self.num_bits)
        ones = (x[:, : self.pointer_bits] + 1) // 2
        powers = 2 ** np.arange(self.pointer_bits - 1, -1, -1)
        return (ones.astype(np.int64) * powers).sum(axis=1)

    def window_bits(self, x):
        """(N, w): the window's bits, 0 where a truncated window is cut off."""
        x = check_bits(x, self.num_bits)
        values = x[:, self.pointer_bits :].astype(np.int64)
        positions = self.pointer(x)[:, None] + np.arange(self.window)
        if self.window_mode == "cyclic":
            return np.take_along_axis(values, positions % self.num_value_bits, axis=1)
        inside = positions < self.num_value_bits
        found = np.take_along_axis(values, np.minimum(positions, self.num_value_bits - 1), 1)
        return np.where(inside, found, 0)

    def label(self, x):
        """NumPy reference labels: (N, d) bits -> (N,) float32."""
        return aggregate_bits(self.aggregation, self.window_bits(x))


def f3():
    """The paper's main PVR: 3 pointer bits, window 3, majority, truncated windows."""
    return BooleanTask(pointer_bits=3, window=3, aggregation="majority", window_mode="truncated")


@dataclasses.dataclass(frozen=True)
class BooleanFunction:
    """A Boolean function of the paper's other targets: a Fourier expansion, or the parity or
    majority of a subset of bits. Make one with ``fourier``, ``of_subset`` or ``staircase``.

    Attributes:
        num_bits: d.
        terms: ``((subset, coefficient), ...)``: f(x) = sum of coefficient * prod x_j.
        subset, aggregation: f(x) = aggregation of the bits in ``subset`` (no ``terms``).
    """

    num_bits: int
    terms: tuple = ()
    subset: tuple = ()
    aggregation: str | None = None

    def __post_init__(self):
        d = check_int("num_bits", self.num_bits, 1)
        if d > MAX_BITS:
            raise ValueError(f"num_bits must be at most {MAX_BITS}; received {d}")
        if bool(self.terms) == (self.aggregation is not None):
            raise ValueError("give a Fourier expansion (terms) or a subset and an aggregation")
        for bits in [s for s, _ in self.terms] + [self.subset]:
            if any(check_int("bit", b, 0) >= d for b in bits) or len(set(bits)) != len(bits):
                raise ValueError(f"bits must be distinct, in 0..{d - 1}; received {bits}")
        if self.aggregation is not None:
            object.__setattr__(self, "aggregation", check_aggregation(self.aggregation, "boolean"))
            if not self.subset:
                raise ValueError("a subset needs at least one bit")

    @classmethod
    def fourier(cls, num_bits, expansion):
        """f(x) = sum over ``expansion`` ``{subset: coefficient}`` of coefficient * prod x_j.

        Example:
            >>> f = BooleanFunction.fourier(3, {(0, 1): 1.0, (2,): -0.5})
            >>> f.label(np.array([[1, -1, -1]])).tolist()
            [-0.5]
        """
        terms = tuple((tuple(int(b) for b in s), float(c)) for s, c in expansion.items())
        return cls(num_bits, terms=terms)

    @classmethod
    def of_subset(cls, num_bits, subset, aggregation="parity"):
        """The parity (or majority, min, max) of the bits in ``subset``."""
        return cls(num_bits, subset=tuple(int(b) for b in subset), aggregation=aggregation)

    @classmethod
    def staircase(cls, num_bits, degree=None):
        """x0 + x0 x1 + ... + x0 ... x(degree-1) (degree: default num_bits): f2 of the paper."""
        degree = num_bits if degree is None else degree
        return cls.fourier(num_bits, {tuple(range(k + 1)): 1.0 for k in range(degree)})

    def label(self, x):
        """(N, num_bits) bits -> (N,) float32."""
        x = check_bits(x, self.num_bits).astype(np.int64)
        if self.aggregation is not None:
            return aggregate_bits(self.aggregation, x[:, list(self.subset)])
        out = np.zeros(len(x))
        for bits, coefficient in self.terms:
            out += coefficient * x[:, list(bits)].prod(axis=1)
        return out.astype(np.float32)


def frozen_mask(frozen, num_bits):
    """The subset integer of the frozen bits (bit j set: x_j is +1 in the training split)."""
    frozen = tuple(frozen)
    for b in frozen:
        check_int("frozen bit", b, 0)
        if b >= num_bits:
            raise ValueError(f"frozen bits must be in 0..{num_bits - 1}; received {b}")
    if len(set(frozen)) != len(frozen):
        raise ValueError(f"frozen bits must be distinct; received {frozen}")
    return sum(1 << int(b) for b in frozen)


def frozen_bits(mask, num_bits):
    """The frozen bits of a subset integer (``frozen_mask``'s inverse), checked."""
    if not is_integer(mask):
        raise ValueError(f"holdout (the frozen bits, a subset integer) must be an integer; "
                         f"received {mask!r}")  # fmt: skip
    if not 0 <= mask < 2**num_bits:
        raise ValueError(
            f"holdout (the frozen bits as a subset integer) must be in 0..2**{num_bits} - 1; "
            f"received {mask}"
        )
    return tuple(j for j in range(num_bits) if (int(mask) >> j) & 1)


def check_target(task):
    """A ``BooleanTask``, ``BooleanFunction`` or ``FunctionTask`` (what the Boolean generators
    draw), else a ValueError."""
    # a FunctionTask (the gotu kind's, ``kinds.gotu``) is a BooleanFunction on a seen domain
    function_task = isinstance(getattr(task, "function", None), BooleanFunction)
    if not (isinstance(task, BooleanTask | BooleanFunction) or function_task):
        raise ValueError(
            f"task must be a BooleanTask, BooleanFunction or FunctionTask; received "
            f"{type(task).__name__}"
        )
    return task


def rule_of(task):
    """What labels a Boolean task's examples: the task, or a ``FunctionTask``'s function."""
    return task.function if hasattr(task, "function") else task


def split_frozen(task, holdout, split):
    """The frozen bits' mask of a split (checked): the holdout's in training, none in the
    test split (the whole cube)."""
    frozen_bits(holdout, task.num_bits)
    return int(holdout) if split == "train" else 0


def holdout_of(task, frozen=(), holdout=0):
    """The holdout (a subset integer) of ``frozen`` bits or of ``holdout``; one of them."""
    check_target(task)
    if isinstance(frozen, int | np.integer):
        raise ValueError(f"frozen is a sequence of bits, e.g. ({frozen},); received {frozen}")
    mask = frozen_mask(frozen, task.num_bits)
    if mask and holdout:
        raise ValueError(f"give frozen bits or holdout, not both; received {frozen}, {holdout}")
    return mask or holdout


__all__ = ["BOOLEAN_AGGREGATIONS", "BOOLEAN_WINDOW_MODES", "BooleanFunction", "BooleanTask",
           "aggregate_bits", "check_target", "f3", "frozen_bits", "frozen_mask", "holdout_of",
           "rule_of", "split_frozen"]  # fmt: skip
