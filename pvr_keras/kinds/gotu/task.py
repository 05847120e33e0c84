"""Boolean functions on a seen domain, the task of "Generalization on the Unseen" (Abbe, Bengio,
Lotfi, Rizk, ICML 2023): learn f on the seen part of {+1, -1}^d, be tested on all of it.

``FunctionTask(num_bits=d, target=TEXT, domain=TEXT, draw=...)``. The target is written as
text (``targets``: a polynomial such as ``x0x1 - 1.25x1x2``, ``parity:0,1,2``, ``cyclic:3``,
``staircase:4``), kept in its one canonical spelling, so that equal targets written
differently are one run.

The domain (``kinds.boolean.domains``) is where training and validation examples are drawn:
uniformly over its points (``draw="uniform"``, any ``num_examples``), or every seen point
once per epoch (``draw="all"``, their code's training size 0: then ``num_examples`` must be
the number of seen points, and the test split is the whole cube in a random order,
``test_examples`` at most ``2**d``: each point once; the gotu kind refuses other sizes). The
test split is always drawn from the whole cube, so its loss counts the unseen part.

    >>> task = FunctionTask(num_bits=15, target="x0x1", domain="any_of:0,1")
    >>> task.function.terms
    (((0, 1), 1.0),)
    >>> task.num_seen
    24576
"""

import dataclasses

from pvr_keras.checks import check_choice, check_int
from pvr_keras.fields import field
from pvr_keras.kinds.boolean.domains import Domain, check_domain
from pvr_keras.kinds.boolean.task import MAX_BITS, check_bits
from pvr_keras.kinds.gotu.targets import canonical_target, parse_target

DRAWS = ("uniform", "all")
MAX_ENUMERATED_BITS = 20  # draw="all" lists the seen rows of the cube


@dataclasses.dataclass(frozen=True)
class FunctionTask:
    """A Boolean function learned on a seen domain (see the module docstring)."""

    num_bits: int = field("d: bits of the input", default=15)
    target: str = field(
        "the function: a polynomial ('x0x1 - 1.25x1x2'), 'parity:0,1', 'majority:all', "
        "'cyclic:3' or 'staircase:4'",
        default="x0x1",
    )
    domain: str = field(
        "the seen domain: all, frozen:0,1, any_of:0,1, parity:0,1,2 or ball:K",
        default="all",
    )
    draw: str = field(
        "training examples drawn uniformly from the domain, or every seen point once (all: "
        "num_examples = the seen points, test_examples at most 2**d)",
        DRAWS,
        default="uniform",
    )

    def __post_init__(self):
        d = check_int("num_bits", self.num_bits, 1)
        if d > MAX_BITS:
            raise ValueError(f"num_bits must be at most {MAX_BITS}; received {d}")
        check_choice("draw", self.draw, DRAWS)
        if not isinstance(self.target, str):
            raise ValueError(f"a target is text such as 'x0x1'; received {self.target!r}")
        # One spelling of a target, one run id (spaces, '+x0', 'x00', 'x1x0': its text).
        object.__setattr__(self, "target", canonical_target("".join(self.target.split()), d))
        object.__setattr__(self, "domain", check_domain(self.domain, d))
        if self.draw == "all" and d > MAX_ENUMERATED_BITS:
            raise ValueError(
                f"draw='all' lists the cube's points, so num_bits must be at most "
                f"{MAX_ENUMERATED_BITS}; received {d} (draw='uniform' takes any d)"
            )

    @property
    def function(self):
        """The target as a ``BooleanFunction``."""
        return parse_target(self.target, self.num_bits)

    @property
    def seen_domain(self):
        """The domain as a ``Domain``."""
        return Domain.parse(self.domain)

    @property
    def num_seen(self):
        """The number of seen points of the cube."""
        domain = self.seen_domain
        share = float(domain.seen_patterns(self.num_bits).mean())
        return round(share * 2**self.num_bits)

    def seen(self, x):
        """(N, d) bits -> bool (N,): which are in the domain."""
        return self.seen_domain.seen(check_bits(x, self.num_bits))

    def label(self, x):
        """NumPy reference labels: (N, d) bits -> (N,) float32."""
        return self.function.label(x)


__all__ = ["DRAWS", "MAX_ENUMERATED_BITS", "FunctionTask"]
