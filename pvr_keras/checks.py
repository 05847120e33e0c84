"""The argument checks every layer shares, and the limits they enforce.

Plain Python (no NumPy, no framework), so configs, rules, streams and models check their
arguments the same way before any work starts. Each check says what was allowed and what
was received, and returns the value it accepted (integers as Python ``int``):

    >>> check_int("window", 3, 1)
    3
    >>> check_int("window", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: window must be a positive integer; received 0
    >>> check_seed(2**64)
    Traceback (most recent call last):
    ...
    ValueError: seed must be below 2**63 (seeds alias modulo 2**64); received 18446744073709551616
"""

import math
import numbers

MAX_SEED = 2**63  # stream keys hash a seed modulo 2**64: a larger seed would alias a smaller one
MAX_INDEX = 2**63  # example indices are int64
MAX_EXAMPLES = 2**31 - 1  # example indices are int32 on the device
MAX_COUNT = 2**31 - 1  # batch sizes, epochs and steps are int32 counters in the engines


def is_integer(value):
    """True for a Python or NumPy integer; False for a bool (``True`` is no count)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_finite(value):
    """True for a finite int or float; False for a bool, NaN, an infinity or anything else."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(minimum, maximum):
    if maximum is not None:
        return f"an integer in [{minimum}, {maximum})"
    return {0: "a non-negative integer", 1: "a positive integer"}.get(
        minimum, f"an integer >= {minimum}"
    )


def check_int(name, value, minimum, maximum=None):
    """``value`` as an int if it is an integer in ``[minimum, maximum)`` (no upper bound when
    ``maximum`` is None), else a ValueError naming ``name``."""
    if not is_integer(value) or value < minimum or (maximum is not None and value >= maximum):
        raise ValueError(f"{name} must be {_integer(minimum, maximum)}; received {value!r}")
    return int(value)


def check_positive(name, value):
    """``value`` as an int if it is a positive integer (a size, a count, a width)."""
    return check_int(name, value, 1)


def check_count(name, value, minimum=1):
    """An int32 counter of the engines (batch size, epochs, steps): an integer >= ``minimum``
    and below 2**31."""
    check_int(name, value, minimum)
    if value > MAX_COUNT:
        raise ValueError(f"{name} must be below 2**31; received {value!r}")
    return int(value)


def check_seed(seed, name="seed"):
    """A seed: a non-negative integer below ``MAX_SEED`` (2**63)."""
    check_int(name, seed, 0)
    if seed >= MAX_SEED:
        raise ValueError(f"{name} must be below 2**63 (seeds alias modulo 2**64); received {seed}")
    return int(seed)


def check_number(name, value, minimum, *, above=False, maximum=None):
    """``value`` if it is a finite number >= ``minimum`` (> with ``above``; <= ``maximum``
    when given), else a ValueError naming ``name``."""
    low = is_finite(value) and (value > minimum if above else value >= minimum)
    if not low or (maximum is not None and value > maximum):
        if maximum is not None:
            wanted = f"in {'(' if above else '['}{minimum}, {maximum}]"
        else:
            wanted = f"a finite number {'>' if above else '>='} {minimum}"
        raise ValueError(f"{name} must be {wanted}; received {value!r}")
    return value


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices``, else a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; received {value!r}")
    return value


REAL_KINDS = "biuf"  # NumPy dtype kinds of real numbers: bool, int, unsigned int, float
_KIND_NAMES = {"b": "bool", "i": "int", "u": "unsigned int", "f": "float"}


def check_real_dtype(name, array, kinds=REAL_KINDS):
    """``array`` (a NumPy array) if its dtype holds real numbers of ``kinds`` (NumPy dtype
    kinds; default bool, int, unsigned int or float), else a ValueError naming the dtype:
    complex values (a conversion to float drops their imaginary part, an argmax orders them),
    timedelta64 (NumPy counts it an integer), datetime64, objects, text."""
    if array.dtype.kind not in kinds:
        allowed = ", ".join(_KIND_NAMES[k] for k in kinds)
        raise ValueError(f"{name} must be real numbers ({allowed}); received dtype {array.dtype}")
    return array


def check_instance(name, value, cls):
    """``value`` if it is a ``cls`` (e.g. the task of a stream), else a ValueError."""
    if not isinstance(value, cls):
        raise ValueError(f"{name} must be a {cls.__name__}; received {type(value).__name__}")
    return value


def check_memory_need(what, need, fix):
    """``need`` (bytes) if it is at most half of this machine's memory, else a one-line
    ValueError saying what needs how much, and ``fix``. Counted before anything is allocated:
    a size that would exhaust the machine is refused, not tried."""
    have = memory_bytes()
    if have is not None and need > have // 2:
        raise ValueError(f"{what} needs about {_gigabytes(need)}, more than half of this "
                         f"machine's {_gigabytes(have)}; {fix}")  # fmt: skip
    return need


def _gigabytes(nbytes):
    """``nbytes`` as text: ``5,256 GB``, ``2.5 GB``."""
    gb = nbytes / 1e9
    return f"{gb:,.0f} GB" if gb >= 10 else f"{gb:.2g} GB"


def memory_bytes():
    """This machine's memory, in bytes (None where the system does not say)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
