"""What lm-evaluation-harness calls in an exported PVR task folder (``tools/export_dataset.py
NAME ... DIR --format lm-eval``): the loader of a config's Parquet files and the two reply
filters, ``strict-match`` and ``flexible-extract``.

The export copies this file as it is into DIR, beside ``replies.py``; the task YAML names its
functions (``!function lm_eval_hooks.load``), which lm-eval finds beside the YAML, so the
folder can be moved and ``lm_eval`` run from any directory. It imports nothing of pvr_keras
(only ``replies.py`` beside it, by path), and ``datasets`` and ``pyarrow`` (lm-eval's own
dependencies) when a task loads its data.
"""

import importlib.util
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
INVALID = "[invalid]"  # a reply that gives no number: never an answer


def _replies():
    """``replies.py`` beside this file, imported by path (lm-eval imports this file by path
    too, outside any package)."""
    spec = importlib.util.spec_from_file_location("pvr_replies", HERE / "replies.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


extract_answer = _replies().extract_answer


def load(pvr_data, **metadata):
    """The splits of one exported config, ``{split: datasets.Dataset}``, read from
    ``data/<pvr_data>/*.parquet`` beside this file (the task's ``custom_dataset``; lm-eval
    passes the task's ``metadata`` too, unused). Read into memory: nothing is downloaded or
    written to the Hugging Face cache."""
    import datasets
    import pyarrow.parquet as pq

    if not isinstance(pvr_data, str) or pathlib.PurePath(pvr_data).name != pvr_data:
        raise ValueError(f"pvr_data must be a folder name under {HERE / 'data'}; received "
                         f"{pvr_data!r}")  # fmt: skip
    folder = HERE / "data" / pvr_data
    paths = sorted(folder.glob("*.parquet"))
    if not paths:
        raise FileNotFoundError(f"no Parquet files in {folder}: export the task folder again")
    return datasets.DatasetDict({p.stem: datasets.Dataset(pq.read_table(p)) for p in paths})


def _read(replies, extraction):
    read = (extract_answer(reply, extraction) for reply in replies)
    return [INVALID if value is None else str(value) for value in read]


def strict_match(resps, docs):
    """lm-eval's ``custom`` filter ``strict-match``: each reply, when the whole of it is one
    number (spaces around it apart; NFKC first, so full-width digits count), as that number
    in plain digits (``" -01\\n"`` -> ``"-1"``); otherwise ``"[invalid]"``."""
    return [_read(replies, "strict") for replies in resps]


def flexible_extract(resps, docs):
    """lm-eval's ``custom`` filter ``flexible-extract``: the number after each reply's last
    "answer" (``"Answer: 7 (p = 3)"`` -> ``"7"``), else its last number (``"3 + 4 = 7"`` ->
    ``"7"``), in plain digits, or ``"[invalid]"`` (``replies.extract_answer``)."""
    return [_read(replies, "flexible") for replies in resps]
