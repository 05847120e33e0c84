"""Every recipe checks its flags before TensorFlow loads or a file is written; run folders are
never modified by a refused run; one process per run folder; exit status says how it went."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from pvr_keras import cli
from pvr_keras.cli import runner
from pvr_keras.errors import UnsafePath
from pvr_keras.training.records import RunLock

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "recipes"))
import token_pvr  # noqa: E402

TINY = ["--num-examples", "3000", "--test-examples", "500", "--min-steps", "0"]

# (recipe, flags, part of the message): each must fail before TensorFlow is imported.
BAD = [
    ("tune", ["--max-trials", "0"], "--max-trials must be a positive integer"),
    ("fast_slow", ["--threshold", "2"], "--threshold must be in (0, 1]"),
    ("fast_slow", ["--fast-within", "2", "--slow-after", "1.5"], "--fast-within < --slow-after"),
    ("block_iid", ["--width", "0"], "width must be a number > 0"),
    ("block_iid", ["--width", "1.5"], "width of resnet18 is its width (an integer)"),
    ("block_holdout", ["--epochs", "0"], "epochs must be a positive integer"),
    ("image_sequence", ["--holdout", "2"], "holdout must be in 0..window! = 0..1"),
    ("token_pvr", ["--learning-rate", "nan"], "--learning-rate must be a finite number"),
    ("token_pvr", ["--learning-rate", "-1"], "learning_rate must be a finite number > 0"),
    ("token_pvr", ["--window", "2", "--holdout", "3"], "holdout must be in 0..window! = 0..2"),
    ("token_pvr", ["--width", "0"], "width must be a number > 0"),
    ("token_pvr", ["--model", "nets.py:tiny"], "no such file 'nets.py'"),
    ("token_pvr", ["--model", "resnet18"], "received 'resnet18' (a model of kind image)"),
    ("token_pvr", ["--out", "runs/{nope}"], "names a placeholder that is not a field"),
    ("token_pvr", ["--holdout-values", "1", "1"], "distinct"),
    ("token_sweep", ["--sizes", "0"], "num_examples"),
    ("token_sweep", ["--shard", "3/2"], "shard"),
    ("noise_sensitivity", ["--num-deltas", "1"], "num_deltas must be at least 2"),
    # Values that passed the checks once and failed later, with a traceback or worse.
    ("token_pvr", ["--num-examples", str(10**20)], "num_examples must be an integer in"),
    ("token_pvr", ["--seed", str(2**64)], "seed must be an integer in [0, 9223372036854775808)"),
    ("token_pvr", ["--width", "1e6"], "more than this machine's"),
    ("token_pvr", ["--out", ""], "--out must name a folder; received an empty name"),
    ("block_iid", ["--width", "100000"], "more than this machine's"),
    ("token_sweep", ["--widths", "0", "5"], "--model.widths must be positive integers"),
    ("token_sweep", ["--sizes", str(10**20)], "num_examples must be an integer in"),
    ("fast_slow", ["--widths", "-1"], "--model.widths must be positive integers"),
    ("tune", ["--tuner-id", "tuner0"], "needs both a tuner id"),
    ("tune", ["--project", "../../elsewhere"], "--project must be a name, not a path"),
    ("evaluate", ["RUN", "--json", "/nonexistent/rows.json"], "no folder /nonexistent"),
    ("boolean_holdout", ["--bits", "11"], "frozen bits must be in 0..10"),
    ("boolean_holdout", ["--bits", "2", "2"], "bits must be distinct"),
    ("boolean_holdout", ["--pointer-bits", "5"], "d must be at most 20; this task has d = 37"),
    ("boolean_holdout", ["--pointer-bits", "0"], "pointer_bits must be a positive integer"),
    ("boolean_holdout", ["--window", "9"], "window must be between 1 and the 8 value bits"),
    ("boolean_holdout", ["--seeds", "1", "1"], "seeds must be distinct"),
    ("boolean_holdout", ["--track-every", "0"], "--track-every must be a positive integer"),
    ("boolean_holdout", ["--model", "mlp"], "received 'mlp' (a model of kind token)"),
    # Issue 35: values that were tracebacks or silently accepted.
    ("token_pvr", ["--width", "1e308"], "width must be at most 1073741824"),
    ("token_pvr", ["--batch-size", str(2**70)], "batch_size must be below 2**31"),
    ("token_pvr", ["--epochs", str(10**23)], "epochs must be below 2**31"),
    ("token_pvr", ["--min-steps", str(10**23)], "min_steps must be below 2**31"),
    ("train", ["--kind", "missing.py:X"], "no such file 'missing.py'"),
    ("block_iid", ["--data-dir", ""], "data_dir must be a folder path"),
    (
        "boolean_holdout",
        ["--pointer-bits", "64"],
        "bits in all (p pointer bits + 2**p value bits); received pointer_bits=64",
    ),
]


TOOLS = ("evaluate", "benchmark")  # scripts of tools/, not recipes/


# One process runs every case (each in a folder of its own), recording after each whether
# TensorFlow has been imported yet: a case that imports it is the first to see it there, so
# each is checked as in a process of its own, without ~45 interpreter starts. A case that
# starts its work instead of refusing it ends the process (after 60 s), failing the rest.
BAD_CASES = """
import contextlib, importlib, io, json, os, sys, threading
from pvr_keras.cli import ConfigError
for recipe, argv, path, folder in json.loads(sys.argv[1]):
    os.chdir(folder)
    sys.path.insert(0, path)
    printed, error, other = io.StringIO(), None, "no error"
    watchdog = threading.Timer(60, os._exit, (3,))
    watchdog.start()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            importlib.import_module(recipe).main(argv)
    except ConfigError as err:
        error = str(err)
    except BaseException as err:  # noqa: B036  (a SystemExit too: recorded for its case)
        other = f"{type(err).__name__}: {err}"
    watchdog.cancel()
    sys.path.remove(path)
    result = {"error": error, "other": other, "printed": printed.getvalue()[-2000:],
              "tensorflow": "tensorflow" in sys.modules}
    print(json.dumps(result), flush=True)
"""


@pytest.fixture(scope="module")
def bad_flag_results(tmp_path_factory):
    """[(folder, result or None)] of the ``BAD`` cases, in order, run in one fresh process
    (None: the process ended before the case)."""
    cases = []
    for index, (recipe, flags, _) in enumerate(BAD):
        folder = tmp_path_factory.mktemp(f"bad{index}")
        argv = [a.replace("RUN", str(REPO / "docs")) for a in flags]
        if "--out" not in argv and recipe not in ("tune", "evaluate"):
            argv += ["--out", str(folder / "out")]
        path = str(REPO / ("tools" if recipe in TOOLS else "recipes"))
        cases.append((recipe, argv, path, str(folder)))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", BAD_CASES, json.dumps(cases)], cwd=cases[0][3], env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results += [None] * (len(cases) - len(results))
    ended = f"the process ended (exit {done.returncode}) before this case: {done.stderr[-2000:]}"
    pairs = zip(cases, results, strict=True)
    return [(pathlib.Path(case[3]), result or {"other": ended}) for case, result in pairs]


@pytest.mark.parametrize(("recipe", "flags", "message"), BAD, ids=lambda v: str(v)[:40])
def test_bad_flags_fail_before_tensorflow_and_write_nothing(
    recipe, flags, message, bad_flag_results
):
    folder, result = bad_flag_results[BAD.index((recipe, flags, message))]
    assert result.get("error") is not None, result  # a ConfigError, not another error
    assert message in result["error"], result["error"]
    assert not result["tensorflow"]  # not imported by this case or one before it
    assert not (folder / "out").exists() and not (folder / "runs").exists()


def test_command_line_bad_flag_is_a_usage_error(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "recipes" / "tune.py"), "--max-trials", "0"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    wanted = "tune.py: error: --max-trials must be a positive integer; received 0"
    assert done.stderr.strip() == wanted


def test_choices_are_argparse_choices(capsys):
    with pytest.raises(SystemExit):
        token_pvr.main(["--aggregation", "sum"])
    assert "invalid choice: 'sum'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        token_pvr.main(["--backend", "torch"])


def test_help_shows_each_presets_values(capsys):
    with pytest.raises(SystemExit):
        token_pvr.main(["--help"])
    flat = " ".join(capsys.readouterr().out.split())
    # A run field takes several values (a grid): "--epochs EPOCHS [EPOCHS ...]".
    assert "EPOCHS ...] epochs (at least min_steps steps) (quick: 20; paper: 200)" in flat
    assert "NUM_EXAMPLES ...] training set size (quick: 50000; paper: 1000000)" in flat
    assert "(default: from --preset)" not in flat
    with pytest.raises(SystemExit):
        token_pvr.main(["--model", "mixer", "--help"])  # each model's quick preset
    flat = " ".join(capsys.readouterr().out.split())
    assert "a CNN's base channels (quick: 0.25; paper: 1.0)" in flat


# A tiny finished token_pvr run, shared (tests that damage it copy it first); it trains with
# --optimizer and --tensorboard, which test_user_callbacks_optimizer_and_tensorboard checks.
FINISHED = [*TINY, "--epochs", "1", "--optimizer", "adagrad", "--tensorboard"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The folder of the ``FINISHED`` run."""
    out = tmp_path_factory.mktemp("finished") / "runs" / "r"
    token_pvr.main([*FINISHED, "--out", str(out)])
    return out


def test_refused_rerun_leaves_the_finished_folder_as_it_was(finished, tmp_path):
    out = _copy(finished, tmp_path)
    token_pvr.main([*FINISHED, "--out", str(out)])  # complete: config.json names the copy
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(cli.ConfigError, match=r"another configuration \(seed: 0 there, 1 asked"):
        token_pvr.main([*FINISHED, "--seed", "1", "--out", str(out)])
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before
    # The same command again: not trained again, nothing rewritten.
    token_pvr.main([*FINISHED, "--out", str(out)])
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_one_process_per_run_folder(tmp_path):
    out = tmp_path / "run"
    with RunLock(out):  # another process training into it
        with pytest.raises(RuntimeError, match=f"{out} is in use by pid {os.getpid()}"):
            token_pvr.main([*TINY, "--epochs", "1", "--out", str(out)])
        assert not (out / "record.json").exists()
    token_pvr.main([*TINY, "--epochs", "1", "--out", str(out)])  # free again
    assert (out / "record.json").exists()


@pytest.mark.slow
def test_failed_run_exits_3_and_the_output_is_quiet(tmp_path):
    """From the command line, as a user runs it: a run below the failure threshold is
    recorded (complete, failed), not dropped, and exits 3; no TensorFlow start-up lines and
    no NOT_FOUND warnings in the output."""
    out = tmp_path / "run"
    cmd = [sys.executable, str(REPO / "recipes" / "token_pvr.py"), *TINY, "--epochs", "2",
           "--learning-rate", "1e-9", "--out", str(out)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    record = json.loads((out / "record.json").read_text())
    assert record["failed"] is True and record["status"] == "complete"
    assert record["final"]["train_eval_accuracy"] < 0.2
    assert done.returncode == 3, done.stderr[-2000:]
    both = done.stdout + done.stderr
    assert "NOT_FOUND" not in both and "Failed to find definition" not in both
    assert "absl::InitializeLog" not in both and "I0000" not in both and "W0000" not in both
    assert "(FAILED run)" in done.stdout


@pytest.mark.parametrize("download", [True, False])
def test_image_recipe_without_data_stops_before_writing(tmp_path, download):
    import block_iid

    from pvr_keras.errors import DataNotPrepared

    out = tmp_path / "out"
    flags = ["--data-dir", str(tmp_path / "no_data"), "--out", str(out)]
    match = "cannot be reached" if download else "download=False: not downloading"
    with pytest.raises(DataNotPrepared, match=match):
        block_iid.main([*flags, *([] if download else ["--no-download"])])
    assert not out.exists() and not (tmp_path / "no_data").exists()


def test_user_callbacks_optimizer_and_tensorboard(finished, tmp_path):
    import keras

    from pvr_keras import training

    seen = []

    class Epochs(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((epoch, round(float(logs["loss"]), 6)))

    # training.train passes user callbacks through to fit, after its own.
    from pvr_keras.runconfig import Run

    run = Run.make("token", num_examples=2048, test_examples=300, epochs=2, min_steps=0,
                   warmup_epochs=0)  # fmt: skip
    record = training.train(run, tmp_path / "api", callbacks=[Epochs()], verbose=0)
    assert [e for e, _ in seen] == [0, 1]
    assert [loss for _, loss in seen] == [round(v, 6) for v in record["history"]["train_loss"]]
    # The recipe (FINISHED): --optimizer reaches the recipe, --tensorboard writes event files.
    record = json.loads((finished / "record.json").read_text())
    assert record["recipe"]["optimizer"] == "adagrad"
    assert list((finished / "tensorboard").rglob("events.out.tfevents.*"))
    assert "tensorboard" not in record["config"]  # how it ran, not what it computed


def test_tensorboard_flag_without_the_package(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tensorboard" else real(name, *a),
    )
    with pytest.raises(cli.ConfigError, match=r'pip install -e ".\[tensorboard\]"'):
        token_pvr.main([*TINY, "--tensorboard", "--out", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_an_out_folder_inside_or_above_another_run_is_refused(finished, tmp_path):
    """A run trained inside another run's folder would be deleted with its checkpoint; one
    above it, or a sweep in it, would mix their files."""
    import token_sweep

    before = sorted(p.relative_to(finished) for p in finished.rglob("*"))
    cases = [
        (finished / "checkpoint", r"is inside .*r, a run folder \(record.json\)"),
        (finished.parent, "holds another run, sweep or recipe folder"),
    ]
    for out, message in cases:
        with pytest.raises(cli.ConfigError, match=message):
            token_pvr.main([*TINY, "--epochs", "1", "--out", str(out)])
        assert not (out / "record.json").exists() or out == finished
    with pytest.raises(cli.ConfigError, match="is a run's folder .record.json., not a sweep"):
        token_sweep.main(["--windows", "1", "--sizes", "500", "--out", str(finished)])
    (tmp_path / "file").write_text("x")
    for out, message in ((tmp_path / "file", "is a file"), (tmp_path / "file" / "o", "is under")):
        with pytest.raises(cli.ConfigError, match=message):
            token_pvr.main([*TINY, "--out", str(out)])
    assert sorted(p.relative_to(finished) for p in finished.rglob("*")) == before


def test_a_link_at_the_runs_checkpoint_is_refused_before_any_work(tmp_path, monkeypatch):
    # Else the run trains its first epoch and crashes swapping its checkpoint over the link.
    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoint").symlink_to(tmp_path)
    monkeypatch.setattr(runner, "start", lambda *a, **k: pytest.fail("the engine was chosen"))
    with pytest.raises(UnsafePath, match="checkpoint is a symbolic link"):
        token_pvr.main([*TINY, "--out", str(out)])
    assert [p.name for p in out.iterdir()] == ["checkpoint"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_an_out_folder_this_user_cannot_write_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(cli.ConfigError, match="is not writable by this user"):
        token_pvr.main([*TINY, "--out", str(locked / "run")])


def _copy(folder, tmp_path):
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


@pytest.mark.parametrize(
    "damage, message",
    [
        ("record garbage", "record.json is not a whole JSON record"),
        ("record list", "record.json holds a JSON list, not a run record"),
        ("record without config", "record.json has no config"),
        ("model empty", "model.keras is not a whole saved Keras model"),
        ("model truncated", "model.keras is not a whole saved Keras model"),
        ("model overwritten", "model.keras was changed after it was saved"),
    ],
)
def test_a_damaged_run_folder_is_an_error_naming_the_file(finished, tmp_path, damage, message):
    from pvr_keras import training
    from pvr_keras.errors import DamagedFile

    run = _copy(finished, tmp_path)
    record, model = run / "record.json", run / "model.keras"
    if damage == "record garbage":
        record.write_bytes(record.read_bytes()[:200])
    elif damage == "record list":
        record.write_text("[1, 2]")
    elif damage == "record without config":
        record.write_text(json.dumps({k: v for k, v in json.loads(record.read_text()).items()
                                      if k != "config"}))  # fmt: skip
    elif damage == "model empty":
        model.write_bytes(b"")
    elif damage == "model truncated":
        model.write_bytes(model.read_bytes()[:3000])
    else:  # the archive stays readable; a stored weight changes: it would load silently
        data = bytearray(model.read_bytes())
        index = data.find(b"model.weights.h5")
        data[index + 2000 : index + 2004] = b"\x7f\x7f\x7f\x7f"
        model.write_bytes(bytes(data))
    with pytest.raises(DamagedFile, match=message):
        training.load_run(run)


def test_evaluate_on_a_damaged_model_says_so_in_one_line(finished, tmp_path):
    run = _copy(finished, tmp_path)
    (run / "model.keras").write_bytes(b"")
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "evaluate.py"), str(run)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )  # fmt: skip
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert lines == [f"evaluate.py: error: {run / 'model.keras'} is not a whole saved Keras "
                     f"model (not a .keras archive: cut short, empty or overwritten)"]  # fmt: skip
    assert "Traceback" not in done.stderr


def test_numbers_take_ascii_digits_only(tmp_path):
    """Python's int() reads a full-width '５' as 5: a flag refuses it (usage error, exit 2)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "recipes" / "token_pvr.py"), "--num-examples", "５",
         "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "invalid int value: '５'" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_a_run_says_when_min_steps_changes_its_epochs(tmp_path, capsys):
    """--epochs 1 on 3000 examples with --min-steps 6 trains 2 epochs of 3 steps: it says so."""
    flags = ["--num-examples", "3000", "--test-examples", "500", "--train-eval-examples", "500"]
    record = token_pvr.main([*flags, "--epochs", "1", "--min-steps", "6", "--out",
                             str(tmp_path / "run")])  # fmt: skip
    assert record["epochs_planned"] == 2
    assert "training 2 epochs, not --epochs 1: --min-steps 6 needs 2 epochs of 3 steps" in (
        capsys.readouterr().out
    )


def test_an_out_folder_that_cannot_be_made_is_one_line(tmp_path):
    """A folder no one can make (under /proc): one line, exit 2, not two chained tracebacks."""
    out = "/proc/pvr-keras-test/run"
    done = subprocess.run(
        [sys.executable, str(REPO / "recipes" / "token_pvr.py"), *TINY, "--epochs", "1",
         "--out", out],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"--out {out} cannot be created" in done.stderr
    assert "Traceback" not in done.stderr


NETS = """
import keras
def raises(**kw):
    raise RuntimeError("boom")
def fortytwo(**kw):
    return 42
def seven(seq_len=11, vocab=10, num_classes=10):
    x = keras.Input((seq_len,), dtype="int32")
    y = keras.layers.Flatten()(keras.layers.Embedding(vocab, 4)(x))
    return keras.Model(x, keras.layers.Dense(7)(y))
def rank3(seq_len=11, vocab=10, num_classes=10):
    x = keras.Input((seq_len,), dtype="int32")
    return keras.Model(x, keras.layers.Dense(num_classes)(keras.layers.Embedding(vocab, 4)(x)))
def short(seq_len=11, vocab=10, num_classes=10):
    x = keras.Input((5,), dtype="int32")
    y = keras.layers.Flatten()(keras.layers.Embedding(vocab, 4)(x))
    return keras.Model(x, keras.layers.Dense(num_classes)(y))
def lam(seq_len=11, vocab=10, num_classes=10):
    x = keras.Input((seq_len,), dtype="int32")
    y = keras.layers.Flatten()(keras.layers.Embedding(vocab, 4)(x))
    return keras.Model(x, keras.layers.Dense(num_classes)(keras.layers.Lambda(lambda t: 2 * t)(y)))
class Twice(keras.layers.Layer):
    def call(self, t):
        return t * 2
def unregistered(seq_len=11, vocab=10, num_classes=10):
    x = keras.Input((seq_len,), dtype="int32")
    y = Twice()(keras.layers.Flatten()(keras.layers.Embedding(vocab, 4)(x)))
    return keras.Model(x, keras.layers.Dense(num_classes)(y))
tiny = 5
"""


@pytest.mark.parametrize(
    ("builder", "message"),
    [
        ("nets.py:raises", "building the model nets.py:raises failed: RuntimeError: boom"),
        ("nets.py:fortytwo", "returned a int, not a keras.Model"),
        ("missing.py:f", "building the model missing.py:f failed: ModuleNotFoundError"),
        ("nets.py:tiny", "is not a model builder (not callable)"),
        ("nets.py:seven", "outputs shape (7,); the task needs one logit per class: (10,)"),
        ("nets.py:rank3", "outputs shape (11, 10)"),
        ("nets.py:short", "takes inputs of shape (5,); the task's examples have shape (11,)"),
        # Item 11: it would train and save, and never load again (safe_mode).
        ("nets.py:lam", "nets.py:lam builds a model that cannot be reloaded after training"),
        ("nets.py:unregistered", "register each custom layer with"),
    ],
)
def test_a_builder_that_cannot_train_the_task_is_refused_before_any_file(
    builder, message, tmp_path, monkeypatch
):
    """Issue 35 items 9-10: the model is built once before the run folder exists, and a
    builder that fails, returns no model, or a model of the wrong shapes is one line."""
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "missing.py").write_text("import not_a_module_xyz\ndef f(**kw):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(cli.ConfigError, match=re.escape(message)):
        token_pvr.main(["--model", builder, *TINY, "--epochs", "1", "--out", str(out)])
    assert not out.exists()
