"""PVR as text, for language models: each example a prompt (the rule stated once, the
sequence, the question) and its answer, in reasoning-gym's shape ``{question, answer,
metadata}``, with ``score_answer(answer, entry)``.

    >>> from pvr_keras import benchmarks
    >>> entry = benchmarks.text_source("token/w1", "test", size="small")[0]
    >>> sorted(entry), benchmarks.score_answer(entry["answer"], entry)
    (['answer', 'metadata', 'question'], 1.0)
"""

import re

import numpy as np

from pvr_keras.benchmarks.sources import Source

_AGGREGATION = {
    "mod_sum": "the sum of those digits modulo {num_values}",
    "median": "the median of those digits (with an even count, the lower of the two middle "
              "digits)",
    "maj_vote": "the digit that occurs most often among them (ties go to the smallest digit)",
    "min": "the smallest of those digits",
    "max": "the largest of those digits",
}  # fmt: skip
_BOOLEAN = {
    "parity": "the product of those bits",
    "majority": "the sign of their sum (0 when the sum is 0)",
    "min": "the smallest of those bits",
    "max": "the largest of those bits",
}


def rule(config, task):
    """The task's rule in words, stated once at the top of every prompt."""
    if config.family == "token":
        n, w = task.num_positions, task.window
        what = _AGGREGATION[task.aggregation].format(num_values=task.num_values)
        span = "the digit" if w == 1 else f"{w} consecutive digits"
        where = (
            f"The first digit is a pointer p (0-{n - 1}); the other {n} digits are the "
            f"values, at positions 0-{n - 1}. Look at {span} starting at value position p"
            + (f" (wrapping around after position {n - 1})" if w > 1 else "")
            + ". "
        )
        if not task.pointer:
            where = (f"Ignore the first digit. Look at {span} starting at value position 0 of "
                     f"the {n} values that follow it. ")  # fmt: skip
        answer = "that digit" if w == 1 else what
        return (f"Pointer value retrieval. Each sequence has {task.seq_len} digits. {where}"
                f"The answer is {answer}. Reply with the answer digit only.")  # fmt: skip
    p, v, w = task.pointer_bits, task.num_value_bits, task.window
    cut = ("wrapping around after the last value bit" if task.window_mode == "cyclic"
           else "stopping at the last value bit")  # fmt: skip
    return (f"Pointer value retrieval on bits. Each sequence has {p + v} values, each +1 or -1. "
            f"The first {p} are pointer bits: read +1 as 1 and -1 as 0, most significant first, "
            f"to get a number p. The other {v} are value bits, at positions 0-{v - 1}. Take "
            f"{w} value bits starting at position p ({cut}); the answer is "
            f"{_BOOLEAN[task.aggregation]}. Reply with the answer (-1, 0 or 1) only.")  # fmt: skip


class TextSource:
    """A split of a token or Boolean config as ``{question, answer, metadata}`` entries."""

    def __init__(self, name, split, *, size="standard"):
        self.source = Source(name, split, size=size)
        if self.source.config.family not in ("token", "boolean"):
            raise ValueError(f"{name}: text prompts are for token and Boolean configs")
        self.rule = rule(self.source.config, self.source.task)

    def __len__(self):
        return len(self.source)

    def __getitem__(self, item):
        if isinstance(item, int | np.integer) and not isinstance(item, bool):
            return self._entry(self.source[item], int(item) % max(len(self), 1))
        index, _ = self.source._indices(item)
        rows = self.source.rows(index)
        return [self._entry({k: v[i] for k, v in rows.items()}, int(j))
                for i, j in enumerate(index)]  # fmt: skip

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def _entry(self, row, index):
        config = self.source.config
        if config.family == "token":
            sequence = " ".join(str(int(t)) for t in row["tokens"])
            answer = str(int(row["label"]))
        else:
            sequence = " ".join(f"{int(b):+d}" for b in row["bits"])
            answer = str(int(row["label"]))
        question = f"{self.rule}\nSequence: {sequence}\nAnswer:"
        metadata = {"config": config.name, "version": config.version,
                    "split": self.source.split, "size": self.source.size,
                    "index": index}  # fmt: skip
        metadata.update({k: v.tolist() if hasattr(v, "tolist") else v for k, v in row.items()
                         if k not in ("tokens", "bits", "label")})  # fmt: skip
        return {"question": question, "answer": answer, "metadata": metadata}


def text_source(name, split, *, size="standard"):
    """The text form of a token or Boolean split (``TextSource``)."""
    return TextSource(name, split, size=size)


_NUMBER = re.compile(r"([-+]?)0*(\d+)")  # leading zeros apart: "-007" is (-, 7)
MAX_DIGITS = 32  # every answer is a small integer; int() refuses 4,300 digits


def score_answer(answer, entry):
    """1.0 when the last integer in ``answer`` is the entry's answer, else 0.0 (a missing or
    non-text answer scores 0, and so does a number of any length that is not the answer)."""
    if not isinstance(answer, str):
        return 0.0
    found = _NUMBER.findall(answer)
    if not found or len(found[-1][1]) > MAX_DIGITS:
        return 0.0
    sign, digits = found[-1]
    return float(int(sign + digits) == int(entry["answer"]))
