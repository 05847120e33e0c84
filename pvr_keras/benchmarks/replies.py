"""Reading a language model's reply to a PVR prompt: the integer it gives, strictly (the
whole reply is one number) or flexibly (the last number in it).

Standard library only, and importing nothing of pvr_keras: ``tools/export_dataset.py
--format lm-eval`` copies this file as it is into the task folder, where the filters of
``lm_eval_hooks.py`` read replies with it on machines without pvr_keras. ``benchmarks.text``
scores replies with the same functions.

    >>> extract_answer(" -1\\n", "strict"), extract_answer("3 + 4 = 7", "flexible")
    (-1, 7)
"""

import re
import unicodedata

# A reply is NFKC-normalised first (full-width digits and signs are digits and signs; U+2212
# is a minus), then read as ASCII: a number is an optional sign and digits, its leading zeros
# dropped, at most MAX_DIGITS digits (every answer is a small integer; int() refuses 4,300
# digits). Both readings take linear time in the reply's length.
EXTRACTIONS = ("strict", "flexible")
MAX_DIGITS = 32
_STRICT = re.compile(r"\s*([-+]?)([0-9]+)\s*")  # no "0*" before the digits: two quantifiers
_NUMBER = re.compile(r"([-+]?)([0-9]+)")  # over the same zeros backtrack in quadratic time
_MINUS = str.maketrans({"\u2212": "-"})


def extract_answer(reply, extraction="flexible"):
    """The integer a reply gives, or None.

    ``strict``: the whole reply (spaces and newlines around it apart) is one number
    (``"7"``, ``" -1\\n"``; not ``"7."``, ``"The answer is 7"``). ``flexible``: the last number
    in the reply (``"3 + 4 = 7"`` gives 7). A reply that is not text, is empty, or whose number
    has more than ``MAX_DIGITS`` digits gives None.
    """
    if extraction not in EXTRACTIONS:
        raise ValueError(f"extraction must be one of {', '.join(EXTRACTIONS)}; received "
                         f"{extraction!r}")  # fmt: skip
    if not isinstance(reply, str):
        return None
    text = unicodedata.normalize("NFKC", reply).translate(_MINUS)
    if extraction == "strict":
        found = _STRICT.fullmatch(text)
        found = found and found.groups()
    else:
        last = None
        for last in _NUMBER.finditer(text):  # noqa: B007  (the last match is the one kept)
            pass
        found = last and last.groups()
    if not found:
        return None
    sign, digits = found
    digits = digits.lstrip("0") or "0"  # "-007" is -7
    return int(sign + digits) if len(digits) <= MAX_DIGITS else None
