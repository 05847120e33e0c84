"""Boolean functions written as text: the targets of the gotu kind (``FunctionTask.target``: a
run field, a flag, a sweep axis), on d bits:

- a polynomial in the bits: ``x0x1``, ``x0x1 - 1.25x1x2 + 1.5x2x0``, ``x0x1x2 + x0x3x4x5``,
  ``0.5 + x3`` (a coefficient, then the monomial's bits; a bare number is the constant;
  spaces are dropped, so ``x0x1 - x2`` and ``x0x1-x2`` are one target);
- ``parity:0,1,2``, ``majority:0,1,2``, ``min:...``, ``max:...``: that aggregation of the
  listed bits (``parity:all``, ``majority:all``: of every bit);
- ``cyclic:3``: sum over i of x_i x_(i+1) x_(i+2), indices mod d (their ``cyclic3dim15``);
- ``staircase:4``: x0 + x0x1 + x0x1x2 + x0x1x2x3.

A target is ASCII text with finite coefficients, and the largest value it takes (the sum of
its coefficients' sizes) at most ``MAX_TARGET_VALUE``: the labels are float32, the loss
squares the errors, and Keras sums the squares of a batch (and of an epoch, its running mean)
before it divides. At 1e9, an error twice the largest label squares to 4e18, and float32
(largest 3.4e38) sums 2**40 of them: no batch or epoch overflows. At 1e19 one square is
finite but a batch of 64 of them is not, and training reads ``inf`` whatever its learning rate.

A task keeps one canonical spelling of its target (``canonical_target``), so equal targets
written differently are one run: of the spellings of its function (its polynomial, and each
named target equal to it: ``parity:0,1`` is ``x0x1``, ``staircase:1`` is ``x0``,
``0.5x0+0.5x1+0.5x2-0.5x0x1x2`` is ``majority:0,1,2``), the shortest, then the first in
alphabetical order. A polynomial is written with no spaces, no leading ``+``, each
monomial's bits in increasing order without leading zeros (``x1x00`` is ``x0x1``), a
monomial written twice summed, zero terms dropped, coefficients as Python's shortest float
text without a ``1`` (``2x0 - 0.5x1``), the terms ordered by the size of their coefficient,
then by their bits (``x1 + x0`` is ``x0+x1``). A named target's bits are sorted (every bit is
``all``), its K a plain integer. The targets of the runs recorded before are in this form
(``x0x1-1.25x1x2+1.5x0x2``, ``parity:all``, ``cyclic:3``, ...), so their ids stay.

    >>> parse_target("x0x1", 15).terms
    (((0, 1), 1.0),)
    >>> canonical_target("+x1x00 + 2", 4)
    'x0x1+2'
    >>> canonical_target("parity:1,0", 4)
    'x0x1'
"""

import math
import re

import numpy as np

from pvr_keras.checks import check_int
from pvr_keras.kinds.boolean.task import BooleanFunction
from pvr_keras.tasks.aggregations import BOOLEAN_AGGREGATIONS, aggregate_bits

MAX_TARGET_VALUE = 1e9  # the largest |f(x)|: float32 sums of squared errors stay finite
_TERM = re.compile(r"\s*([+-])?\s*((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)?\s*\*?\s*((?:x\d+)*)\s*")
# An aggregation of more bits is spelled by name: its polynomial (2**11 terms or more) is longer.
MAX_EXPANDED_BITS = 11
_NAMED = ("cyclic", "staircase", *BOOLEAN_AGGREGATIONS)


def _polynomial(text, num_bits):
    """{subset: coefficient} of a polynomial written as text, in the order first written (a
    monomial written twice: the exact sum of its coefficients)."""
    written, position = {}, 0
    text = text.strip()
    while position < len(text):
        found = _TERM.match(text, position)
        sign, number, monomial = found.groups() if found else (None, None, "")
        if not found or found.end() == position or not (number or monomial) or (
            position and sign is None
        ):  # fmt: skip
            raise ValueError(
                f"a target polynomial is terms like 'x0x1', '-1.25x1x2' or '0.5', joined by + "
                f"or -; could not read {text[position:]!r} in {text!r}"
            )
        bits = tuple(sorted(int(b) for b in re.findall(r"x(\d+)", monomial)))
        if len(set(bits)) != len(bits):
            raise ValueError(f"a monomial names each bit once (x_i^2 = 1); received {monomial!r}")
        if any(b >= num_bits for b in bits):
            raise ValueError(f"target bits must be in 0..{num_bits - 1}; received {monomial!r}")
        coefficient = float(number) if number else 1.0
        if not math.isfinite(coefficient):
            raise ValueError(f"a target's coefficients are finite numbers; received {number!r} "
                             f"in {text!r}")  # fmt: skip
        written.setdefault(bits, []).append(-coefficient if sign == "-" else coefficient)
        position = found.end()
    if not written:
        raise ValueError("the target is empty: give a polynomial such as 'x0x1'")
    try:
        terms = {bits: math.fsum(cs) for bits, cs in written.items()}
    except OverflowError:
        terms = {(): math.inf}  # a sum past the largest float: refused below
    largest = sum(abs(c) for c in terms.values())
    if not largest <= MAX_TARGET_VALUE:
        raise ValueError(
            f"a target's values must stay within +-{MAX_TARGET_VALUE:g} (float32 labels, whose "
            f"squared errors a batch sums); {text!r} reaches {largest:g}"
        )
    return {s: c for s, c in terms.items() if c != 0} or {(): 0.0}


def _number(value):
    """The shortest text that reads back as ``value`` (``2`` for 2.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _term_order(item):
    """Terms by the size of their coefficient, then by their bits (``x0+x0x1+x1``): the order
    of the targets of the gotu studies recorded before terms had one order
    (``x0x1-1.25x1x2+1.5x0x2``, ``x0x1x2+x0x3x4x5``), so that their run ids stay."""
    bits, c = item
    return abs(c), bits


def _polynomial_text(terms):
    """The canonical text of ``{subset: coefficient}`` (``_polynomial``'s), its terms in
    ``_term_order``: ``-0.5+2x0-x1x2``; ``0`` when there are none."""
    out = ""
    for bits, c in sorted(terms.items(), key=_term_order):
        monomial = "".join(f"x{b}" for b in bits)
        size = "" if abs(c) == 1 and monomial else _number(abs(c))
        out += ("-" if c < 0 else "+" if out else "") + size + monomial
    return out or "0"


def _bit_list(rest, num_bits, text):
    if rest.strip() == "all":
        return tuple(range(num_bits))
    try:
        bits = tuple(int(p) for p in rest.split(","))
    except ValueError:
        raise ValueError(f"list the bits as '0,1,2' or 'all'; received {text!r}") from None
    if any(b < 0 or b >= num_bits for b in bits) or len(set(bits)) != len(bits):
        raise ValueError(f"target bits must be distinct, in 0..{num_bits - 1}; received {text!r}")
    return bits


def _named(name, bits, num_bits):
    """``parity:0,2``; ``parity:all`` when ``bits`` are every bit."""
    return f"{name}:{'all' if len(bits) == num_bits else ','.join(map(str, bits))}"


def _aggregation_expansion(name, bits):
    """{subset: coefficient} of the aggregation ``name`` of the sorted ``bits``: the
    Walsh-Hadamard transform of its values on the 2**k points of those bits (dyadic
    coefficients, exact in float64; the majority of k bits has 2**(k-1) terms, min and max
    2**k)."""
    k = len(bits)
    rows = np.arange(2**k, dtype=np.int64)[:, None]
    values = aggregate_bits(name, 1 - 2 * ((rows >> np.arange(k)) & 1)).astype(np.float64)
    h = 1
    while h < values.size:  # one butterfly layer per bit
        values = values.reshape(-1, 2, h)
        values = np.stack([values[:, 0] + values[:, 1], values[:, 0] - values[:, 1]], axis=1)
        values = values.reshape(-1)
        h *= 2
    return {
        tuple(b for j, b in enumerate(bits) if s >> j & 1): float(c / 2**k)
        for s, c in enumerate(values.tolist())
        if c
    }


def _cyclic_expansion(num_bits, k):
    expansion = {}
    for i in range(num_bits):
        bits = tuple(sorted({(i + t) % num_bits for t in range(k)}))
        expansion[bits] = expansion.get(bits, 0.0) + 1.0
    return expansion


def _staircase_expansion(k):
    return {tuple(range(j + 1)): 1.0 for j in range(k)}


def _spellings(expansion, num_bits):
    """{text: BooleanFunction maker} of every spelling of the function whose Fourier
    expansion is ``expansion`` (no zero terms): its polynomial, and each named target equal
    to it (a parity is one term of coefficient 1; an aggregation of k bits has at least
    2**(k-1) terms, so it is only sought among expansions that long)."""
    d = num_bits
    out = {_polynomial_text(expansion): lambda: BooleanFunction.fourier(d, expansion or {(): 0.0})}
    support = tuple(sorted(set().union(*expansion)))
    degree = max(map(len, expansion), default=0)
    if len(expansion) == 1 and support and expansion.get(support) == 1.0:
        out[_named("parity", support, d)] = lambda: BooleanFunction.of_subset(d, support)
    if degree and expansion == _staircase_expansion(degree):
        out[f"staircase:{degree}"] = lambda: BooleanFunction.staircase(d, degree)
    if degree and len(expansion) <= d and expansion == _cyclic_expansion(d, degree):
        out[f"cyclic:{degree}"] = lambda: BooleanFunction.fourier(d, expansion)
    if support and 2 ** (len(support) - 1) <= len(expansion):
        for name in ("majority", "min", "max"):
            if expansion == _aggregation_expansion(name, support):
                out[_named(name, support, d)] = lambda name=name: BooleanFunction.of_subset(
                    d, support, name
                )
    return out


def _read_spelling(text, num_bits):
    """``(spellings, expansion)`` of a target written as ``text``: its own spelling tidied
    ({text: BooleanFunction maker}) and its Fourier expansion (None for an aggregation of more
    than ``MAX_EXPANDED_BITS`` bits)."""
    name, colon, rest = text.strip().partition(":")
    if not colon:
        return {}, {s: c for s, c in _polynomial(text, num_bits).items() if c != 0}
    if name not in _NAMED:
        raise ValueError(f"a named target is one of {', '.join(_NAMED)} (e.g. 'parity:0,1'); "
                         f"received {text!r}")  # fmt: skip
    if name in BOOLEAN_AGGREGATIONS:  # symmetric in its bits: sorted, every bit is 'all'
        bits = tuple(sorted(_bit_list(rest, num_bits, text)))
        own = {_named(name, bits, num_bits): lambda: BooleanFunction.of_subset(num_bits, bits,
                                                                                 name)}  # fmt: skip
        if name == "parity":
            return own, {bits: 1.0}
        return own, _aggregation_expansion(name, bits) if len(bits) <= MAX_EXPANDED_BITS else None
    try:
        k = int(rest)
    except ValueError:
        raise ValueError(f"{name} takes one integer, e.g. '{name}:3'; received {text!r}") from None
    if not 1 <= k <= num_bits:
        raise ValueError(f"{name}:K needs K in 1..{num_bits}; received {text!r}")
    if name == "staircase":
        return {}, _staircase_expansion(k)
    return {}, _cyclic_expansion(num_bits, k)


def _read_target(text, num_bits):
    """``(canonical text, BooleanFunction)`` of a target written as ``text`` on d =
    ``num_bits`` bits (see the module docstring), or a ValueError."""
    check_int("num_bits", num_bits, 1)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a target is text such as 'x0x1' or 'parity:0,1'; received {text!r}")
    if not text.isascii():  # int() and \d read other scripts' digits: 'x\u0663' is x3
        raise ValueError(f"a target is ASCII text (bits x0, x1, ..., digits 0-9); received "
                         f"{text!r}")  # fmt: skip
    spellings, expansion = _read_spelling(text, num_bits)
    if expansion is not None:
        spellings.update(_spellings(expansion, num_bits))
    canonical = min(spellings, key=lambda spelling: (len(spelling), spelling))
    return canonical, spellings[canonical]()


def parse_target(text, num_bits):
    """The ``BooleanFunction`` written as ``text`` on d = ``num_bits`` bits (see the module
    docstring), or a ValueError."""
    return _read_target(text, num_bits)[1]


def canonical_target(text, num_bits):
    """The one spelling of the target written as ``text`` on d = ``num_bits`` bits (see the
    module docstring): ``canonical_target("+x1x00 + 2", 4) == "x0x1+2"``; a ValueError if it
    is not a target."""
    return _read_target(text, num_bits)[0]


def expansion_of(function):
    """A ``BooleanFunction``'s Fourier expansion {subset tuple: coefficient} when it is given
    as one (None for an aggregation of a subset)."""
    if function.aggregation is not None:
        return None
    out = {}
    for bits, c in function.terms:
        key = tuple(sorted(bits))
        out[key] = out.get(key, 0.0) + c
    return out


__all__ = ["MAX_TARGET_VALUE", "canonical_target", "expansion_of", "parse_target"]
