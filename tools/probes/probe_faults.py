"""Replays the faults a careless or hostile user (or a machine) inflicts, and counts data lost.

    python tools/probes/probe_faults.py                 # all cases, ~5-10 min on a 2-core CPU
    python tools/probes/probe_faults.py --kills 3       # fewer random kills

Every case runs in a temporary folder, on loopback only, with tiny runs of the real recipes:

- kills: a ``token_pvr.py`` run and a ``token_sweep.py`` sweep are SIGKILLed at random moments
  and started again; the finished result must equal an uninterrupted one's (histories bit for
  bit, every sweep run recorded once);
- damaged checkpoints: the newest checkpoint of a killed run is cut short or overwritten; the
  run resumes from the one before it (or starts again) and finishes;
- a full disk: a tmpfs of a few MB where the machine lets this user mount one (else the free
  space is reported as nearly none): the run stops with a one-line error, its last complete
  checkpoint intact, nothing temporary left; with space again it resumes;
- planted links: ``.lock``, ``learning_curve.png``, a claim and ``results.jsonl`` made links to
  a file outside the run; that file must be untouched;
- nested folders: ``--out`` inside a finished run and above it; the finished run must be
  untouched;
- planted code: a copy of a finished run (and a results line) naming a Python file that
  writes a marker when imported, as its builder and as its task kind, read by
  ``evaluate.py``, ``make_figures.py``, ``migrate_runs.py --check`` and
  ``holdout_analysis.py``: none may import it (``--trust-code`` with a changed file neither);
- results tools: committed studies damaged nine ways go into ``import_results.py`` (one line,
  exit 2, nothing written), and two holdout studies imported into one folder and exported
  again keep every committed file and row.

- security: a package whose ``__init__`` plants code, named by a record and by ``--model
  ... --help``; a planted ``.pyc`` beside the recorded builder under ``--trust-code``; the
  builder swapped every 50 ms while ``--trust-code`` reads it; a module reference (``this``)
  under ``--trust-code``: none may run;
- leaks: a value marker, a linked study file and a linked results file reaching a secret
  outside the results folder: none may be read;
- hangs: a FIFO at the file each of seven readers reads: none may wait (120 s each);
- resources: JSON nested 100,000 deep to the four study readers, a sparse 2 GB predictions
  file (refused from its header), five export targets that cannot be folders, a killed
  export's leftover: one line each, bounded.

- round three (``--only round3_code round3_hangs round3_loss round3_resources``, ~15-25 min):
  a recipe's flat ``config.json`` naming a planted file or package module as its kind, and
  ``evaluate.py --window 1`` on a record naming a planted aggregation (no code may run); a
  killed run's checkpoint files made a link to /dev/zero or FIFOs, a FIFO lock and a FIFO
  among ``benchmark.py``'s reference tables (no hang); ``export_results.py`` killed at each
  step of its swap, and a killed seed-0 checkpoint left for a seed-1 run (no committed line
  lost, nothing adopted); sizes past memory, ``1e19x0``, a 400-digit engine cache, bad
  ``--out`` names and a file size limit on exports (one line each, bounded).

Prints one line per case group and ``N cases tried: code run, secrets read, hangs, data
lost``; exits 1 if any group failed. ``--only security leaks hangs resources`` runs the hostile
inputs (~2 min); ``--only planted_code results_tools`` those (~1 min).
"""

import argparse
import hashlib
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
from pvr_keras import files  # noqa: E402  (the library the recipes run)

TINY = ["--num-examples", "3000", "--test-examples", "500", "--epochs", "6", "--min-steps",
        "0", "--warmup-epochs", "1", "--batch-size", "256", "--width", "0.25"]  # fmt: skip
SWEEP = ["--models", "mlp", "--windows", "1", "--sizes", "1000", "2000", "3000", "--seeds", "0",
         "--epochs", "3", "--warmup-epochs", "0", "--min-steps", "0", "--test-examples", "300",
         "--no-figures"]  # fmt: skip
# What a failed case means: code ran, a secret was read, a reader hung, or something else
# went wrong (not data lost); the other cases lose data when they fail.
LABELS = {"planted_code": "CODE", "security": "CODE", "leaks": "LEAK", "hangs": "HANG",
          "resources": "FAIL", "round3_code": "CODE", "round3_hangs": "HANG",
          "round3_resources": "FAIL"}  # fmt: skip
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
CASES = ("kills", "sweep_kills", "truncated", "overwritten", "full_disk", "planted_links",
         "nested", "planted_code", "results_tools", "security", "leaks",
         "hangs", "resources", "round3_code", "round3_hangs", "round3_loss",
         "round3_resources")  # fmt: skip


def _bytes(path):
    """The bytes of a file a case wrote (read as the library reads: a plain file, no link)."""
    return files.read_plain(path)


def _text(path):
    return files.read_plain(path).decode(errors="replace")


def _json(path):
    return files.read_json(path)


def _recipe(name, *args, env=None, timeout=900, no_space=False):
    """Runs a recipe as a user would; ``no_space``: where no tmpfs can be mounted, the free
    space the process sees is made nearly none (``shutil.disk_usage``)."""
    command = [sys.executable, str(REPO / "recipes" / f"{name}.py"), *args]
    if no_space:
        code = (
            "import runpy, shutil, sys; real = shutil.disk_usage; "
            "shutil.disk_usage = lambda p: real(p)._replace(free=1); "
            f"sys.argv = {command[1:]!r}; runpy.run_path(sys.argv[0], run_name='__main__')"
        )
        command = [sys.executable, "-c", code]
    return subprocess.run(command, env=env or ENV, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def _start(name, *args):
    command = [sys.executable, str(REPO / "recipes" / f"{name}.py"), *args]
    return subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip


def _history(folder):
    record = _json(folder / "record.json")
    return {k: v for k, v in record["history"].items() if not k.endswith("_seconds")}  # the timings


def _digest(folder):
    """The bytes of every file under ``folder`` (a finished run must stay as it is)."""
    out = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = hashlib.sha256(_bytes(path)).hexdigest()
    return out


def _wait_for_epochs(folder, epochs, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if _json(folder / "record.json")["epochs_completed"] >= epochs:
                return True
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    return False


def case_kills(root, rng, kills, reference):
    """Random SIGKILLs of a run, then a rerun: the same history as the uninterrupted one."""
    out = root / "killed"
    for _ in range(kills):
        proc = _start("token_pvr", *TINY, "--out", str(out))
        time.sleep(rng.uniform(3.0, 12.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = _recipe("token_pvr", *TINY, "--out", str(out))
    same = done.returncode in (0, 3) and _history(out) == _history(reference)
    return same, f"{kills} kills of a run, then a rerun: same history as uninterrupted"


def case_sweep_kills(root, rng, kills):
    out = root / "sweep"
    for _ in range(kills):
        proc = _start("token_sweep", *SWEEP, "--out", str(out))
        time.sleep(rng.uniform(3.0, 15.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = _recipe("token_sweep", *SWEEP, "--out", str(out))
    lines = [json.loads(s) for s in _text(out / "results.jsonl").splitlines() if s]
    ids = [line["id"] for line in lines]
    whole = done.returncode == 0 and len(ids) == len(set(ids)) == 3
    return whole, f"{kills} kills of a sweep, then a rerun: 3 runs recorded once each"


def case_damaged_checkpoint(root, reference, damage):
    out = root / f"damaged_{damage}"
    proc = _start("token_pvr", *TINY, "--out", str(out))
    _wait_for_epochs(out, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    weights = out / "checkpoint" / "model.weights.h5"
    if damage == "truncated":
        weights.write_bytes(_bytes(weights)[:1000])
    else:
        data = bytearray(_bytes(weights))
        data[-300:-284] = b"\xff" * 16
        weights.write_bytes(bytes(data))
    done = _recipe("token_pvr", *TINY, "--out", str(out))
    same = done.returncode in (0, 3) and _history(out) == _history(reference)
    said = "damaged checkpoint" in done.stdout
    return same and said, f"newest checkpoint {damage}: falls back, says so, same history"


def case_full_disk(root):
    mount = root / "small"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
                             capture_output=True).returncode == 0  # fmt: skip
    try:
        out = mount / "run" if mounted else root / "nospace"
        args = [*TINY, "--width", "0.5", "--out", str(out)]
        done = _recipe("token_pvr", *args, timeout=600, no_space=not mounted)
        err = done.stderr.strip().splitlines()[-1:] or [""]
        one_line = done.returncode == 1 and "error:" in err[0] and "Traceback" not in done.stderr
        left = [p.name for p in out.iterdir() if ".tmp" in p.name] if out.exists() else []
        ok = one_line and not left
        how = "a 3 MB tmpfs" if mounted else "free space reported as none (no tmpfs here)"
        return ok, f"full disk ({how}): one-line error (exit 1), no temporary file left"
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], capture_output=True)


def case_planted_links(root):
    victim = root / "victim.txt"
    victim.write_text("precious")
    before = _bytes(victim)
    tried = 0
    for name in (".lock", "learning_curve.png", "record.json"):
        out = root / f"linked_{name.strip('.')}"
        out.mkdir()
        (out / name).symlink_to(victim)
        _recipe("token_pvr", *TINY, "--epochs", "1", "--out", str(out))
        tried += 1
    sweep = root / "linked_sweep"
    short = [*SWEEP[:8], "--epochs", "1", "--no-figures", "--out", str(sweep)]
    _recipe("token_sweep", *short)
    lines = _text(sweep / "results.jsonl").splitlines()
    first = json.loads(lines[0])["id"]
    (sweep / "results.jsonl").write_text("\n".join(lines[1:]) + "\n")  # as if not yet recorded
    shutil.rmtree(sweep / "runs" / first)
    (sweep / "claims").mkdir(exist_ok=True)
    (sweep / "claims" / f"{first}.claim").symlink_to(victim)  # its claim: a planted link
    _recipe("token_sweep", *short)
    (sweep / "claims" / f"{first}.claim").unlink()
    (sweep / "results.jsonl").unlink()
    (sweep / "results.jsonl").symlink_to(victim)  # the results file: a planted link
    _recipe("token_sweep", *short)
    untouched = _bytes(victim) == before
    return (
        untouched,
        f"{tried + 2} planted links (lock, plot, record, claim, results): target untouched",
    )


def case_nested(root, reference):
    before = _digest(reference)
    refused = 0
    for out in (reference / "checkpoint", reference / "sub" / "run", reference.parent):
        done = _recipe("token_pvr", *TINY, "--out", str(out))
        refused += done.returncode == 2
    done = _recipe("token_sweep", *SWEEP, "--out", str(reference))
    refused += done.returncode == 2
    return refused == 4 and _digest(reference) == before, (
        "--out inside, under and above a finished run, a sweep into it: refused, run untouched"
    )


def _plant(folder, marker, name):
    path = folder / name
    path.write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "def mlp(**kwargs):\n    return None\nKIND = None\n"
    )
    return path


def case_planted_code(root, reference):
    """Returns (no code ran, what): every reader of records on a planted builder or kind."""
    marker = root / "planted_marker"
    evil = _plant(root, marker, "evil.py")
    readers = 0
    for key in ("model", "kind"):
        run = root / f"planted_{key}" / "run"
        shutil.copytree(reference, run)
        record = _json(run / "record.json")
        record["config"][key] = f"{evil}:{'mlp' if key == 'model' else 'KIND'}"
        record[f"{key}_source"] = str(evil)
        (run / "record.json").write_text(json.dumps(record))
        for args in ([], ["--trust-code"]):  # trusted: the recorded hash is not this file's
            _recipe("evaluate", str(run), *args)
            readers += 1
        subprocess.run([sys.executable, str(REPO / "tools" / "migrate_runs.py"), str(run),
                        "--check"], env=ENV, capture_output=True, timeout=300)  # fmt: skip
        readers += 1
    results = root / "planted_results"
    results.mkdir()
    line = _json(reference / "record.json")["config"]
    line = {**line, "id": "planted", "sweep": "size_window", "kind": f"{evil}:KIND",
            "holdout": 1, "test_accuracy": 0.5, "train_accuracy": 1.0, "failed": False,
            "run_dir": "runs/planted"}  # fmt: skip
    (results / "sweep.json").write_text(json.dumps({"format": "pvr-keras/sweep",
                                                    "format_version": 1}))  # fmt: skip
    (results / "results.jsonl").write_text(json.dumps(line) + "\n")
    (results / "sweeps").mkdir()
    (results / "sweeps" / "size_window.json").write_text(
        json.dumps({"name": "size_window", "run_ids": ["planted"]})
    )
    shutil.copytree(reference, results / "runs" / "planted")
    for tool in ("make_figures.py", "holdout_analysis.py"):
        subprocess.run([sys.executable, str(REPO / "tools" / tool), str(results)], env=ENV,
                       capture_output=True, timeout=600)  # fmt: skip
        readers += 1
    ran = marker.exists()
    return (
        not ran,
        f"{readers} readers of records naming planted code: {'one' if ran else 'none'} ran it",
    )


def _tool(name, *args, env=None, timeout=120, cwd=None):
    """Runs ``recipes/NAME``, ``tools/NAME`` or ``tools/generate/NAME`` as a user would:
    ``(exit status, stdout, stderr)``, or ``None`` when it ran past ``timeout`` (a hang; it
    is killed)."""
    folder = next(f for f in ("recipes", "tools", "tools/generate") if (REPO / f / name).is_file())
    try:
        done = subprocess.run([sys.executable, str(REPO / folder / name), *map(str, args)],
                              env=env or ENV, capture_output=True, text=True, timeout=timeout,
                              cwd=cwd, stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return done.returncode, done.stdout, done.stderr


def _one_line(done):
    """A refusal as the tools make one: exit status 1 or 2, no traceback."""
    return done is not None and done[0] in (1, 2) and "Traceback" not in done[2]


def _named_code_run(root, reference, config_model, marker, *, env=None, folder="named"):
    """A copy of the finished run whose record names ``config_model`` as its builder, read
    by evaluate.py (with and without --trust-code) and migrate_runs.py --check; returns how
    many readers read it."""
    run = root / folder / "run"
    shutil.copytree(reference, run)
    record = _json(run / "record.json")
    record["config"]["model"] = config_model
    (run / "record.json").write_text(json.dumps(record))
    _tool("evaluate.py", run, env=env)
    _tool("evaluate.py", run, "--trust-code", env=env)
    _tool("migrate_runs.py", run, "--check", env=env)
    return 3


def case_security(root, reference):
    """Returns (no code ran, what): the code a record, a flag or a cache could run, each with a
    marker it writes if it runs. A dotted reference whose package ``__init__`` plants code
    (record and ``--model ... --help``); ``--trust-code`` beside a planted ``.pyc``; a file
    swapped every 50 ms during ``--trust-code``; a module reference under ``--trust-code``."""
    import threading

    marker = root / "security_marker"
    plant = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    tried = 0
    # 1. a package on the path whose __init__ plants code, named by a record and by a flag
    path = root / "security_path"
    (path / "runz").mkdir(parents=True)
    (path / "runz" / "__init__.py").write_text(plant)
    (path / "runz" / "nets.py").write_text("def build(seq_len, num_classes, k: int = 2):\n"
                                            "    return None\n")  # fmt: skip
    env = {**ENV, "PYTHONPATH": f"{path}{os.pathsep}{REPO}"}
    tried += _named_code_run(root, reference, "runz.nets:build", marker, env=env, folder="dotted")
    _tool("train.py", "--model", "runz.nets:build", "--help", env=env)
    tried += 1
    # 2. the recorded file unchanged, a planted .pyc beside it with its mtime and size
    import importlib.util
    from importlib import _bootstrap_external

    nets = root / "security_file" / "nets.py"
    nets.parent.mkdir()
    nets.write_text(_text(REPO / "pvr_keras" / "models" / "mlp.py"))
    info = nets.stat()
    pyc = pathlib.Path(importlib.util.cache_from_source(str(nets)))
    pyc.parent.mkdir()
    pyc.write_bytes(_bootstrap_external._code_to_timestamp_pyc(
        compile(plant, str(nets), "exec"), info.st_mtime, info.st_size))  # fmt: skip
    run = root / "security_pyc" / "run"
    shutil.copytree(reference, run)
    record = _json(run / "record.json")
    record["config"]["model"] = f"{nets}:mlp"
    record["model_source"] = str(nets)
    record["model_source_sha256"] = hashlib.sha256(_bytes(nets)).hexdigest()
    (run / "record.json").write_text(json.dumps(record))
    _tool("evaluate.py", run, "--trust-code")
    tried += 1
    # 3. the recorded file swapped for a planted one every 50 ms while --trust-code reads it
    good = _bytes(nets)
    shutil.rmtree(pyc.parent)
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            for data in (plant.encode() + good, good):
                tmp = nets.with_name(".swap")
                tmp.write_bytes(data)
                os.replace(tmp, nets)
                time.sleep(0.05)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for _ in range(4):
            _tool("evaluate.py", run, "--trust-code")
            tried += 1
    finally:
        stop.set()
        swapper.join()
    # 4. a module reference (the standard library's ``this`` prints a poem when imported)
    zen = _named_code_run(root, reference, "this:s", marker, folder="module")
    done = _tool("evaluate.py", root / "module" / "run", "--trust-code")
    tried += zen + 1
    poem = done is not None and "Zen of Python" in done[1]
    ran = marker.exists() or poem
    said = "code ran" if ran else "none ran"
    return (
        not ran,
        f"{tried} readers of planted packages, .pyc, swapped files and modules: {said}",
        tried,
    )


def _deep_json(path, depth=100_000):
    path.write_text("[" * depth + "]" * depth)


def case_hangs(root, reference):
    """Returns (no hang, what, tried): a FIFO wherever a reader reads a file (each tool
    killed after 120 s counts as a hang)."""
    study = root / "hang_study"
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", study)
    (study / "results.jsonl").unlink()
    os.mkfifo(study / "results.jsonl")
    out = root / "hang_out"
    out.mkdir()
    os.mkfifo(out / "config.json")
    run = root / "hang_run" / "run"
    shutil.copytree(reference, run)
    (run / "record.json").unlink()
    os.mkfifo(run / "record.json")
    predictions = root / "hang_predictions.npy"
    os.mkfifo(predictions)
    calls = [
        ("make_figures.py", study),
        ("import_results.py", study, root / "hang_target"),
        ("export_results.py", study.parent, root / "hang_docs"),
        ("train.py", "--out", out, "--epochs", "1"),
        ("evaluate.py", run),
        ("migrate_runs.py", run.parent, "--check"),
        ("benchmark.py", "--predictions", predictions, "--config", "token/w1"),
    ]
    hangs = [call[0] for call in calls if _tool(*call) is None]
    return (
        not hangs,
        (
            f"{len(calls)} readers given a FIFO: "
            + (f"hung: {', '.join(hangs)}" if hangs else "none hung")  # fmt: skip
        ),
        len(calls),
    )


def case_resources(root):
    """Returns (each refused in one line, within bounds, what, tried): JSON nested 100,000
    deep to every reader of studies; a sparse 2 GB predictions file (refused from its
    header: under 20 s); export targets that cannot be folders; a killed export's leftover."""
    tried, bad = 0, []
    study = root / "deep_study"
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", study)
    _deep_json(study / "sweep.json")
    results = root / "deep_results"  # a results folder of export_results.py: token/ a study
    shutil.copytree(study, results / "token")
    docs = root / "deep_docs"  # a results README whose value marker reads a deep file
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", docs / "holdout_paper")
    _deep_json(docs / "holdout_paper" / "holdout_analysis.json")
    (docs / "README.md").write_text(
        '<!-- = summary("holdout_paper", "holdout_analysis.json") -->x<!-- /= -->\n'
    )
    for call in (("make_figures.py", study), ("import_results.py", study, root / "deep_target"),
                 ("export_results.py", results, root / "deep_export"),
                 ("results_tables.py", docs, "--check")):  # fmt: skip
        tried += 1
        if not _one_line(_tool(*call)):
            bad.append(f"deep JSON: {call[0]}")
    sparse = root / "sparse.npy"
    with files.create(sparse) as file:
        header = {"descr": "<f4", "fortran_order": False, "shape": (2000, 262_144)}
        import numpy as np

        np.lib.format.write_array_header_1_0(file, header)
        file.truncate(file.tell() + 2000 * 262_144 * 4)
    start = time.time()
    done = _tool("benchmark.py", "--predictions", sparse, "--config", "token/w1")
    tried += 1
    if not _one_line(done) or time.time() - start > 20:
        bad.append(f"sparse 2 GB .npy ({time.time() - start:.0f} s)")
    empty = root / "empty_folder"
    empty.mkdir()
    targets = {"a link to an empty folder": root / "link_empty",
               "a dangling link": root / "link_dangling", "/proc/x": "/proc/x",
               "/sys/x": "/sys/x", "a path under a file": sparse / "x"}  # fmt: skip
    (root / "link_empty").symlink_to(empty)
    (root / "link_dangling").symlink_to(root / "nowhere")
    for what, target in targets.items():
        tried += 1
        done = _tool("export_dataset.py", "boolean/parity3", target, "--size", "small")
        if not _one_line(done):
            bad.append(f"export to {what}")
    target = root / "export_target"
    command = [sys.executable, str(REPO / "tools" / "export_dataset.py"), "token/w1",
               str(target), "--format", "text", "--size", "small"]  # fmt: skip
    proc = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not any(".tmp" in p.name for p in root.iterdir()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = [p.name for p in root.iterdir() if ".tmp" in p.name]
    done = _tool(
        "export_dataset.py", "token/w1", target, "--format", "text", "--size", "small", timeout=600
    )
    tried += 1
    after = [p.name for p in root.iterdir() if ".tmp" in p.name]
    if not left or done is None or done[0] != 0 or after:
        bad.append(f"a killed export's leftover ({left} -> {after})")
    return (
        not bad,
        f"{tried} resource cases: " + ("; ".join(bad) or "each bounded, one line"),
        tried,
    )


def case_leaks(root):
    """Returns (no secret copied, what, tried): a file outside the results a value marker, a
    linked study file or a linked results file would bring in (``results_tables.py
    --write``, ``export_results.py``, ``make_figures.py``)."""
    secret = "TOPSECRET-47"
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "secret.json").write_text(json.dumps({"secret": secret}))
    docs = root / "leak_docs"
    shutil.copytree(REPO / "docs" / "results", docs)
    readme = docs / "README.md"
    marker = '<!-- = summary("../../elsewhere", "secret.json") -->x<!-- /= -->'
    readme.write_text(_text(readme) + f"\n{marker}\n")
    leaked = []
    done = _tool("results_tables.py", docs, "--write")
    if secret in _text(readme) or not _one_line(done):
        leaked.append("a value marker")
    results = root / "leak_results"
    shutil.copytree(REPO / "docs" / "results" / "holdout", results / "token")
    (results / "token" / "config_holdout.json").unlink(missing_ok=True)
    (results / "token" / "config_holdout.json").symlink_to(root / "elsewhere" / "secret.json")
    export = root / "leak_export"
    shutil.copytree(REPO / "docs" / "results" / "holdout", export / "holdout")
    _tool("export_results.py", results, export)
    if any(secret in _text(p) for p in export.rglob("*")
           if p.is_file() and not p.is_symlink()):  # fmt: skip
        leaked.append("a linked study file")
    study = root / "leak_study"
    shutil.copytree(REPO / "docs" / "results" / "holdout_paper", study)
    (study / "results.jsonl").unlink()
    (study / "results.jsonl").symlink_to(root / "elsewhere" / "secret.json")
    if not _one_line(_tool("make_figures.py", study)):
        leaked.append("a linked results file")
    return (
        not leaked,
        "3 planted paths to a secret outside the results: "
        + (f"read through {', '.join(leaked)}" if leaked else "none read"),
        3,
    )


def case_results_tools(root):
    """Returns (nothing lost, what): damaged studies into import_results.py, and an export
    of two holdout studies imported into one folder."""
    committed = REPO / "docs" / "results"
    tool = REPO / "tools"
    refused, tried = 0, 0
    for damage in ("cut", "twice", "not_json", "fifo", "link"):
        study = root / f"damaged_{damage}" / "holdout_paper"
        shutil.copytree(committed / "holdout_paper", study)
        results = study / "results.jsonl"
        lines = _text(results).splitlines()
        if damage == "cut":
            results.write_text(lines[0][:50] + "\n")
        elif damage == "twice":
            results.write_text("\n".join(lines + lines[:1]) + "\n")
        elif damage == "not_json":
            (study / "sweep.json").write_text("{")
        elif damage == "fifo":
            results.unlink()
            os.mkfifo(results)
        else:
            (study / "notes.txt").symlink_to(REPO / "README.md")
        target = root / f"damaged_{damage}" / "target"
        done = subprocess.run([sys.executable, str(tool / "import_results.py"), str(study),
                               str(target)], env=ENV, capture_output=True, text=True,
                              timeout=60)  # fmt: skip
        tried += 1
        refused += done.returncode == 2 and not target.exists() and "Traceback" not in (done.stderr)
    docs = root / "export_docs"
    studies = [committed / "holdout", committed / "holdout_paper"]
    for study in studies:
        shutil.copytree(study, docs / study.name)
    results = root / "export_results"
    subprocess.run([sys.executable, str(tool / "import_results.py"), *map(str, studies),
                    str(results / "token")], env=ENV, capture_output=True, timeout=300)  # fmt: skip
    subprocess.run([sys.executable, str(tool / "export_results.py"), str(results), str(docs)],
                   env=ENV, capture_output=True, timeout=600)  # fmt: skip
    kept = all(
        _bytes(docs / s.name / f) == _bytes(s / f)
        for s in studies for f in ("holdout_analysis.json", "holdout_analysis.csv")
    )  # fmt: skip
    return refused == tried and kept, (
        f"{tried} damaged studies refused in one line, nothing written ({refused}); an export "
        f"of two holdout studies through one folder kept their analyses ({kept})"
    )


# ---- round three: the readers every earlier fix missed -----------------------------------

KILL_AT = """
import os, runpy, shutil, signal, sys
step, calls = int(sys.argv.pop(1)), [0]
def killed(real):
    def call(*args, **kwargs):
        calls[0] += 1
        if calls[0] == step:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return call
os.rename, os.replace, shutil.rmtree = killed(os.rename), killed(os.replace), killed(shutil.rmtree)
sys.argv.pop(0)
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _lines(study):
    path = study / "results.jsonl"
    return set(_text(path).splitlines()) if path.is_file() else set()


def case_round3_code(root, reference):
    """Returns (no code ran, what, tried): a flat config.json naming a file or a package
    module as its kind, read by recipes pointed at its folder; evaluate.py --window 1 on a
    record naming an aggregation file."""
    marker = root / "round3_marker"
    evil = _plant(root, marker, "evil_kind.py")
    package = root / "round3_path" / "runz_probe"
    package.mkdir(parents=True)
    _plant(package, marker, "__init__.py")
    (package / "kinds.py").write_text("KIND = None\n")
    env = {**ENV, "PYTHONPATH": str(root / "round3_path")}
    tried, said = 0, []
    for kind in (f"{evil}:KIND", "runz_probe.kinds:KIND"):
        for recipe, name in (("train.py", "config.json"), ("token_pvr.py", "config.json")):
            out = root / f"round3_{tried}"
            out.mkdir()
            (out / name).write_text(json.dumps({"kind": kind, "model": "mlp", "window": 2}))
            done = _tool(recipe, "--out", out, "--epochs", "1", env=env, timeout=300)
            tried += 1
            if not _one_line(done):
                said.append(f"{recipe} on a config naming {kind.split(':')[0][-20:]}")
    run = root / "round3_aggregation" / "run"
    shutil.copytree(reference, run)
    aggs = _plant(root, marker, "my_aggs.py")
    record = _json(run / "record.json")
    record["config"]["aggregation"] = f"{aggs}:mlp"
    record["aggregation_source"] = str(aggs)
    (run / "record.json").write_text(json.dumps(record))
    for extra in ([], ["--window", "1"]):
        _tool("evaluate.py", run, *extra, timeout=300)
        tried += 1
    ran = marker.exists()
    return (not ran and not said,
            f"{tried} readers of flat configs and of a recorded aggregation: "
            f"{'code ran' if ran else 'no code ran'}" + (f"; {', '.join(said)}" if said else ""),
            tried)  # fmt: skip


def case_round3_hangs(root, reference):
    """Returns (no hang, what, tried): a killed run's checkpoint files made a link to
    /dev/zero or FIFOs, then resumed; a FIFO among benchmark.py's reference tables and at a
    run's lock."""
    killed = root / "round3_killed" / "run"
    proc = _start("token_pvr", *TINY, "--out", str(killed))
    _wait_for_epochs(killed, 3)  # a checkpoint and the one before it
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    plants = {
        "weights -> /dev/zero": lambda c: (
            (c / "checkpoint" / "model.weights.h5").unlink(),
            (c / "checkpoint" / "model.weights.h5").symlink_to("/dev/zero"),
        ),
        "FIFO checksums.json": lambda c: (
            (c / "checkpoint" / "checksums.json").unlink(),
            os.mkfifo(c / "checkpoint" / "checksums.json"),
        ),
        "FIFO checkpoint.old/state.json": lambda c: (
            (c / "checkpoint.old" / "state.json").unlink(missing_ok=True),
            (c / "checkpoint.old").mkdir(exist_ok=True),
            os.mkfifo(c / "checkpoint.old" / "state.json"),
        ),
        "FIFO .lock": lambda c: ((c / ".lock").unlink(missing_ok=True), os.mkfifo(c / ".lock")),
    }
    hangs, tried = [], 0
    for what, plant in plants.items():
        run = root / f"round3_hang_{tried}" / "run"
        shutil.copytree(killed, run, symlinks=True)
        plant(run)
        tried += 1
        # A resume trains the rest of the run (a minute or two; more on a loaded machine):
        # only one still going after 15 minutes counts as a hang.
        if _tool("token_pvr.py", *TINY, "--out", run, timeout=900) is None:
            hangs.append(what)
    reference_dir = root / "round3_reference" / "quick"
    reference_dir.mkdir(parents=True)
    os.mkfifo(reference_dir / "theirs.json")
    tried += 1
    if _tool("benchmark.py", "--reference", reference_dir.parent, "--out",
             root / "round3_bench") is None:  # fmt: skip
        hangs.append("benchmark.py --reference with a FIFO")
    return (not hangs, f"{tried} resumes and readers given links and FIFOs: "
            + (f"hung: {', '.join(hangs)}" if hangs else "none hung"), tried)  # fmt: skip


def case_round3_loss(root, reference):
    """Returns (nothing lost, what, tried): export_results.py killed at each step of its swap
    (and the next export with it), every committed line kept; a killed run's checkpoint left
    in a folder is not continued by a run of another seed."""
    committed = REPO / "docs" / "results" / "holdout_paper"
    tried, lost = 0, []
    for step in range(1, 6):
        results = root / f"round3_export_{step}" / "results"
        docs = root / f"round3_export_{step}" / "docs"
        shutil.copytree(committed, docs / "holdout_paper")
        before = _lines(docs / "holdout_paper")
        subprocess.run([sys.executable, str(REPO / "tools" / "import_results.py"),
                        str(committed), str(results / "token")], env=ENV,
                       capture_output=True, timeout=300)  # fmt: skip
        subprocess.run([sys.executable, "-c", KILL_AT, str(step),
                        str(REPO / "tools" / "export_results.py"), str(results), str(docs)],
                       env=ENV, capture_output=True, timeout=600)  # fmt: skip
        _tool("export_results.py", results, docs, timeout=600)
        tried += 1
        if not before <= _lines(docs / "holdout_paper"):
            lost.append(f"export killed at step {step}")
    killed = root / "round3_seed" / "run"
    proc = _start("token_pvr", *TINY, "--out", str(killed))
    _wait_for_epochs(killed, 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (killed / "record.json").unlink()  # the record gone: only the checkpoint says whose
    (killed / "config.json").unlink(missing_ok=True)
    done = _tool("token_pvr.py", *TINY, "--seed", "1", "--out", killed, timeout=300)
    tried += 1
    if not _one_line(done):
        lost.append("a seed-1 run continued seed 0's checkpoint")
    return (not lost, f"{tried} kills and left checkpoints: "
            + ("; ".join(lost) or "nothing lost, nothing adopted"), tried)  # fmt: skip


def case_round3_resources(root):
    """Returns (each refused in one line, within bounds, what, tried): sizes past memory,
    numbers past float32, bad names and paths, a file size limit."""
    tried, bad = 0, []
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30)); "
    snippets = {
        "Run.make('chain', length=10**9)":
            "from pvr_keras.runconfig import Run; Run.make('chain', length=10**9)",
        "reasoning_gym length=10**9": "import reasoning_gym as g, pvr_keras.reasoning_gym; "
            "g.create_dataset('pvr_chain_l40_h1_4', length=10**9, size=1)[0]",
        "gotu 1e19x0": "from pvr_keras.runconfig import Run; Run.make('gotu', target='1e19x0')",
    }  # fmt: skip
    for what, code in snippets.items():
        done = subprocess.run([sys.executable, "-c", limit + code], env=ENV, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        tried += 1
        if done.returncode == 0 or "ValueError" not in done.stderr or "MemoryError" in done.stderr:
            bad.append(what)
    cache = root / "round3_cache.json"  # this machine's figures, then one past any float
    cached_env = {**ENV, "PVR_ENGINE_CACHE": str(cache)}
    cached_env.pop("PVR_ENGINE", None)
    small = ("--epochs", "1", "--num-examples", "1000", "--test-examples", "200",
             "--min-steps", "0", "--width", "0.125")  # fmt: skip
    _tool("train.py", *small, "--out", root / "round3_measured", env=cached_env, timeout=600)
    if cache.is_file():
        import re

        cache.write_text(re.sub(r"(\d+\.\d+)", "1" + "0" * 400, _text(cache), count=1))
    out = root / "round3_out"
    for what, args, env in (
        ("an engine cache holding a 400-digit number",
         ("train.py", *small, "--out", out / "cache"), cached_env),
        ("--out '{model.name}'", ("train.py", "--out", out / "{model.name}"), None),
        ("--out '{seed[0]}'", ("train.py", "--out", "{seed[0]}"), None),
        ("a 300-character --out", ("train.py", "--out", out / ("a" * 300)), None),
        ("evaluate.py on a 300-character path", ("evaluate.py", out / ("b" * 300)), None),
    ):  # fmt: skip
        done = _tool(*args, env=env, timeout=300, cwd=root)
        tried += 1
        ok = (
            done is not None
            and "Traceback" not in done[2]
            and (done[0] in (1, 2) or what.startswith("an engine cache") and done[0] in (0, 3))
        )
        if not ok:
            bad.append(what)
    for fmt in ("text", "parquet"):
        command = [
            sys.executable,
            str(REPO / "tools" / "export_dataset.py"),
            "--format",
            fmt,
            "--size",
            "small",
            "token/w3",
            str(root / f"round3_limited_{fmt}"),
        ]
        done = subprocess.run(["bash", "-c", 'ulimit -f 64; exec "$@"', "-", *command],
                              env=ENV, capture_output=True, text=True, timeout=300)  # fmt: skip
        tried += 1
        if done.returncode != 1 or "Traceback" in done.stderr:
            bad.append(f"export {fmt} at a file size limit")
    return (not bad, f"{tried} resource cases: " + ("; ".join(bad) or "each bounded, one line"),
            tried)  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=4, help="random kills per killed case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", choices=CASES, help="these cases only")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    root = pathlib.Path(tempfile.mkdtemp(prefix="pvr_probe_"))
    results = []
    try:
        reference = root / "finished" / "run"
        done = _recipe("token_pvr", *TINY, "--out", str(reference))
        if done.returncode not in (0, 3):
            raise SystemExit(f"the reference run failed: {done.stderr[-2000:]}")
        cases = {
            "kills": lambda: case_kills(root, rng, args.kills, reference),
            "sweep_kills": lambda: case_sweep_kills(root, rng, args.kills),
            "truncated": lambda: case_damaged_checkpoint(root, reference, "truncated"),
            "overwritten": lambda: case_damaged_checkpoint(root, reference, "overwritten"),
            "full_disk": lambda: case_full_disk(root),
            "planted_links": lambda: case_planted_links(root),
            "nested": lambda: case_nested(root, reference),
            "planted_code": lambda: case_planted_code(root, reference),
            "results_tools": lambda: case_results_tools(root),
            "security": lambda: case_security(root, reference),
            "leaks": lambda: case_leaks(root),
            "hangs": lambda: case_hangs(root, reference),
            "resources": lambda: case_resources(root),
            "round3_code": lambda: case_round3_code(root, reference),
            "round3_hangs": lambda: case_round3_hangs(root, reference),
            "round3_loss": lambda: case_round3_loss(root, reference),
            "round3_resources": lambda: case_round3_resources(root),
        }
        for name, case in cases.items():
            if args.only and name not in args.only:
                continue
            start = time.time()
            ok, what, *tried = case()
            results.append((name, ok, tried[0] if tried else 1))
            label = "ok  " if ok else LABELS.get(name, "LOST")
            print(f"{label} {what} ({time.time() - start:.0f} s)", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = [LABELS.get(name, "LOST") for name, ok, _ in results if not ok]
    print(f"{sum(r[2] for r in results)} cases tried ({len(results)} groups): code run "
          f"{failed.count('CODE')}, secrets read {failed.count('LEAK')}, hangs "
          f"{failed.count('HANG')}, data lost "
          f"{failed.count('LOST')}, other failures {failed.count('FAIL')}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
