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
its coefficients' sizes) at most ``MAX_TARGET_VALUE``: the labels are float32 and the loss
squares them. A task keeps one canonical spelling of it (``canonical_target``), so equal
targets written differently are one run: no spaces, no leading ``+``, each monomial's bits in
increasing order without leading zeros (``x1x00`` is ``x0x1``), a monomial written twice
summed, zero terms dropped, coefficients as Python's shortest float text without a ``1``
(``2x0 - 0.5x1``); the terms stay in the order written. A named target's bits are sorted
(every bit is ``all``), its K a plain integer. A text already in this form is unchanged, so
the ids of the runs recorded before it stay.

    >>> parse_target("x0x1", 15).terms
    (((0, 1), 1.0),)
    >>> canonical_target("+x1x00 + 2", 4)
    'x0x1+2'
"""

import math
import re

from pvr_keras.checks import check_int
from pvr_keras.kinds.boolean.task import BooleanFunction
from pvr_keras.tasks.aggregations import BOOLEAN_AGGREGATIONS

MAX_TARGET_VALUE = 1e19  # the largest |f(x)|: float32 labels whose square (the loss) is finite
_TERM = re.compile(r"\s*([+-])?\s*((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)?\s*\*?\s*((?:x\d+)*)\s*")
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
            f"a target's values must stay within +-{MAX_TARGET_VALUE:g} (float32 labels whose "
            f"squared error is finite); {text!r} reaches {largest:g}"
        )
    return {s: c for s, c in terms.items() if c != 0} or {(): 0.0}


def _number(value):
    """The shortest text that reads back as ``value`` (``2`` for 2.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _polynomial_text(terms):
    """The canonical text of ``{subset: coefficient}`` (``_polynomial``'s): ``2x0-x1x2+0.5``."""
    out = ""
    for bits, c in terms.items():
        monomial = "".join(f"x{b}" for b in bits)
        size = "" if abs(c) == 1 and monomial else _number(abs(c))
        out += ("-" if c < 0 else "+" if out else "") + size + monomial
    return out


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


def _read_target(text, num_bits):
    """``(canonical text, BooleanFunction)`` of a target written as ``text`` on d =
    ``num_bits`` bits (see the module docstring), or a ValueError."""
    check_int("num_bits", num_bits, 1)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a target is text such as 'x0x1' or 'parity:0,1'; received {text!r}")
    if not text.isascii():  # int() and \d read other scripts' digits: 'x\u0663' is x3
        raise ValueError(f"a target is ASCII text (bits x0, x1, ..., digits 0-9); received "
                         f"{text!r}")  # fmt: skip
    name, colon, rest = text.strip().partition(":")
    if not colon:
        terms = _polynomial(text, num_bits)
        return _polynomial_text(terms), BooleanFunction.fourier(num_bits, terms)
    if name not in _NAMED:
        raise ValueError(f"a named target is one of {', '.join(_NAMED)} (e.g. 'parity:0,1'); "
                         f"received {text!r}")  # fmt: skip
    if name in BOOLEAN_AGGREGATIONS:  # symmetric in its bits: sorted, every bit is 'all'
        bits = tuple(sorted(_bit_list(rest, num_bits, text)))
        listed = "all" if len(bits) == num_bits else ",".join(map(str, bits))
        return f"{name}:{listed}", BooleanFunction.of_subset(num_bits, bits, name)
    try:
        k = int(rest)
    except ValueError:
        raise ValueError(f"{name} takes one integer, e.g. '{name}:3'; received {text!r}") from None
    if not 1 <= k <= num_bits:
        raise ValueError(f"{name}:K needs K in 1..{num_bits}; received {text!r}")
    if name == "staircase":
        return f"{name}:{k}", BooleanFunction.staircase(num_bits, k)
    expansion = {}
    for i in range(num_bits):
        bits = tuple(sorted({(i + t) % num_bits for t in range(k)}))
        expansion[bits] = expansion.get(bits, 0.0) + 1.0
    return f"{name}:{k}", BooleanFunction.fourier(num_bits, expansion)


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
