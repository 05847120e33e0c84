"""PVR's text configs as Inspect AI tasks, run end to end on Inspect's mock model: a reply the
rule makes scores 1 on both readings, a chatty one only on the flexible reading, Inspect's own
placeholder reply 0; the per-config tasks are found by ``file.py@name`` and by package name.

Nothing here reaches the network: sockets to other hosts are refused, and ``tiktoken`` (which
the mock model calls to count tokens, and which downloads its tables on first use) is a stand-in.
"""

import os
import pathlib
import socket
import subprocess
import sys
import types

import numpy as np
import pytest

pytest.importorskip(
    "inspect_ai", reason='the Inspect tasks need inspect_ai: pip install -e ".[llm]"'
)

import inspect_ai  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402

from pvr_keras import benchmarks  # noqa: E402
from pvr_keras.benchmarks import catalog, inspect_tasks, text  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
MODULE = "pvr_keras/benchmarks/inspect_tasks.py"

# For subprocesses (on PYTHONPATH): sitecustomize refuses sockets to other hosts, tiktoken
# counts a token per 4 characters without its downloaded tables.
SITECUSTOMIZE = """
import socket
_connect = socket.socket.connect
def _refuse(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"tests never use the network (connect to {address})")
    return _connect(self, address)
socket.socket.connect = _refuse
"""
TIKTOKEN = """
class _Encoding:
    def encode(self, text, disallowed_special=()):
        return [0] * (len(text) // 4)
def get_encoding(name):
    return _Encoding()
"""
# Inspect's settings from the environment that would change a run or send something out.
INSPECT_ENV = ("INSPECT_TELEMETRY", "INSPECT_API_KEY_OVERRIDE", "INSPECT_REQUIRED_HOOKS",
               "INSPECT_EVAL_NOTIFICATION", "INSPECT_EVAL_MODEL", "INSPECT_LOG_DIR",
               "INSPECT_EVAL_LIMIT", "INSPECT_EVAL_EPOCHS")  # fmt: skip


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """Inspect in this process, off the network, its logs, traces and caches under tmp_path
    (and no ``.env`` above the working directory)."""
    for name in INSPECT_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    connect = socket.socket.connect

    def refuse(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"a test tried to reach {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", refuse)
    stand_in = types.ModuleType("tiktoken")
    exec(TIKTOKEN, stand_in.__dict__)
    monkeypatch.setitem(sys.modules, "tiktoken", stand_in)
    return tmp_path


def _run(task, tmp_path, reply=None):
    """``inspect_ai.eval`` of one task on the mock model (``reply(prompt) -> text``; None:
    the mock's own placeholder reply); the log."""
    args = {}
    if reply is not None:
        args["custom_outputs"] = lambda messages, *_: ModelOutput.from_content(
            "mockllm/model", reply(messages[-1].text)
        )
    model = get_model("mockllm/model", **args)
    [log] = inspect_ai.eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    return log


def _metrics(log):
    """``{reading: (accuracy, stderr)}`` of a log."""
    return {s.name: (s.metrics["accuracy"].value, s.metrics["stderr"].value)
            for s in log.results.scores}  # fmt: skip


def _rule(config):
    """The config's answer to a prompt, by its task's NumPy rule on the prompt's sequence."""
    task = benchmarks.task_of(config)

    def answer(prompt):
        sequence = prompt.split("Sequence: ")[1].split("\n")[0]
        x = np.array([[int(v) for v in sequence.split()]])
        return int(np.asarray(task.label(x)).reshape(-1)[0])

    return answer


@pytest.mark.parametrize("config", ["token/w3", "boolean/f3", "chain/l40-h1-4"])
def test_the_rules_answer_scores_one_on_both_readings(offline, config):
    # The validation split: its first six Boolean answers are 0, 1 and -1 (the test split's,
    # the cube in row order, all 1).
    rule = _rule(config)
    task = inspect_tasks.TASKS[config](split="validation", limit=6)
    log = _run(task, offline, lambda p: str(rule(p)))
    assert _metrics(log) == {"strict": (1.0, 0.0), "flexible": (1.0, 0.0)}
    assert log.eval.task_version == catalog.get(config).version
    assert log.eval.dataset.samples == 6 and len({s.target for s in log.samples}) >= 3
    entries = text.text_source(config, "validation", size="small")
    for sample in log.samples:
        entry = entries[sample.id]
        assert sample.input == entry["question"] and sample.target == entry["answer"]
        assert sample.metadata == entry["metadata"]
        assert sample.metadata["config"] == config and sample.metadata["index"] == sample.id
        for reading in text.EXTRACTIONS:
            assert sample.scores[reading].answer == entry["answer"]


def test_a_chatty_right_answer_is_right_only_when_read_flexibly(offline):
    rule = _rule("token/w3")
    log = _run(inspect_tasks.pvr_token_w3(limit=4), offline, lambda p: f"The answer is {rule(p)}.")
    assert _metrics(log) == {"strict": (0.0, 0.0), "flexible": (1.0, 0.0)}
    for sample in log.samples:
        assert sample.scores["strict"].answer is None  # the reply is not one number
        assert sample.scores["flexible"].answer == sample.target


def test_the_mock_models_own_reply_scores_zero(offline):
    """Not chance (0.1 on token/w3): "Default output from mockllm/model" holds no number, so
    neither reading finds an answer in it."""
    log = _run(inspect_tasks.pvr(config="token/w3", limit=3), offline)
    assert log.samples[0].output.completion == "Default output from mockllm/model"
    assert _metrics(log) == {"strict": (0.0, 0.0), "flexible": (0.0, 0.0)}
    assert all(s.answer is None for sample in log.samples for s in sample.scores.values())


def test_accuracy_and_stderr_are_the_libraries_own(offline):
    """Mixed replies (right, right but chatty, wrong, no number): Inspect's accuracy and
    standard error of each reading are ``text.score_replies``'s on the same replies."""
    rule = _rule("token/w2")

    def reply(prompt):
        right = rule(prompt)
        kind = sum(map(ord, prompt)) % 4
        return (str(right), f"So: {right}", str((right + 1) % 10), "no idea")[kind]

    log = _run(inspect_tasks.pvr_token_w2(limit=40), offline, reply)
    entries = text.text_source("token/w2", "test", size="small")
    samples = sorted(log.samples, key=lambda s: s.id)
    report = text.score_replies([s.output.completion for s in samples],
                                [entries[s.id] for s in samples])  # fmt: skip
    metrics = _metrics(log)
    for reading in text.EXTRACTIONS:
        assert 0 < report[reading] < 1
        assert metrics[reading] == pytest.approx((report[reading], report[f"{reading}_stderr"]))
    assert report["strict"] < report["flexible"]


def test_every_text_config_has_its_task_by_name():
    from inspect_ai._util.registry import registry_info

    assert list(inspect_tasks.TASKS) == text.names() and len(text.names()) >= 31
    for config, task_function in inspect_tasks.TASKS.items():
        name = "pvr_" + config.replace("/", "_").replace("-", "_")
        assert getattr(inspect_tasks, name) is task_function
        assert registry_info(task_function).name.split("/")[-1] == name
        samples = list(task_function(split="validation", limit=2).dataset)
        entries = text.text_source(config, "validation", size="small")[:2]
        assert [(s.input, s.target) for s in samples] == [
            (e["question"], e["answer"]) for e in entries
        ]


@pytest.mark.parametrize(
    "args, message",
    [({"config": "token/w9"}, "unknown benchmark config 'token/w9'"),
     ({"config": "block/mnist-2x2"}, "the block kind has no text form"),
     ({"split": "dev"}, "split must be one of train, validation, test"),
     ({"size": "tiny"}, "size must be one of standard, small"),
     ({"limit": 0}, "limit must be")],
)  # fmt: skip
def test_a_bad_argument_is_refused_by_name(args, message):
    with pytest.raises(ValueError, match=message):
        inspect_tasks.pvr(**args)


def _inspect(tmp_path, *argv, installed=False):
    """``inspect`` (``python -m inspect_ai``) in a subprocess off the network: in the repo, or
    (``installed``) in another folder with pvr_keras found only as the installed package."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (site / "tiktoken.py").write_text(TIKTOKEN)
    env = {k: v for k, v in os.environ.items() if k not in INSPECT_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + ([] if installed else [str(REPO)]))
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "inspect_ai", *argv]
    cwd = tmp_path if installed else REPO
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _log(folder):
    [path] = list(folder.glob("*.eval"))
    return read_eval_log(str(path))


def test_inspect_eval_finds_a_config_task_in_the_file(tmp_path):
    done = _inspect(tmp_path, "eval", f"{MODULE}@pvr_boolean_f3_frozen0", "--model",
                    "mockllm/model", "--limit", "3", "--log-dir", str(tmp_path / "logs"),
                    "--display", "none")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    log = _log(tmp_path / "logs")
    assert (log.status, log.eval.task, len(log.samples)) == ("success", "pvr_boolean_f3_frozen0", 3)
    assert log.eval.task_version == "1.0.0"
    assert [s.name for s in log.results.scores] == ["strict", "flexible"]
    assert log.samples[0].metadata["config"] == "boolean/f3-frozen0"


def test_a_package_entry_point_exposes_the_tasks_by_package_name(tmp_path):
    """The project's ``[project.entry-points.inspect_ai] pvr_keras =
    "pvr_keras.benchmarks.inspect_tasks"`` makes ``inspect eval pvr_keras/<task>`` work from
    a folder other than the source checkout once pvr_keras is installed (``pip install -e .``;
    in the checkout, setuptools' ``pvr_keras.egg-info`` there hides the editable install's
    metadata from Inspect, which then names the tasks without the package)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("pvr-keras")
    except metadata.PackageNotFoundError:
        pytest.skip("pvr_keras is not installed here (pip install -e .)")
    found = [e.value for e in dist.entry_points if e.group == "inspect_ai"]
    assert found == ["pvr_keras.benchmarks.inspect_tasks"]
    done = _inspect(tmp_path, "eval", "pvr_keras/pvr", "-T", "config=token/w1", "-T", "limit=2",
                    "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs"),
                    "--display", "none", installed=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    log = _log(tmp_path / "logs")
    assert (log.eval.task_args["config"], len(log.samples)) == ("token/w1", 2)


def test_pvr_keras_never_imports_inspect_and_says_how_to_install_it():
    code = """
import sys
import pvr_keras
from pvr_keras import benchmarks
from pvr_keras.benchmarks import catalog, text
text.text_source("token/w1", "test", size="small")[0]
assert "inspect_ai" not in sys.modules, "pvr_keras imported inspect_ai"
sys.modules["inspect_ai"] = None  # as where it is not installed
try:
    import pvr_keras.benchmarks.inspect_tasks
except ModuleNotFoundError as error:
    print(error)
"""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == (
        "pvr_keras.benchmarks.inspect_tasks needs Inspect AI (the inspect_ai package), which is "
        'not installed here: pip install -e ".[llm]" (or pip install inspect-ai)'
    )
