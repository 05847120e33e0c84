"""An lm-evaluation-harness task folder of benchmark configs' text forms.

    python tools/export_dataset.py token/w3 boolean/f3 DIR --format lm-eval [--size small]
    lm_eval --model hf --model_args pretrained=MODEL --include_path DIR --tasks pvr_token_w3

Per config two tasks on its prompts (``benchmarks.text_source``): ``pvr_<tfds_name>``
(``generate_until`` on ``{{question}}``; the reply read by two filters, ``strict-match``: the
whole reply is one number, and ``flexible-extract``: the number after its last "answer",
else its last number, each scored with
``exact_match`` against the answer), and ``pvr_<tfds_name>_mc`` (``multiple_choice``: the
log-likelihood of each answer of ``text.answers(name)`` after the prompt, for base models;
``acc``). The groups ``pvr`` and ``pvr_mc`` hold the exported tasks of each kind, with the
mean over them (each config counted once). A task's ``metadata`` holds its config's version,
the exported splits' sizes and SHA-256 (the manifest's) and the command that runs it.

The folder (``export.export`` writes it whole, as every export):

    README.md                    the commands, the tasks, their hashes
    pvr.yaml, pvr_mc.yaml        the groups
    pvr_token_w3.yaml            one task a file (``include:`` a shared template)
    pvr_token_w3_mc.yaml
    _pvr_generate_until_yaml, _pvr_multiple_choice_yaml
    lm_eval_hooks.py, replies.py the data loader and the filters (copies of this package's)
    data/token_w3/{validation,test}.parquet   question, answer, metadata

The tasks read their Parquet files through ``lm_eval_hooks.load``, found beside the YAML, so
the folder can be moved and ``lm_eval`` run from anywhere, without pvr_keras installed. The
test split is evaluated; the validation split gives the few-shot examples (``--num_fewshot``).
Written for lm-evaluation-harness 0.4.13.
"""

import json
import pathlib

from pvr_keras import files
from pvr_keras.benchmarks import catalog
from pvr_keras.benchmarks.text import answers

SPLITS = ("validation", "test")  # the few-shot examples, the evaluated split
HOOKS = ("lm_eval_hooks.py", "replies.py")  # copied from this package, as they are
GROUPS = {"generate_until": "pvr", "multiple_choice": "pvr_mc"}
# The filters of a generated reply, and their functions in lm_eval_hooks.py.
FILTERS = {"strict-match": "strict_match", "flexible-extract": "flexible_extract"}
HARNESS = "lm-evaluation-harness 0.4.13"
# A base model continues the prompt past its answer: a blank line or the next "Sequence:"
# ends the reply; chat models end their turn.
UNTIL = ["\n\n", "\nSequence:", "</s>", "<|im_end|>", "<|eot_id|>"]
MAX_GEN_TOKS = 64  # an answer with a short working; --gen_kwargs max_gen_toks=... for more


def task_name(config, output_type="generate_until"):
    """``pvr_token_w3`` (``generate_until``), ``pvr_token_w3_mc`` (``multiple_choice``)."""
    suffix = {"generate_until": "", "multiple_choice": "_mc"}[output_type]
    return f"pvr_{config.tfds_name}{suffix}"


def command(tasks):
    """The ``lm_eval`` command that runs ``tasks`` (a task or group name) of the folder DIR."""
    return f"lm_eval --model hf --model_args pretrained=MODEL --include_path DIR --tasks {tasks}"


def data_folder(config):
    """The folder of a config's Parquet files in the task folder."""
    return pathlib.PurePosixPath("data") / config.tfds_name


def _q(value):
    """A YAML scalar: JSON's double-quoted string is YAML's."""
    return json.dumps(value)


_FILTERS = "\n".join(
    f"""  - name: {name}
    filter:
      - function: custom
        filter_fn: !function lm_eval_hooks.{function}
      - function: take_first"""
    for name, function in FILTERS.items()
)

_COMMON = """custom_dataset: !function lm_eval_hooks.load
test_split: test
fewshot_split: validation
doc_to_text: "{{question}}"
doc_to_target: answer  # the column: the answer as text ("-1"), never read as a choice index
target_delimiter: " "
"""

TEMPLATES = {
    "_pvr_generate_until_yaml": f"""# The pvr_* generate_until tasks include this.
{_COMMON}output_type: generate_until
generation_kwargs:
  until: {_q(UNTIL)}
  do_sample: false
  temperature: 0.0
  max_gen_toks: {MAX_GEN_TOKS}
filter_list:
{_FILTERS}
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
""",
    "_pvr_multiple_choice_yaml": f"""# The pvr_*_mc multiple_choice tasks include this.
{_COMMON}output_type: multiple_choice
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
""",
}


def _metadata(config, size, hashes, tasks):
    splits = "\n".join(
        f"    {s}: {{examples: {config.sizes(size)[s]}, sha256: {_q(hashes[s])}}}" for s in SPLITS
    )
    return f"""metadata:
  version: {_q(config.version)}
  pvr_config: {_q(config.name)}
  size: {size}
  splits:
{splits}
  command: {_q(command(tasks))}
"""


def _task(config, output_type, size, hashes):
    name = task_name(config, output_type)
    template = "_pvr_generate_until_yaml" if output_type == "generate_until" else (
        "_pvr_multiple_choice_yaml")  # fmt: skip
    choices = f"doc_to_choice: {_q(list(answers(config.name)))}\n"
    return f"""# PVR {config.name} {config.version} ({size}): {config.description}
include: {template}
task: {name}
dataset_kwargs:
  pvr_data: {config.tfds_name}
{choices if output_type == "multiple_choice" else ""}{_metadata(config, size, hashes, name)}"""


def _group(configs, output_type, size):
    group = GROUPS[output_type]
    metric, filters = {"generate_until": ("exact_match", list(FILTERS)),
                       "multiple_choice": ("acc", ["none"])}[output_type]  # fmt: skip
    tasks = "\n".join(f"  - {task_name(c, output_type)}" for c in configs)
    return f"""# The exported PVR {output_type} tasks; the mean over them, each config counted once.
group: {group}
task:
{tasks}
aggregate_metric_list:
  - metric: {metric}
    filter_list: {_q(filters)}
    aggregation: mean
    weight_by_size: false
metadata:
  version: {_q(catalog.VERSION)}
  size: {size}
  command: {_q(command(group))}
"""


def _readme(configs, size, hashes):
    names = " ".join(c.name for c in configs)
    rows = "\n".join(
        f"| `{task_name(c)}` / `{task_name(c, 'multiple_choice')}` | {c.name} {c.version} | "
        f"{c.sizes(size)['test']:,} | {hashes[c.name]['test']} |"
        for c in configs
    )
    return f"""# PVR tasks for lm-evaluation-harness

Pointer Value Retrieval (Zhang, Raghu, Kleinberg, Bengio 2021, {catalog.HOMEPAGE}) as
lm-evaluation-harness tasks, written by pvr-keras for {HARNESS}:

    python tools/export_dataset.py {names} DIR --format lm-eval --size {size}

Run them (DIR is this folder, wherever it now is; MODEL a Hugging Face model):

    {command(task_name(configs[0]))}
    {command("pvr")}       # every generate_until task
    {command("pvr_mc")}    # every multiple_choice task

`pvr_<config>` generates a reply to the prompt (`{{{{question}}}}`: the rule, the sequence,
`Answer:`), read two ways, each scored with `exact_match` against the answer:
`strict-match` (the whole reply is one number; full-width digits count) and
`flexible-extract` (the number after the reply's last "answer": `Answer: 7`, `the answer is
7`; else the last number in the reply; `replies.py` says the rules). `pvr_<config>_mc`
compares the log-likelihood of each possible answer after the prompt (`acc`), for base
models. The groups `pvr` and `pvr_mc` report the mean over their tasks, each config counted
once, with lm-eval's standard error. The test split is evaluated; the validation split gives the
few-shot examples (`--num_fewshot N`).

| tasks | config | test examples | test SHA-256 (pvr_keras.benchmarks.split_hash) |
| --- | --- | --- | --- |
{rows}

Each task's `metadata` holds its config's version and the SHA-256 of both splits. The data
are `data/<config>/{{validation,test}}.parquet` (columns `question`, `answer`, `metadata`),
read by `lm_eval_hooks.py` (with `replies.py`, which reads a reply; neither needs pvr_keras).

## Citation

```bibtex
{catalog.CITATION}
```
"""


def task_files(configs, *, size, hashes):
    """``{path in the folder: text}`` of every file but the data.

    Args:
        configs: the exported configs (``catalog.Config``; each with a text form and an
            answer set: ``text.answers``).
        size: the size preset exported.
        hashes: ``{config name: {split: SHA-256}}``.
    """
    out = dict(TEMPLATES)
    for config in configs:
        for output_type in GROUPS:
            out[f"{task_name(config, output_type)}.yaml"] = _task(
                config, output_type, size, hashes[config.name])  # fmt: skip
    for output_type, group in GROUPS.items():
        out[f"{group}.yaml"] = _group(configs, output_type, size)
    here = pathlib.Path(__file__).parent
    for hook in HOOKS:
        out[hook] = files.read_plain(here / hook).decode("utf-8")
    out["README.md"] = _readme(configs, size, hashes)
    return out
