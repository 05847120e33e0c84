"""Seen domains of Boolean tasks (Abbe, Bengio, Lotfi, Rizk 2023, "Generalization on the
Unseen"): the part of the cube {+1, -1}^d a network is trained on; it is tested on the whole
cube and its output on the rest, the unseen part, is what the study measures.

A domain is written as text (a run field, a flag, a sweep axis; canonical, so one domain has
one identity):

- ``all``: every point (no unseen part);
- ``frozen:0,1``: x_i = +1 for every listed bit (the canonical holdout of Abbe et al. 2022);
- ``any_of:0,1``: x_i = +1 for at least one listed bit (unseen: all of them -1);
- ``parity:0,1,2``: the product of the listed bits is +1;
- ``ball:6``: the Hamming ball H(x) <= 6, H = the number of -1 entries.

The cube's row order is ``analysis.boolean_cube``'s: row r has x_j = 1 - 2*((r >> j) & 1),
so row bit j set means x_j = -1.

    >>> d = Domain.parse("any_of:1,0")
    >>> str(d), d.depends_on(4)
    ('any_of:0,1', (0, 1))
    >>> d.mask(2).tolist()          # rows ++, -+, +-, --
    [True, True, True, False]
"""

import dataclasses

import numpy as np

from pvr_keras.checks import check_int

DOMAIN_KINDS = ("all", "frozen", "any_of", "parity", "ball")
# The seen patterns of a domain's bits are enumerated (2**|bits| rows): its bits, at most.
MAX_DOMAIN_BITS = 20


def _popcount(rows):
    rows = np.asarray(rows, np.int64)
    count = np.zeros(rows.shape, np.int64)
    for j in range(63):
        count += (rows >> j) & 1
    return count


@dataclasses.dataclass(frozen=True)
class Domain:
    """A seen domain (see the module docstring); make one with ``Domain.parse(text)``.

    Attributes:
        kind: one of ``DOMAIN_KINDS``.
        bits: the listed bits, sorted (``frozen``, ``any_of``, ``parity``).
        radius: the ball's radius k (``ball``).
    """

    kind: str = "all"
    bits: tuple = ()
    radius: int | None = None

    def __post_init__(self):
        if self.kind not in DOMAIN_KINDS:
            raise ValueError(
                f"a domain is one of {', '.join(DOMAIN_KINDS)}; received {self.kind!r}"
            )
        listed = self.kind in ("frozen", "any_of", "parity")
        if listed:
            if not self.bits:
                raise ValueError(f"a {self.kind} domain needs at least one bit, e.g. "
                                 f"'{self.kind}:0,1'")  # fmt: skip
            bits = tuple(check_int("domain bit", b, 0) for b in self.bits)
            if len(set(bits)) != len(bits):
                raise ValueError(f"domain bits must be distinct; received {list(bits)}")
            object.__setattr__(self, "bits", tuple(sorted(bits)))
        elif self.bits:
            raise ValueError(f"a {self.kind} domain lists no bits; received {list(self.bits)}")
        if self.kind == "ball":
            check_int("ball radius", self.radius, 0)
        elif self.radius is not None:
            raise ValueError(f"only a ball has a radius; received {self.kind} with {self.radius}")

    @classmethod
    def parse(cls, text):
        """The domain written as ``text`` (``"any_of:0,1"``, ``"ball:6"``, ``"all"``), or a
        ValueError that shows the forms."""
        if isinstance(text, Domain):
            return text
        forms = "all, frozen:0,1, any_of:0,1, parity:0,1,2 or ball:K"
        if not isinstance(text, str):
            raise ValueError(f"a domain is text ({forms}); received {text!r}")
        kind, _, rest = text.strip().partition(":")
        kind = kind.strip()
        if kind not in DOMAIN_KINDS:
            raise ValueError(f"a domain is {forms}; received {text!r}")
        if kind == "all":
            if rest.strip():
                raise ValueError(f"the domain 'all' takes nothing after it; received {text!r}")
            return cls()
        try:
            numbers = [int(p) for p in rest.split(",")] if rest.strip() else []
        except ValueError:
            raise ValueError(f"a domain's bits (or radius) are integers: {forms}; "
                             f"received {text!r}") from None  # fmt: skip
        if kind == "ball":
            if len(numbers) != 1:
                raise ValueError(f"a ball domain has one radius, e.g. 'ball:6'; received {text!r}")
            return cls("ball", radius=numbers[0])
        return cls(kind, bits=tuple(numbers))

    def __str__(self):
        if self.kind == "all":
            return "all"
        if self.kind == "ball":
            return f"ball:{self.radius}"
        return f"{self.kind}:{','.join(map(str, self.bits))}"

    def depends_on(self, num_bits):
        """The bits whether a point is seen depends on (the ball: every bit)."""
        if self.kind == "ball":
            return tuple(range(num_bits))
        return self.bits

    def check(self, num_bits, *, unseen=False):
        """This domain on d = ``num_bits`` bits, checked: bits in range, a seen point, at
        most ``MAX_DOMAIN_BITS`` bits to enumerate, and (``unseen=True``) an unseen point.
        Returns the domain."""
        for b in self.bits:
            if b >= num_bits:
                raise ValueError(
                    f"domain bits must be in 0..{num_bits - 1}; received {str(self)!r}"
                )
        depends = self.depends_on(num_bits)
        if len(depends) > MAX_DOMAIN_BITS:
            raise ValueError(
                f"a domain may depend on at most {MAX_DOMAIN_BITS} bits (its seen patterns are "
                f"enumerated); {str(self)!r} depends on {len(depends)}"
            )
        if unseen and self.unseen_fraction(num_bits) == 0:
            raise ValueError(f"the domain {str(self)!r} has no unseen point at d = {num_bits}")
        return self

    def seen_patterns(self, num_bits):
        """bool (2**m,): which patterns of the m bits ``depends_on`` are seen; pattern p sets
        x_(bits[i]) = -1 iff bit i of p is set."""
        m = len(self.depends_on(num_bits))
        p = np.arange(2**m, dtype=np.int64)
        if self.kind == "all":
            return np.ones(1, bool)
        if self.kind == "frozen":
            return p == 0
        if self.kind == "any_of":
            return p != 2**m - 1
        if self.kind == "parity":
            return _popcount(p) % 2 == 0
        return _popcount(p) <= self.radius

    def seen(self, x):
        """x (N, d) of +1/-1 -> bool (N,): which points are seen."""
        x = np.asarray(x)
        if x.ndim != 2:
            raise ValueError(f"x must have shape (N, d); received shape {x.shape}")
        depends = self.depends_on(x.shape[1])
        for b in depends:
            if b >= x.shape[1]:
                raise ValueError(f"domain bits must be in 0..{x.shape[1] - 1}; "
                                 f"received {str(self)!r}")  # fmt: skip
        minus = (x[:, list(depends)] < 0).astype(np.int64)
        pattern = (minus << np.arange(len(depends), dtype=np.int64)).sum(axis=1)
        return self.seen_patterns(x.shape[1])[pattern]

    def mask(self, num_bits):
        """bool (2**d,): the seen rows of the cube in row order."""
        depends = self.check(num_bits).depends_on(num_bits)
        rows = np.arange(2**num_bits, dtype=np.int64)
        pattern = np.zeros(rows.shape, np.int64)
        for i, b in enumerate(depends):
            pattern |= ((rows >> b) & 1) << i
        return self.seen_patterns(num_bits)[pattern]

    def unseen_fraction(self, num_bits):
        """The share of the cube that is unseen."""
        return 1.0 - float(self.seen_patterns(num_bits).mean())


def slug(text):
    """A domain (or a target) as a run-id part: letters, digits, '_' and '.', at most 40."""
    out = text.replace(":", "_").replace(",", "_").replace("+", "p").replace("-", "m")
    out = "".join(c if c.isalnum() or c in "._" else "_" for c in out)
    return out[:40]


def check_domain(text, num_bits, *, unseen=False):
    """``Domain.parse(text).check(num_bits)``; returns the canonical text."""
    return str(Domain.parse(text).check(num_bits, unseen=unseen))


__all__ = ["DOMAIN_KINDS", "MAX_DOMAIN_BITS", "Domain", "check_domain", "slug"]
