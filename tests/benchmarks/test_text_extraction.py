"""Reading a language model's reply: strict (the whole reply is one number) and flexible (the
number after the reply's last "answer", else its last number), each with a defined score for
the replies models actually give."""

import signal

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import text

SEVEN = {"answer": "7"}

# reply -> (strict, flexible) score against the answer 7
REPLIES = {
    "7": (1.0, 1.0),
    "  7\n": (1.0, 1.0),  # spaces and newlines around the number
    "+7": (1.0, 1.0),
    "007": (1.0, 1.0),  # leading zeros are the number
    "7.": (0.0, 1.0),
    "The answer is 7.": (0.0, 1.0),  # a chatty sentence
    "3 + 4 = 7": (0.0, 1.0),  # several numbers: the last counts
    "7, or maybe 8": (0.0, 0.0),
    "7 8": (0.0, 0.0),
    "seven": (0.0, 0.0),
    "７": (1.0, 1.0),  # full-width digits
    "答えは７です": (0.0, 1.0),
    "": (0.0, 0.0),  # an empty reply
    "   ": (0.0, 0.0),
    "1" * 40: (0.0, 0.0),  # more than MAX_DIGITS digits is no answer
    "0" * 5000 + "7": (1.0, 1.0),
    # A reply that answers first, then explains: flexible reads the number its "answer" names,
    "Answer: 7 (pointer 3, window 3-5: 2 + 4 + 1)": (0.0, 1.0),
    "The answer is 7. The pointer is 3, so positions 3, 4 and 5.": (0.0, 1.0),
    "**Answer:** 7\n\nWhy: p = 3; 2 + 4 + 1 = 7 mod 10 = 7": (0.0, 1.0),
    "answer = 7; window sum 17": (0.0, 1.0),
    "ANSWER IS: 7, from positions 3-5": (0.0, 1.0),
    "The answer is 4. No, the answer is 7.": (0.0, 1.0),  # its last "answer"
    "The answer is 7, or maybe 8": (0.0, 1.0),
    # and without one the last number ("7." then "3-5": 3 and 5, the hyphen is no minus).
    "7. (pointer 3, window 3-5)": (0.0, 0.0),
    "The answer is the sum mod 10: 7": (0.0, 1.0),  # "answer" names no number: the last one
    "answers: 3 then 7": (0.0, 1.0),  # "answers" is not "answer"
    # A number is read whole: a decimal of a whole number is that number, any other none.
    "7.0": (1.0, 1.0),
    " 007.000\n": (1.0, 1.0),
    "7.5": (0.0, 0.0),
    "7.00 is the digit": (0.0, 1.0),
    "The answer is 7.0.": (0.0, 1.0),
    "6.5 rounds to 7": (0.0, 1.0),
    "3-7": (0.0, 1.0),  # a range: 3 and 7, not -7
}


@pytest.mark.parametrize("reply", list(REPLIES))
def test_each_reply_has_a_defined_score_under_both_readings(reply):
    strict, flexible = REPLIES[reply]
    assert benchmarks.score_answer(reply, SEVEN, "strict") == strict
    assert benchmarks.score_answer(reply, SEVEN, "flexible") == flexible
    assert benchmarks.score_answer(reply, SEVEN) == flexible  # the default reading


def test_negative_answers_with_any_minus_sign():
    minus_one = {"answer": "-1"}
    for reply in ("-1", "－１", "\u22121", "p = 3, so -1"):
        assert benchmarks.score_answer(reply, minus_one) == 1.0, reply
    assert benchmarks.score_answer("1", minus_one) == 0.0
    assert benchmarks.score_answer("\u22121", minus_one, "strict") == 1.0
    for reply in ("\u22121.0", "Answer: \u22121 (bits 3-5 sum to -1)", "The answer is \u22121."):
        assert benchmarks.score_answer(reply, minus_one) == 1.0, reply
    assert benchmarks.score_answer("\u22121.0", minus_one, "strict") == 1.0
    assert benchmarks.score_answer("p = 4-1", minus_one) == 0.0  # 4 and 1, not 4 and -1
    assert benchmarks.score_answer("p = 4 -1", minus_one) == 1.0  # a sign after a space


def test_a_reply_that_is_not_text_scores_zero():
    for reply in (None, 7, b"7", ["7"]):
        assert benchmarks.score_answer(reply, SEVEN, "strict") == 0.0
        assert benchmarks.score_answer(reply, SEVEN) == 0.0


def test_an_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="extraction must be one of strict, flexible"):
        benchmarks.score_answer("7", SEVEN, "lenient")


N = 1_000_000


@pytest.mark.parametrize(
    "reply, strict, flexible",
    [
        (" " * N + "x", 0.0, 0.0),
        ("0" * N + "x", 0.0, 0.0),  # quadratic when leading zeros had their own quantifier
        ("0" * N + "7", 1.0, 1.0),
        ("-" * N, 0.0, 0.0),
        ("1 " * (N // 2) + "7", 0.0, 1.0),
        ("7" + " " * N + "x", 0.0, 1.0),
        ("７" * N, 0.0, 0.0),
        ("7." + "0" * N + "x", 0.0, 1.0),
        ("Answer:" + " " * N + "x 7", 0.0, 1.0),
        ("answer is" + " " * N + "7", 0.0, 1.0),
        ("Answer: " * (N // 8) + "7", 0.0, 1.0),
        ("3-" * (N // 2) + "7", 0.0, 1.0),
    ],
)
def test_a_million_character_reply_is_read_in_linear_time(reply, strict, flexible):
    # Each takes well under a second; a backtracking pattern took minutes. The alarm turns a
    # regression into a failure rather than a hung suite.
    def too_slow(*_):
        raise TimeoutError("reading a 10^6-character reply took over 60 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        assert benchmarks.score_answer(reply, SEVEN, "strict") == strict
        assert benchmarks.score_answer(reply, SEVEN, "flexible") == flexible
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_score_replies_reports_both_readings_with_their_standard_errors():
    entries = [{"answer": str(i % 10)} for i in range(40)]
    replies = [e["answer"] if i % 4 else f"It is {e['answer']}" for i, e in enumerate(entries)]
    replies[1] = "wrong"
    report = text.score_replies(replies, entries)
    assert report["examples"] == 40
    assert report["flexible"] == pytest.approx(39 / 40)
    assert report["strict"] == pytest.approx(29 / 40)
    p = 29 / 40
    assert report["strict_stderr"] == pytest.approx(np.sqrt(p * (1 - p) / 39))
    with pytest.raises(ValueError, match="3 replies for 40 entries"):
        text.score_replies(replies[:3], entries)


@pytest.mark.parametrize(
    "name, first, last, count",
    [("token/w3", "0", "9", 10), ("boolean/f3", "-1", "1", 3), ("chain/l40-h1-4", "0", "39", 40)],
)
def test_the_answer_set_holds_every_label_of_the_split(name, first, last, count):
    choices = text.answers(name)
    assert (choices[0], choices[-1], len(choices)) == (first, last, count)
    labels = {e["answer"] for e in benchmarks.text_source(name, "test", size="small")[:2000]}
    assert labels <= set(choices)


def test_a_kind_without_a_text_form_has_no_answer_set():
    with pytest.raises(ValueError, match="the block kind has no text form"):
        text.answers("block/mnist-2x2")


def test_the_docs_table_of_readings_is_what_extract_answer_gives():
    """docs/benchmarks/README.md's table: each reply (a cell may list several, in backticks;
    ``\\n`` is a newline) gives the strict and flexible answers the table says."""
    import re

    from tests import scripts

    lines = (scripts.REPO / "docs" / "benchmarks" / "README.md").read_text().splitlines()
    start = lines.index("| reply | strict | flexible |") + 2
    rows = 0
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cell, strict, flexible = (c.strip() for c in line.strip("|").split("|"))
        for reply in re.findall(r"`([^`]*)`", cell):
            reply = reply.replace("\\n", "\n")
            got = [text.extract_answer(reply, e) for e in ("strict", "flexible")]
            want = [None if w == "none" else int(w) for w in (strict, flexible)]
            assert got == want, reply
            rows += 1
    assert rows >= 10
