"""PVR's text configs as Inspect AI tasks (https://inspect.aisi.org.uk): a ``@task`` a config,
named ``pvr_`` + its TFDS name (``token/w3`` -> ``pvr_token_w3``, ``boolean/f3-frozen0`` ->
``pvr_boolean_f3_frozen0``), and ``pvr(config=...)`` for any of them. A task's dataset is a
split's prompts (``text.text_source``: input the question, target the answer, metadata the
entry's: config, version, split, size, index, ...), its solver plain ``generate()``, and its
scorers the two readings of a reply (``strict``: the whole reply is one number; ``flexible``: the
number after its last "answer", else its last number; ``text.extract_answer``), each with
accuracy and its standard error.

    inspect eval pvr_keras/benchmarks/inspect_tasks.py@pvr_token_w3 --model openai/gpt-4o-mini
    inspect eval pvr_keras/benchmarks/inspect_tasks.py@pvr -T config=boolean/f3 -T limit=200 ...

Inspect finds the per-config tasks by name once it has loaded this file (``file.py@name``), as
it finds every registered task; ``inspect list tasks`` and ``inspect eval`` of the file
without ``@name`` read its source for literal ``@task`` functions, and find ``pvr`` alone.
In Python: ``inspect_ai.eval(pvr_token_w3(limit=100), model=...)``. A config registered after
this module is imported has no task of its own; ``pvr(config=...)`` runs it. Inspect's mock
model (``--model mockllm/model``) replies "Default output from mockllm/model", which holds no
number (0 on both readings), and counts tokens with ``tiktoken``, which downloads its table on
first use.

Needs Inspect AI (``pip install -e ".[llm]"``); ``import pvr_keras`` never imports it.
"""

try:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Score, accuracy, scorer, stderr
    from inspect_ai.solver import generate
except ModuleNotFoundError as missing:
    if (missing.name or "").split(".")[0] != "inspect_ai":
        raise
    raise ModuleNotFoundError(
        "pvr_keras.benchmarks.inspect_tasks needs Inspect AI (the inspect_ai package), which "
        'is not installed here: pip install -e ".[llm]" (or pip install inspect-ai)',
        name="inspect_ai",
    ) from missing

from pvr_keras.benchmarks import catalog, text
from pvr_keras.checks import check_int


def dataset(config, split="test", size="small", limit=None):
    """The first ``limit`` prompts of a split (all when None) as an Inspect ``MemoryDataset``:
    ``Sample(input=question, target=answer, id=index, metadata=the entry's metadata)``.

    Raises:
        ValueError: an unknown config, split or size, a config without a text form, or a
            limit that is not a positive integer (checked before any prompt is built).
    """
    if limit is not None:
        limit = check_int("limit", limit, 1)
    entries = text.text_source(config, split, size=size)
    entries = entries[: len(entries) if limit is None else limit]
    samples = [Sample(input=e["question"], target=e["answer"], id=e["metadata"]["index"],
                      metadata=e["metadata"]) for e in entries]  # fmt: skip
    return MemoryDataset(samples, name=f"{catalog.get(config).name}/{split}/{size}")


def _read(extraction):
    """Inspect's scorer function for one reading of the reply: 1.0 when it gives the target
    (``text.score_answer``), the number it gives as the Score's ``answer``."""

    async def score(state, target):
        reply = state.output.completion
        given = text.extract_answer(reply, extraction)
        return Score(value=text.score_answer(reply, {"answer": target.text}, extraction),
                     answer=None if given is None else str(given))  # fmt: skip

    return score


@scorer(metrics=[accuracy(), stderr()])
def strict():
    """The whole reply (spaces and newlines around it apart) is the answer: ``"7"``, not
    ``"The answer is 7."``."""
    return _read("strict")


@scorer(metrics=[accuracy(), stderr()])
def flexible():
    """The number after the reply's last "answer" (``"Answer: 7 (p = 3)"`` gives 7), else its
    last number (``"3 + 4 = 7"`` gives 7): ``text.extract_answer``."""
    return _read("flexible")


def build(config, split="test", size="small", limit=None):
    """The Inspect ``Task`` of one config's split: ``dataset(...)``, ``generate()``, and the
    ``strict`` and ``flexible`` scorers; its version is the config's."""
    named = catalog.get(config)
    return Task(dataset=dataset(config, split, size, limit), solver=generate(),
                scorer=[strict(), flexible()], version=named.version,
                metadata={"config": named.name, "split": split, "size": size})  # fmt: skip


@task
def pvr(config="token/w3", split="test", size="small", limit=None):
    """Any text config (``-T config=boolean/f3``) as an Inspect task.

    Args:
        config: a config whose kind has a text form (``text.names()``: token, Boolean, chain).
        split: ``train``, ``validation`` or ``test``.
        size: ``standard`` or ``small`` (a small split is a prefix of the standard one).
        limit: the first ``limit`` prompts only (Inspect's ``--limit`` also takes the first,
            after building them all).

    Example:
        ``inspect_ai.eval(pvr("token/w1", limit=20), model="openai/gpt-4o-mini")``
    """
    return build(config, split, size, limit)


def _config_task(config):
    """The ``@task`` of one config: ``pvr(config, ...)`` under the config's own name."""

    def config_task(split="test", size="small", limit=None):
        return build(config, split, size, limit)

    config_task.__name__ = config_task.__qualname__ = f"pvr_{catalog.get(config).tfds_name}"
    config_task.__doc__ = (f"PVR {config} ({catalog.get(config).description}) as an Inspect "
                           "task: ``pvr(config, split, size, limit)``.")  # fmt: skip
    return task(config_task)


# {config: its task}; each also a name of this module (``from ... import pvr_token_w3``).
TASKS = {config: _config_task(config) for config in text.names()}
globals().update({t.__name__: t for t in TASKS.values()})
