"""pvr_keras.checks: the argument checks every layer shares, each defined once."""

import pathlib
import re

import numpy as np
import pytest

from pvr_keras import checks

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("minimum", "maximum", "wanted"),
    [
        (0, None, "a non-negative integer"),
        (1, None, "a positive integer"),
        (2, None, "an integer >= 2"),
        (1, 10, r"an integer in \[1, 10\)"),
    ],
)
def test_check_int_says_what_was_allowed_and_received(minimum, maximum, wanted):
    assert checks.check_int("n", minimum, minimum, maximum) == minimum
    for bad in (minimum - 1, 2.0, True, "3", None):
        with pytest.raises(
            ValueError, match=rf"^n must be {wanted}; received {re.escape(repr(bad))}$"
        ):
            checks.check_int("n", bad, minimum, maximum)
    if maximum is not None:
        with pytest.raises(ValueError, match="n must be an integer in"):
            checks.check_int("n", maximum, minimum, maximum)


def test_numpy_integers_pass_as_python_ints():
    value = checks.check_positive("batch_size", np.int64(8))
    assert value == 8 and type(value) is int
    assert checks.check_seed(np.uint64(3)) == 3


def test_seeds_stop_below_two_to_the_63():
    assert checks.MAX_SEED == 2**63
    assert checks.check_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"seed must be below 2\*\*63"):
        checks.check_seed(2**63)
    with pytest.raises(ValueError, match="seed must be a non-negative integer; received -1"):
        checks.check_seed(-1)


def test_counts_are_int32():
    assert checks.check_count("epochs", 2**31 - 1) == 2**31 - 1
    with pytest.raises(ValueError, match=r"epochs must be below 2\*\*31"):
        checks.check_count("epochs", 2**31)
    assert checks.check_count("warmup_epochs", 0, 0) == 0


def test_numbers_are_finite():
    assert checks.is_finite(1) and checks.is_finite(0.5)
    assert not any(checks.is_finite(v) for v in (True, float("nan"), float("inf"), "1", None))
    assert checks.check_number("lr", 0.1, 0, above=True) == 0.1
    with pytest.raises(ValueError, match="lr must be a finite number > 0; received 0"):
        checks.check_number("lr", 0, 0, above=True)
    with pytest.raises(ValueError, match="lr must be a finite number >= 0; received nan"):
        checks.check_number("lr", float("nan"), 0)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]; received 1.5"):
        checks.check_number("p", 1.5, 0, maximum=1)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]; received 'x'"):
        checks.check_number("p", "x", 0, maximum=1)


def test_choices_and_instances():
    assert checks.check_choice("split", "test", ("train", "test")) == "test"
    with pytest.raises(ValueError, match="split must be one of train, test; received 'val'"):
        checks.check_choice("split", "val", ("train", "test"))
    with pytest.raises(ValueError, match="task must be a int; received str"):
        checks.check_instance("task", "x", int)


# Files another change rewrites; each still holds its own copy until it imports checks.
PENDING = set()


def test_each_check_has_one_home():
    """No library file defines a check or a limit that ``checks`` holds: one ``MAX_SEED``,
    one integer check, one finiteness test."""
    again = re.compile(
        r"^(MAX_SEED|MAX_EXAMPLES|MAX_COUNT)\s*=|^def _?(finite|check_int|check_seed|check_number"
        r"|memory_bytes)\(|^def _check_(int|positive|seed|number)\(|2\*\*63",
        re.M,
    )
    found = []
    for path in sorted((REPO / "pvr_keras").rglob("*.py")):
        name = str(path.relative_to(REPO))
        if name == "pvr_keras/checks.py" or name in PENDING:
            continue
        found += [f"{name}: {m.group(0)}" for m in again.finditer(path.read_text())]
    assert not found, found
