"""PVR as text, for language models: each example a prompt (the rule stated once, the
sequence, the question) and its answer, in reasoning-gym's shape ``{question, answer,
metadata}``, with ``score_answer(answer, entry)``.

    >>> from pvr_keras import benchmarks
    >>> entry = benchmarks.text_source("token/w1", "test", size="small")[0]
    >>> sorted(entry), benchmarks.score_answer(entry["answer"], entry)
    (['answer', 'metadata', 'question'], 1.0)
"""

import numpy as np

from pvr_keras.benchmarks import catalog

# How a reply is read lives in replies.py (standard library only: lm-eval task folders hold a
# copy); text.extract_answer, text.EXTRACTIONS and text.MAX_DIGITS are its names here too.
from pvr_keras.benchmarks.replies import EXTRACTIONS, MAX_DIGITS, extract_answer  # noqa: F401
from pvr_keras.benchmarks.sources import Source
from pvr_keras.data.checks import check_index
from pvr_keras.references import resolve


def rule(config, task):
    """The task's rule in words, stated once at the top of every prompt (the kind's
    ``BenchmarkHooks.text_rule``)."""
    return resolve(check_text(config).text_rule)(task)


def names():
    """The configs whose kind has a text form (token, Boolean, chain), in catalog order (not
    the counterfactual-pair configs: they have none)."""
    return [n for n in catalog.names() if catalog.get(n).hooks.text_rule is not None]


def check_text(config):
    """The config's ``BenchmarkHooks`` when its kind has a text form.

    Raises:
        ValueError: it has none (one line naming the kinds that have one).
    """
    hooks = config.hooks
    if hooks.text_rule is None and config.interchange:
        raise ValueError(f"{config.name}: counterfactual-pair configs have no text form (a "
                         "pair asks what a network computes under an intervention, not a "
                         "question answered from the sequence); export it as parquet or "
                         "tfrecord")  # fmt: skip
    if hooks.text_rule is None:
        have = [k for k in catalog.families() if catalog.hooks(k).text_rule is not None]
        raise ValueError(f"{config.name}: the {config.kind} kind has no text form (text "
                         f"prompts are for configs of {', '.join(have)})")  # fmt: skip
    return hooks


class TextSource:
    """A split of a config whose kind has a text form (token, Boolean, chain) as ``{question,
    answer, metadata}`` entries (``name``: a config name or a ``Config``, as ``Source``), at
    the ``small`` size unless ``size="standard"`` (see ``text_source``)."""

    def __init__(self, name, split, *, size="small"):
        self.source = Source(name, split, size=size)
        hooks = check_text(self.source.config)
        self.rule = rule(self.source.config, self.source.task)
        self._sequence = resolve(hooks.text_sequence)
        self._inputs, self._label = hooks.supervised

    def __len__(self):
        return len(self.source)

    def __getitem__(self, item):
        index, batched = self.source._indices(item)
        entries = self.entries(index)
        return entries if batched else entries[0]

    def entries(self, index):
        """The entries of examples ``index`` (non-negative integers) of the split's stream,
        past ``len(self)`` too: example i of a stream is the same whatever its length (a
        reasoning-gym dataset has a size of its own). A split that is a fixed set
        (``Source.whole``: the Boolean test split, the cube) ends at its size.

        Raises:
            IndexError: an index past the end of a fixed set.
        """
        index = check_index(index)
        if self.source.whole and index.size and index.max() >= len(self):
            raise IndexError(f"{self.source!r} is a fixed set of {len(self):,} examples; "
                             f"received index {int(index.max())}")  # fmt: skip
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


def text_source(name, split, *, size="small"):
    """The text form of a split of a config whose kind has one: token, Boolean, chain
    (``TextSource``). The ``small`` size by default (a token config's test split: 2,000
    prompts, each a model call), as ``docs/benchmarks/score_llm.py`` and the Inspect tasks;
    ``size="standard"`` for the whole split (10,000), of which small is the prefix."""
    return TextSource(name, split, size=size)


def answers(name):
    """Every answer a reply to config ``name``'s prompts may give, as text, in order (the
    choices of the multiple-choice form): ``"0"``..``"9"`` for token configs, ``"-1" "0" "1"``
    for Boolean ones, ``"0"``..``"39"`` for ``chain/l40-...``.

    Raises:
        ValueError: the config's kind has no text form, or no answer set
            (``BenchmarkHooks.text_answers``).
    """
    config = catalog.get(name)
    hooks = check_text(config)
    if hooks.text_answers is None:
        raise ValueError(f"{config.name}: the {config.kind} kind names no answer set "
                         "(BenchmarkHooks.text_answers): it has no multiple-choice "
                         "form")  # fmt: skip
    return tuple(str(int(a)) for a in resolve(hooks.text_answers)(config.build_task()))


def score_answer(answer, entry, extraction="flexible"):
    """1.0 when the reply ``answer`` gives the entry's answer (``extract_answer``: by default
    the number after its last "answer", else its last number; ``extraction="strict"``: the
    whole reply is that number), else 0.0
    (a missing, empty or non-text reply scores 0, and so does a number that is not the
    answer). reasoning-gym's ``score_answer(answer, entry)`` signature."""
    given = extract_answer(answer, extraction)
    return float(given is not None and given == int(entry["answer"]))


def score_replies(replies, entries):
    """Both readings of a list of replies against their entries: ``{"examples", "strict",
    "strict_stderr", "flexible", "flexible_stderr"}`` (mean score and its standard error,
    sqrt(p (1 - p) / (n - 1)), as lm-evaluation-harness reports accuracy)."""
    replies, entries = list(replies), list(entries)
    if len(replies) != len(entries):
        raise ValueError(f"{len(replies)} replies for {len(entries)} entries")
    n = len(entries)
    report = {"examples": n}
    for extraction in EXTRACTIONS:
        pairs = zip(replies, entries, strict=True)
        scores = np.array([score_answer(r, e, extraction) for r, e in pairs])
        mean = float(scores.mean()) if n else float("nan")
        report[extraction] = mean
        report[f"{extraction}_stderr"] = (float(np.sqrt(mean * (1 - mean) / (n - 1)))
                                          if n > 1 else float("nan"))  # fmt: skip
    return report
