"""Scores any callable ``prompt -> text`` (a language model behind an API, a local model, a
rule written by hand) on a benchmark config's text form.

    python docs/benchmarks/score_llm.py token/w1 --limit 200          # the built-in oracle
    python docs/benchmarks/score_llm.py token/w3 --model my_llm.py:ask --limit 100

``--model FILE.py:FUNCTION`` imports your file (it is your code: only what you name runs) and
calls ``FUNCTION(prompt) -> str`` once per example; each reply is read both ways
``benchmarks.score_answer`` knows: ``strict`` (the whole reply is one number) and ``flexible``
(the number after its last "answer", else its last number), each reported with its standard
error. Without ``--model`` an oracle that reads the rule's answer from the sequence shows the
mechanics (score 1.0). The split is read at the small size by default, as
``benchmarks.text_source`` reads it (a token config's test split: 2,000 prompts); ``--size
standard`` for all 10,000.
"""

import argparse
import importlib.util
import json
import sys

import numpy as np

from pvr_keras import benchmarks
from pvr_keras.benchmarks import text


def oracle(name):
    """A ``prompt -> text`` function that applies the config's rule to the prompt's sequence."""
    task = benchmarks.task_of(name)

    def answer(prompt):
        sequence = prompt.split("Sequence: ")[1].split("\n")[0]
        x = np.array([[int(t) for t in sequence.split()]])
        return f"The answer is {int(task.label(x)[0])}."

    return answer


def load(reference):
    path, _, function = reference.rpartition(":")
    spec = importlib.util.spec_from_file_location("user_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function)


def evaluate(name, ask, *, split="test", size="small", limit=None):
    """``ask``'s strict and flexible scores (means and standard errors) over the first
    ``limit`` entries of a split."""
    entries = benchmarks.text_source(name, split, size=size)
    n = len(entries) if limit is None else min(limit, len(entries))
    entries = entries[:n]
    report = text.score_replies([ask(e["question"]) for e in entries], entries)
    return {"config": name, "split": split, "size": size, **report}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--model", help="FILE.py:FUNCTION, a prompt -> text callable")
    parser.add_argument("--split", default="test", choices=benchmarks.SPLITS)
    parser.add_argument("--size", default="small", choices=("standard", "small"))
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    ask = load(args.model) if args.model else oracle(args.config)
    report = evaluate(args.config, ask, split=args.split, size=args.size, limit=args.limit)
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
