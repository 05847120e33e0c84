"""Reading a language model's reply to a PVR prompt: the integer it gives, strictly (the
whole reply is one number) or flexibly (the number after the reply's last "answer", else the
last number in it).

Standard library only, and importing nothing of pvr_keras: ``tools/export_dataset.py
--format lm-eval`` copies this file as it is into the task folder, where the filters of
``lm_eval_hooks.py`` read replies with it on machines without pvr_keras. ``benchmarks.text``
scores replies with the same functions.

    >>> extract_answer(" -1\\n", "strict"), extract_answer("3 + 4 = 7", "flexible")
    (-1, 7)
    >>> extract_answer("Answer: 7 (pointer 3, window 3-5)"), extract_answer("4.0", "strict")
    (7, 4)
"""

import re
import unicodedata

# A reply is NFKC-normalised first (full-width digits and signs are digits and signs; U+2212
# is a minus), then read as ASCII. A number is an optional sign, digits, and an optional
# fraction (a point and digits): its value is an answer when it is a whole number ("4.0" is
# 4, "4.5" is no answer), its leading zeros dropped, at most MAX_DIGITS digits (every answer
# is a small integer; int() refuses 4,300 digits). A sign directly after a digit is an
# operator, not a sign ("3-5" is 3 and 5). "7." is 7 and a full stop. Both readings take
# linear time in the reply's length: no two quantifiers range over the same characters.
EXTRACTIONS = ("strict", "flexible")
MAX_DIGITS = 32
_FRACTION = r"(?:\.([0-9]+))?"
_STRICT = re.compile(r"\s*([-+]?)([0-9]+)" + _FRACTION + r"\s*")  # no "0*" before the digits:
_NUMBER = re.compile(r"(?:(?<![0-9])([-+]))?([0-9]+)" + _FRACTION)  # two quantifiers over the
# same zeros backtrack in quadratic time. The answer marker: the word "answer", "is" or not,
# then only spaces, ":", "=", "*" or "_" (Markdown bold) before the number.
_MARKED = re.compile(r"\banswer\b(?:\s+is\b)?[\s:=*_]*([-+]?)([0-9]+)" + _FRACTION,
                     re.IGNORECASE)  # fmt: skip
_MINUS = str.maketrans({"\u2212": "-"})


def _last(pattern, text):
    last = None
    for last in pattern.finditer(text):  # noqa: B007  (the last match is the one kept)
        pass
    return last


def extract_answer(reply, extraction="flexible"):
    """The integer a reply gives, or None.

    ``strict``: the whole reply (spaces and newlines around it apart) is one number (``"7"``,
    ``" -1\\n"``, ``"+7"``, ``"007"``, ``"4.0"``; not ``"7."``, ``"The answer is 7"``).
    ``flexible``: the number right after the reply's last "answer" (any case; "answer is",
    "Answer:", "**Answer:**", "answer =": ``"Answer: 7 (pointer 3, window 3-5)"`` gives 7),
    else the last number in the reply (``"3 + 4 = 7"`` gives 7; ``"7. (pointer 3, window
    3-5)"`` gives 5: a reply that answers first and explains after must say which number is
    its answer). A number is read whole: ``"4.0"`` gives 4, ``"4.5"`` no answer; a sign
    directly after a digit is an operator (``"3-5"`` is 3 and 5); U+2212 is a minus. A reply
    that is not text, is empty, or whose number has more than ``MAX_DIGITS`` digits gives
    None.
    """
    if extraction not in EXTRACTIONS:
        raise ValueError(f"extraction must be one of {', '.join(EXTRACTIONS)}; received "
                         f"{extraction!r}")  # fmt: skip
    if not isinstance(reply, str):
        return None
    text = unicodedata.normalize("NFKC", reply).translate(_MINUS)
    if extraction == "strict":
        found = _STRICT.fullmatch(text)
    else:
        found = _last(_MARKED, text) or _last(_NUMBER, text)
    if not found:
        return None
    sign, digits, fraction = found.groups()
    if (fraction or "").strip("0"):
        return None  # "4.5": not a whole number
    digits = digits.lstrip("0") or "0"  # "-007" is -7
    return int((sign or "") + digits) if len(digits) <= MAX_DIGITS else None
