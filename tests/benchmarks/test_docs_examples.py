"""The docs' benchmark examples run: a NumPy model trained outside Keras, scored through
tools/benchmark.py --predictions; the LLM scoring script on an oracle and on a bad model;
the leaderboard drawn from model tables."""

import functools
import json
import os

import numpy as np
import pytest

from pvr_keras import benchmarks
from tests import scripts


def test_a_numpy_model_scored_through_the_predictions_path(tmp_path, monkeypatch, capsys):
    example = scripts.load("docs/benchmarks/numpy_softmax.py")
    monkeypatch.setattr(example, "ENTRIES", {"w1": "token/w1"})
    # Its gradient descent in 80 steps of 10, not 300 of 2: every test example still right
    # (with a wider margin, 0.6 against 0.11), in a quarter of the time.
    train = functools.partial(example.train, steps=80, learning_rate=10.0)
    monkeypatch.setattr(example, "train", train)
    table = example.main(tmp_path)
    assert table["entries"]["w1"]["test_accuracy"] == 1.0  # the value at the pointer is linear
    recipe = scripts.load("tools/benchmark.py")
    report = recipe.main(["--predictions", str(tmp_path / "token_w1.npy"), "--config",
                          "token/w1", "--size", "small"])  # fmt: skip
    assert report["accuracy"] == 1.0 and report["examples"] == 2000
    shown = capsys.readouterr().out
    assert "token/w1 1.0.0 test (small, 2,000 examples): accuracy 1.0000" in shown
    # saved with what it was made for, and checked against it
    assert "checked: token_w1.npy.json says the predictions were made for token/w1 1.0.0 " \
           "test (small)" in shown  # fmt: skip
    saved = json.loads((tmp_path / "numpy_softmax.json").read_text())
    assert saved["entries"]["w1"]["sha256"] == report["sha256"]


def test_predictions_of_the_wrong_split_size_are_refused(tmp_path):
    from pvr_keras.errors import ConfigError

    recipe = scripts.load("tools/benchmark.py")
    np.save(tmp_path / "p.npy", np.zeros(2000, np.int64))
    with pytest.raises(ConfigError) as raised:
        recipe.main(["--predictions", str(tmp_path / "p.npy"), "--config", "token/w1"])
    assert str(raised.value).endswith(  # which size has that many rows
        "holds 2,000 rows; token/w1 test (standard) has 10,000 examples; token/w1 test (small) "
        "has 2,000: pass --size small"
    )
    np.save(tmp_path / "p.npy", np.zeros(300_000, np.int8))  # no test split has that many
    with pytest.raises(ConfigError) as raised:
        recipe.main(["--predictions", str(tmp_path / "p.npy"), "--config", "token/w1"])
    assert str(raised.value).endswith(
        "holds 300,000 rows; token/w1 test (standard) has 10,000 examples; token/w1 train "
        "(standard) has 300,000: pass --split train"
    )
    np.save(tmp_path / "p.npy", np.zeros(7, np.int8))
    with pytest.raises(ConfigError) as raised:
        recipe.main(["--predictions", str(tmp_path / "p.npy"), "--config", "token/w1"])
    assert str(raised.value).endswith("holds 7 rows; token/w1 test (standard) has 10,000 examples")
    (tmp_path / "pickle.npy").write_bytes(b"not an array")
    with pytest.raises(ConfigError, match="not a NumPy .npy array"):
        recipe.main(["--predictions", str(tmp_path / "pickle.npy"), "--config", "token/w1"])
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}] * 2000, dtype=object))
    with pytest.raises(ConfigError, match="not a NumPy .npy array"):
        recipe.main(["--predictions", str(tmp_path / "objects.npy"), "--config", "token/w1",
                     "--size", "small"])  # fmt: skip


def _npy_header(path, shape, descr="<f8", size=None):
    """A .npy header alone (128 bytes), the file then made sparse to ``size`` bytes."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": descr, "fortran_order": False, "shape": shape}
        )
    if size is not None:
        os.truncate(path, size)
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: np.save(p, np.array(5.0)), r"holds an array of shape \(\); expected one row"),
        (lambda p: p.write_bytes(b""), "not a NumPy .npy array"),  # EOFError before
        # 128 bytes claiming 142 PiB ("Unable to allocate" before)
        (lambda p: _npy_header(p, (2000, 10**13)), r"claims an array of shape \(2000, "),
        (lambda p: np.save(p, np.ones((2000, 10), complex)), "of real numbers .*complex128"),
        (lambda p: np.save(p, np.ones(2000, "m8[s]")), "of real numbers .*timedelta64"),
        (lambda p: np.save(p, np.ones((2000, 10, 1))), r"shape \(2000, 10, 1\)"),
        (lambda p: _npy_header(p, (2000,), size=128 + 8), "holds 8 bytes of data; its header"),
    ],
    ids=["0-d", "empty", "142-PiB-header", "complex", "timedelta", "3-d", "truncated"],
)  # fmt: skip
def test_bad_predictions_files_are_one_line(tmp_path, make, message):
    from pvr_keras.errors import ConfigError

    recipe = scripts.load("tools/benchmark.py")
    path = tmp_path / "p.npy"
    make(path)
    with pytest.raises(ConfigError, match=message) as raised:
        recipe.main(["--predictions", str(path), "--config", "token/w1", "--size", "small"])
    assert "\n" not in str(raised.value)


def test_a_predictions_file_is_refused_from_its_header(tmp_path):
    # A sparse 2 GB .npy of the wrong length was read in full (2.1 GB, 10 s) before its
    # shape, known from the header, was refused; now nothing past the header is read.
    import tracemalloc

    from pvr_keras.errors import ConfigError

    recipe = scripts.load("tools/benchmark.py")
    path = _npy_header(tmp_path / "big.npy", (2**28,), "<i8", size=128 + 2**31)
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="holds 268,435,456 rows; token/w1 test"):
            recipe.main(["--predictions", str(path), "--config", "token/w1"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_the_llm_scoring_script(tmp_path):
    example = scripts.load("docs/benchmarks/score_llm.py")
    assert example.main(["token/w3", "--limit", "200"])["flexible"] == 1.0
    report = example.main(["boolean/f3", "--limit", "200"])
    assert (report["flexible"], report["strict"]) == (1.0, 0.0)  # "The answer is -1."
    mine = tmp_path / "my_llm.py"
    mine.write_text("def ask(prompt):\n    return 'I would say 0'\n")
    report = example.main(["token/w3", "--model", f"{mine}:ask", "--limit", "500"])
    labels = benchmarks.source("token/w3", "test", size="small")[:500]["label"]
    assert report["flexible"] == pytest.approx((labels == 0).mean())
    assert report["strict"] == 0.0


def test_the_llm_scoring_script_and_text_source_read_the_same_size_by_default():
    import inspect

    example = scripts.load("docs/benchmarks/score_llm.py")
    default = inspect.signature(benchmarks.text_source).parameters["size"].default
    assert default == "small"
    assert inspect.signature(benchmarks.text.TextSource).parameters["size"].default == default
    assert len(benchmarks.text_source("token/w3", "test")) == 2_000
    report = example.main(["token/w1", "--limit", "3"])
    assert report["size"] == default and report["flexible"] == 1.0


def test_the_leaderboard_rows_and_columns(tmp_path):
    claims = scripts.load("tools/generate/results_claims.py")
    folder = tmp_path / "benchmark" / "quick"
    folder.mkdir(parents=True)
    entry = {"test_accuracy": 0.5, "failed": False, "minutes": 2.0}
    (folder / "b.json").write_text(
        json.dumps(
            {
                "kind": "token",
                "label": "zeta",
                "entries": {"w1": entry, "w2": {**entry, "test_accuracy": 0.1, "failed": True}},
            }
        )
    )
    (folder / "a.json").write_text(
        json.dumps(
            {
                "kind": "image",
                "label": "cnn",
                "entries": {"blocks-iid": {**entry, "test_accuracy": 0.98}},
            }
        )
    )
    import importlib

    leaderboard = importlib.import_module("claims.leaderboard")  # beside results_claims
    text = leaderboard.leaderboard(claims.studies(tmp_path))
    rows = text.splitlines()
    assert rows[0].startswith("| model | `token/w1` | `token/w2` |")
    assert rows[2].startswith("| cnn | - |") and "| 0.980 | - | 2.0 |" in rows[2]
    assert rows[3].startswith("| zeta | 0.500 | 0.100 (not fit) | - |") and rows[3].endswith(
        "| 4.0 |"
    )


def readme_block(first_line):
    """The indented code block of docs/benchmarks/README.md that begins with ``first_line``,
    dedented."""
    lines = (scripts.REPO / "docs" / "benchmarks" / "README.md").read_text().splitlines()
    start = lines.index("    " + first_line)
    block = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        block.append(line[4:])
    return "\n".join(block)


def test_the_pytorch_loader_example_loads_whole_batches():
    torch = pytest.importorskip("torch")
    code = readme_block("import numpy as np")
    assert "torch.utils.data.BatchSampler" in code and "batch_size=None" in code
    namespace = {}
    exec(code.replace("num_workers=4", "num_workers=0"), namespace)  # no worker processes here
    loader, source = namespace["loader"], namespace["train"].source
    asked = []  # the indices of each call of the dataset's source

    class Recording:
        def __getitem__(self, index):
            asked.append(list(index))
            return source[index]

        def __len__(self):
            return len(source)

    namespace["train"].source = Recording()
    task = benchmarks.task_of("token/w3")
    epoch = list(loader)
    assert len(epoch) == len(asked) == -(-300_000 // 1024)  # one call per batch
    assert sorted(i for batch in asked for i in batch) == list(range(300_000))  # each index once
    for (tokens, labels), index in zip(epoch[:3], asked, strict=False):
        assert tokens.shape == (1024, 11) and tokens.dtype == labels.dtype == torch.int64
        np.testing.assert_array_equal(tokens.numpy(), source[index]["tokens"])
        np.testing.assert_array_equal(labels.numpy(), task.label(tokens.numpy()))
