"""Every number of the README and of docs/results' pages comes from a record through a value
marker, or is marked as quoted from the paper or as a setting: a digit changed by hand, or a
number typed into the prose, fails ``results_tables.py --check``. Planted once per section
of every page."""

import importlib
import pathlib
import re

import pytest

from tests import scripts

REPO = pathlib.Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"
PAGES = [REPO / "README.md", *sorted(RESULTS.glob("*.md"))]


@pytest.fixture(scope="module")
def claims():
    scripts.load("tools/generate/results_claims.py")  # its folder on the import path
    values = importlib.import_module("claims.values")
    records = importlib.import_module("claims.records")
    return values, records.studies(RESULTS)


def _sections(text):
    """The page cut at its ``## `` headings (the part above the first one included)."""
    return [part for part in re.split(r"(?m)^(?=## )", text) if part.strip()]


def _prose_line(section):
    """The index of a line of ``section`` that is plain prose (no marker, code or table)."""
    lines = section.split("\n")
    inside_code = inside_table = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            inside_code = not inside_code
        if line.startswith(("<!-- table: ", "<!-- end table -->")):
            inside_table = line.startswith("<!-- table: ")
            continue
        plain = line.strip()[:1].isalpha() and not any(c in line for c in "`<>|[]#")
        indented = line.startswith(("    ", "\t"))  # an indented code block's line
        if not (inside_code or inside_table) and plain and not indented and len(line.split()) >= 3:
            return i
    return None


def test_the_committed_pages_have_no_unmarked_number(claims):
    values, _ = claims
    for page in PAGES:
        assert values.unmarked(page.read_text()) == [], page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_number_typed_into_any_section_is_found(claims, page):
    values, _ = claims
    planted = 0
    for section in _sections(page.read_text()):
        line = _prose_line(section)
        if line is None:
            continue
        lines = section.split("\n")
        for number in ("0.42", "42%", "4.2 min", "12-14%"):
            typed = lines[:line] + [lines[line] + f" ({number})"] + lines[line + 1 :]
            found = values.unmarked("\n".join(typed))
            assert (line + 1, number) in found, (page.name, section[:60], number)
        planted += 1
    assert planted >= 1, f"{page.name}: no prose line to plant a number in"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_digit_changed_in_any_sections_value_is_stale(claims, page):
    values, studies = claims
    changed = 0
    for section in _sections(page.read_text()):
        marker = values.VALUE.search(section)
        if marker is None or not re.search(r"\d", marker.group(3)):
            continue
        text = marker.group(3)
        digit = re.search(r"\d", text)
        wrong = text[: digit.start()] + str((int(digit.group()) + 1) % 10) + text[digit.end() :]
        planted = section[: marker.start(3)] + wrong + section[marker.end(3) :]
        _, stale = values.fill_values(planted, studies)
        assert len(stale) == 1 and repr(wrong) in stale[0], (page.name, stale)
        changed += 1
    if "<!-- = " in page.read_text():
        assert changed >= 1, page.name


def test_paper_and_setting_markers_say_where_a_number_comes_from(claims):
    values, _ = claims
    assert values.unmarked("the paper: 0.9146; ours 97.0% in 3.5 min, 2.7x") == [
        (1, "0.9146"), (1, "97.0%"), (1, "3.5 min"), (1, "2.7x")]  # fmt: skip
    marked = ("the paper: <!-- paper -->0.9146<!-- /paper -->; momentum "
              "<!-- setting -->0.9<!-- /setting -->; `lr 0.05`; [a](x_0.5.md)")  # fmt: skip
    assert values.unmarked(marked) == []
    # Integers name figures, windows, seeds and sizes: not checked.
    assert values.unmarked("Figure 14, window 3, seed 0, 300,000 examples, 5x10^4") == []


def test_a_markers_ball_is_bounded(claims):
    values, studies = claims
    assert values.evaluate("pct(ball(15, 6), 0)", studies) == "30%"
    with pytest.raises(ValueError, match="ball"):
        values.fill_values("<!-- = ball(10000000, 9999999) -->x<!-- /= -->", studies)


def test_backends_names_the_seeds_of_each_engine_and_lists_seeds_that_are_not_a_run(claims):
    backends = claims[0]._value_functions(None)["backends"]
    records = [{"seed": s, "backend": b} for s, b in
               ((1, "jax"), (2, "tensorflow"), (3, "jax"), (4, "jax"))]  # fmt: skip
    assert backends(records) == "seeds 1, 3, 4: jax; seed 2: tensorflow"
    assert backends([{"seed": s, "backend": "jax"} for s in (1, 2, 3)]) == "seeds 1-3: jax"


def test_nums_writes_a_range_of_integers_with_thousands_separators(claims):
    nums = claims[0]._value_functions(None)["nums"]
    assert nums([8_428, 9_116, 8_600]) == "8,428-9,116"
    assert nums([2_068, 2_068]) == "2,068"
