"""tools/export_dataset.py --format lm-eval: a folder lm-evaluation-harness runs from anywhere
(moved, another working directory, no pvr_keras needed by its files). A model that follows the
PVR rule scores 1.0 on every task and group, both reply filters read replies as
``benchmarks.text`` does, lm-eval's dummy model scores chance on the multiple-choice tasks, and
bad input fails before any work."""

import importlib.util
import math
import sys

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import catalog, hashes, lm_eval_export, text
from tests import scripts
from tests.benchmarks.test_text_extraction import REPLIES

lm_eval = pytest.importorskip("lm_eval", reason="lm-evaluation-harness is not installed")
pytest.importorskip("pyarrow")
from lm_eval.api.model import LM  # noqa: E402  (after the skip)
from lm_eval.tasks import TaskManager  # noqa: E402

# One config of each text kind: one-digit, signed and two-digit answers (10, 3, 40 choices).
NAMES = ("token/w3", "boolean/f3", "chain/l40-h1-4")
LIMIT = 40  # examples a task for the rule-following model


@pytest.fixture(scope="module")
def tool():
    return scripts.load("tools/export_dataset.py")


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # lm_eval runs from elsewhere than the folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory, tool):
    """The exported folder, moved after the export (its files find their data wherever the
    folder is)."""
    root = tmp_path_factory.mktemp("lm_eval")
    tool.main([*NAMES, str(root / "written"), "--format", "lm-eval", "--size", "small"])
    (root / "written").rename(root / "moved")
    return root / "moved"


def evaluate(folder, model, tasks, limit=LIMIT, **kwargs):
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    return lm_eval.simple_evaluate(model=model, tasks=tasks, task_manager=manager, limit=limit,
                                   log_samples=False, **kwargs)  # fmt: skip


def name_of(task):
    """The config of a task (``pvr_token_w3`` or ``pvr_token_w3_mc``)."""
    tfds_name = task.removeprefix("pvr_").removesuffix("_mc")
    [name] = [n for n in NAMES if catalog.get(n).tfds_name == tfds_name]
    return name


class RuleFollower(LM):
    """Reads the sequence from the prompt (the last one: few-shot examples come before it) and
    applies the config's rule; ``reply(label, doc_id)`` is its generated text."""

    def __init__(self, reply=lambda label, doc_id: str(label)):
        super().__init__()
        self.reply = reply

    def _label(self, request):
        sequence = request.args[0].rsplit("Sequence: ", 1)[1].split("\n")[0]
        x = np.array([[int(t) for t in sequence.split()]])
        return int(benchmarks.task_of(name_of(request.task_name)).label(x)[0])

    def generate_until(self, requests, disable_tqdm=False):
        return [self.reply(self._label(r), r.doc_id) for r in requests]

    def loglikelihood(self, requests, disable_tqdm=False):
        # (context, " 7"): the answer's continuation is the likely one
        return [(0.0, True) if r.args[1] == f" {self._label(r)}" else (-9.0, False)
                for r in requests]  # fmt: skip

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return [0.0 for _ in requests]


def tasks_of(output_type):
    return [lm_eval_export.task_name(catalog.get(n), output_type) for n in NAMES]


def test_the_rule_scores_one_on_every_task_and_group(folder):
    results = evaluate(folder, RuleFollower(), ["pvr", "pvr_mc"])
    scores = results["results"]
    for task in tasks_of("generate_until") + ["pvr"]:
        for reading in ("strict-match", "flexible-extract"):
            assert scores[task][f"exact_match,{reading}"] == 1.0, (task, reading)
            assert scores[task][f"exact_match_stderr,{reading}"] == 0.0
    for task in tasks_of("multiple_choice") + ["pvr_mc"]:
        assert scores[task]["acc,none"] == 1.0, task
        assert scores[task]["acc_stderr,none"] == 0.0
    assert scores["pvr"]["sample_len"] == LIMIT * len(NAMES)
    for task in tasks_of("generate_until") + tasks_of("multiple_choice"):
        config = catalog.get(name_of(task))
        assert results["versions"][task] == config.version
        metadata = results["configs"][task]["metadata"]
        assert metadata["pvr_config"] == config.name and metadata["size"] == "small"
        for split in lm_eval_export.SPLITS:
            recorded = hashes.recorded(config.name, split, "small")
            assert metadata["splits"][split]["sha256"] == recorded, (task, split)
        assert metadata["command"] == lm_eval_export.command(task)
    mc = results["configs"][tasks_of("multiple_choice")[1]]
    assert mc["doc_to_choice"] == ["-1", "0", "1"] == list(text.answers("boolean/f3"))


def test_few_shot_examples_come_from_the_validation_split(folder):
    results = evaluate(folder, RuleFollower(), ["pvr_token_w3"], limit=5, num_fewshot=2)
    assert results["results"]["pvr_token_w3"]["exact_match,strict-match"] == 1.0
    assert results["configs"]["pvr_token_w3"]["fewshot_split"] == "validation"


FULL_WIDTH = str.maketrans("-0123456789", "\u2212０１２３４５６７８９")


def test_strict_match_takes_a_bare_number_and_flexible_extract_the_last(folder):
    """A chatty reply on odd documents: strict-match scores the bare ones (half), with
    lm-eval's standard error, the one benchmarks.text reports; flexible-extract scores all.
    Full-width digits (and U+2212) are digits."""

    def reply(label, doc_id):
        return f"{label}".translate(FULL_WIDTH) if doc_id % 2 else f"The answer is {label}."

    scores = evaluate(folder, RuleFollower(reply), ["pvr"])["results"]
    for task in tasks_of("generate_until"):
        assert scores[task]["exact_match,strict-match"] == 0.5, task
        assert scores[task]["exact_match,flexible-extract"] == 1.0, task
        entries = benchmarks.text_source(name_of(task), "test", size="small")[:LIMIT]
        replies = [reply(int(e["answer"]), i) for i, e in enumerate(entries)]
        report = text.score_replies(replies, entries)
        assert report["strict"] == 0.5 and report["flexible"] == 1.0
        stderr = scores[task]["exact_match_stderr,strict-match"]
        assert math.isclose(stderr, report["strict_stderr"]), (stderr, report)
        assert math.isclose(stderr, math.sqrt(0.25 / (LIMIT - 1)))


def test_the_folders_filters_read_each_reply_as_the_library_does(folder):
    """The copied lm_eval_hooks.py (with replies.py beside it; pvr_keras hidden) against
    text.score_answer on every reply of the extraction table."""
    path = folder / "lm_eval_hooks.py"
    spec = importlib.util.spec_from_file_location("exported_hooks", path)
    hooks = importlib.util.module_from_spec(spec)
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "pvr_keras"}
    try:
        for k in saved:
            sys.modules[k] = None  # an import of pvr_keras fails
        spec.loader.exec_module(hooks)
    finally:
        sys.modules.update(saved)
    docs = [{"answer": "7"}] * len(REPLIES)
    resps = [[reply] for reply in REPLIES]
    for function, reading in ((hooks.strict_match, 0), (hooks.flexible_extract, 1)):
        got = [r == ["7"] for r in function(resps, docs)]
        assert got == [bool(score[reading]) for score in REPLIES.values()], function.__name__
    assert hooks.strict_match([["\u22121", " -01\n"]], [{}]) == [["-1", "-1"]]


def test_the_data_are_the_text_form(folder):
    import pyarrow.parquet as pq

    for name in NAMES:
        for split in lm_eval_export.SPLITS:
            path = folder / lm_eval_export.data_folder(catalog.get(name)) / f"{split}.parquet"
            rows = pq.read_table(path).to_pylist()
            assert rows == benchmarks.text_source(name, split, size="small")[:], (name, split)


def test_the_dummy_model_scores_chance_on_multiple_choice(folder):
    """lm-eval's dummy model picks a choice at random (uniformly: the largest of k random
    log-likelihoods), so on N examples its accuracy is Binomial(N, 1/k) / N whatever the
    answers; the bound is 5 standard errors (a chance of failing below 1e-6 a task; lm-eval
    seeds Python's random, so the run is the same each time). Its reply "lol" gives no
    number: 0 under both filters."""
    n = 300
    scores = evaluate(folder, "dummy", ["pvr_mc", "pvr"], limit=n)["results"]
    for task in tasks_of("multiple_choice"):
        p = 1 / len(text.answers(name_of(task)))
        bound = 5 * math.sqrt(p * (1 - p) / n)
        assert abs(scores[task]["acc,none"] - p) <= bound, (task, scores[task], p, bound)
    for task in tasks_of("generate_until"):
        assert scores[task]["exact_match,strict-match"] == 0.0
        assert scores[task]["exact_match,flexible-extract"] == 0.0


def test_the_readme_gives_the_commands_and_each_tasks_hash(folder):
    readme = (folder / "README.md").read_text()
    lines = {line.split("#")[0].strip() for line in readme.splitlines()}
    for tasks in (tasks_of("generate_until")[0], "pvr", "pvr_mc"):
        assert lm_eval_export.command(tasks) in lines, tasks
    for task in tasks_of("generate_until"):  # the table: a task's row, its test split's hash
        [row] = [line for line in readme.splitlines() if line.startswith(f"| `{task}` ")]
        assert hashes.recorded(name_of(task), "test", "small") in row, row


@pytest.mark.slow  # the command line indexes lm-eval's thousands of built-in tasks (~10 s)
def test_the_recorded_command_runs(folder, monkeypatch, capsys):
    """The README's and the metadata's command, with lm-eval's dummy model for MODEL, run by
    lm-eval's own command line (in this process), beside its built-in tasks."""
    from lm_eval._cli import HarnessCLI

    command = lm_eval_export.command("pvr_mc").replace("--model hf --model_args pretrained=MODEL",
                                                      "--model dummy")  # fmt: skip
    argv = command.replace("DIR", str(folder)).split() + ["--limit", "3"]
    monkeypatch.setattr(sys, "argv", argv)
    cli = HarnessCLI()
    cli.execute(cli.parse_args())
    table = capsys.readouterr().out
    assert all(f"|{task}" in table.replace(" - ", "") for task in tasks_of("multiple_choice"))


def test_bad_input_fails_with_one_line_before_any_work(tmp_path, tool, no_work, capsys):
    cases = {
        ("token/w3", "token/w33"): "unknown benchmark config 'token/w33'",
        ("token/w3", "block/mnist-2x2"): "block/mnist-2x2: the block kind has no text form",
        ("token/w3", "boolean/f3", "token/w3:1.0.0"): "token/w3:1.0.0 is named twice",
    }
    for names, message in cases.items():
        assert tool.run([*names, str(tmp_path / "out"), "--format", "lm-eval"]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and message in err[0], err
    assert not any(tmp_path.iterdir())
