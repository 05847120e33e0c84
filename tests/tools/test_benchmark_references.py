"""``tools/benchmark.py --reference DIR`` reads the committed tables of other models as
untrusted, before any training: a FIFO, a link, JSON nested deep, JSON that is not a table or
gives an accuracy out of [0, 1] is one line and exit 2, with nothing trained or written."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _table(**changes):
    table = {"suite": "quick", "kind": "token", "label": "theirs", "model": "mixer",
             "entries": {"w1": {"test_accuracy": 0.9, "train_accuracy": 1.0}}}  # fmt: skip
    return json.dumps({**table, **changes})


PLANTS = {
    "fifo": lambda path: os.mkfifo(path),
    "link": lambda path: path.symlink_to(path.parent / "elsewhere.txt"),
    "deep": lambda path: path.write_text("[" * 100_000 + "]" * 100_000),
    "list": lambda path: path.write_text("[1, 2]"),
    "accuracy": lambda path: path.write_text(_table(entries={"w1": {"test_accuracy": 7.5}})),
    "huge": lambda path: path.write_text(_table(entries={"w1": {"test_accuracy": 10**400}})),
    "no label": lambda path: path.write_text(_table(label=5)),
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_a_bad_reference_table_is_one_line_before_any_training(tmp_path, plant):
    reference = tmp_path / "reference" / "quick"
    reference.mkdir(parents=True)
    (reference / "elsewhere.txt").write_text(_table())
    (reference / "good.json").write_text(_table(label="good"))
    PLANTS[plant](reference / "bad.json")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "benchmark.py"), "--reference",
         str(tmp_path / "reference"), "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "bad.json" in done.stderr, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (out / "results.jsonl").exists()
