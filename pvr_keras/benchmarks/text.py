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

from pvr_keras.benchmarks import catalog
from pvr_keras.benchmarks.sources import Source
from pvr_keras.references import resolve


def rule(config, task):
    """The task's rule in words, stated once at the top of every prompt (the kind's
    ``BenchmarkHooks.text_rule``)."""
    return resolve(check_text(config).text_rule)(task)


def check_text(config):
    """The config's ``BenchmarkHooks`` when its kind has a text form.

    Raises:
        ValueError: it has none (one line naming the kinds that have one).
    """
    hooks = config.hooks
    if hooks.text_rule is None:
        have = [k for k in catalog.families() if catalog.hooks(k).text_rule is not None]
        raise ValueError(f"{config.name}: the {config.kind} kind has no text form (text "
                         f"prompts are for configs of {', '.join(have)})")  # fmt: skip
    return hooks


class TextSource:
    """A split of a config whose kind has a text form (token, Boolean) as ``{question,
    answer, metadata}`` entries."""

    def __init__(self, name, split, *, size="standard"):
        self.source = Source(name, split, size=size)
        hooks = check_text(self.source.config)
        self.rule = rule(self.source.config, self.source.task)
        self._sequence = resolve(hooks.text_sequence)
        self._inputs, self._label = hooks.supervised

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
        sequence = self._sequence(row)
        answer = str(int(row[self._label]))
        question = f"{self.rule}\nSequence: {sequence}\nAnswer:"
        metadata = {"config": config.name, "version": config.version,
                    "split": self.source.split, "size": self.source.size,
                    "index": index}  # fmt: skip
        metadata.update({k: v.tolist() if hasattr(v, "tolist") else v for k, v in row.items()
                         if k not in (self._inputs, self._label)})  # fmt: skip
        return {"question": question, "answer": answer, "metadata": metadata}


def text_source(name, split, *, size="standard"):
    """The text form of a split of a config whose kind has one: token, Boolean
    (``TextSource``)."""
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
