"""docs/extending.md's aggregation, as a researcher uses it: the doc's ``my_aggs.py`` trains
through ``recipes/train.py`` on the backend of this test run (CI runs it under each backend:
on JAX the examples come from the JAX rule, on TensorFlow from the tf.data one)."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "extending.md"
TINY = ["--num-examples", "1000", "--test-examples", "300", "--train-eval-examples", "300",
        "--epochs", "2", "--min-steps", "0", "--warmup-epochs", "0",
        "--batch-size", "128"]  # fmt: skip


def doc_file(name):
    """The doc's Python block whose first line is ``# name``."""
    for code in re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S):
        if code.splitlines()[0] == f"# {name}":
            return code
    raise AssertionError(f"docs/extending.md has no {name} block")


@pytest.mark.slow  # one tiny training in a fresh process
def test_an_aggregation_of_your_own_trains_through_train_py(tmp_path, monkeypatch):
    from pvr_keras import legacy
    from pvr_keras.errors import UntrustedCode
    from pvr_keras.kinds.token import tf_data as token
    from pvr_keras.training import evaluate

    (tmp_path / "my_aggs.py").write_text(doc_file("my_aggs.py"))
    out = tmp_path / "run"
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    command = [sys.executable, str(REPO / "recipes" / "train.py"), "--kind", "token",
               "--aggregation", "my_aggs.py:SECOND_MAX", "--window", "2", "--backend", backend,
               *TINY, "--out", str(out)]  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode in (0, 3), done.stderr[-3000:]  # 3: trained, but not to the rule
    record = json.loads((out / "record.json").read_text())
    assert record["status"] == "complete" and record["backend"] == backend
    assert record["config"]["aggregation"] == "my_aggs.py:SECOND_MAX"  # in the identity
    assert len(record["history"]["epoch"]) == 2
    # The record names the rule's file and its hash: it is imported from anywhere, and only
    # when asked (--trust-code), never because a record names it.
    assert record["aggregation_source"] == str((tmp_path / "my_aggs.py").resolve())
    assert record["aggregation_source_sha256"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    unasked = evaluate.load_run(out)  # reads the record and the model: no code of the rule
    with pytest.raises(UntrustedCode):
        unasked.evaluate(num_examples=100)  # labelling would import the rule's file
    finished = evaluate.load_run(out, trust_code=True)
    assert finished.run.aggregation == "my_aggs.py:SECOND_MAX"
    scores = finished.evaluate(num_examples=100)
    assert 0 <= scores["accuracy"] <= 1
    # The run's examples are labelled by the doc's rule: the second largest of the window.
    monkeypatch.chdir(tmp_path)  # where the reference's file is
    run = legacy.from_config(record["config"])
    assert "-w2-SECOND_MAX-" in run.run_id
    x, y = token.token_arrays(run.task, 200, seed=run.seed)
    window = np.stack([x[np.arange(200), 1 + (x[:, 0] + j) % 10] for j in range(2)], axis=1)
    assert (np.sort(window, axis=1)[:, -2] == y).all()
