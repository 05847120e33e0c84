"""The sweep engine with a stand-in trainer (no Keras): resume, kills, shards, shared dirs.

The stand-in behaves like ``training.train`` where it matters: a run folder with a finished
record returns that record without training again, and it logs every real training.
"""

import functools
import json
import os
import random
import time

import pandas as pd
import pytest

from pvr_keras.sweeps import IncompatibleResultsError, ResultsDir, expand, run_sweep
from tests.spawn import start

GRID = expand(
    {"seed": [0, 1], "window": [1, 2], "num_examples": [100, 300, 1000]},
    dict(epochs=2, min_steps=0, batch_size=100),
)


def fake_train(run, run_dir, *, log, delay=0.0):
    record_path = run_dir / "record.json"
    if record_path.exists():
        return json.loads(record_path.read_text())
    time.sleep(delay)
    accuracy = round(0.1 + 0.9 * (run.num_examples / 1000) / run.window, 3)
    record = {
        "final": {"train_eval_accuracy": 1.0, "test_accuracy": accuracy},
        "history": {"epoch": [1, 2], "train_eval_accuracy": [0.5, 1.0]},
        "failed": False,
        "status": "complete",
        "wall_time_s": delay,
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / "record.tmp"
    tmp.write_text(json.dumps(record))
    os.replace(tmp, record_path)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{run.run_id}\n".encode())
    os.close(fd)
    return record


def _sweep_slowly(results, trained_log, delay):
    _sweep(results, trained_log, delay=delay)


def _sweep_when_started(results, trained_log, started):
    started.write_text("")
    _sweep(results, trained_log, delay=0.1)  # the grid needs >= 1.2 s


def _sweep(results, trained_log, runs=GRID, **kwargs):
    trainer = functools.partial(fake_train, log=trained_log, delay=kwargs.pop("delay", 0.0))
    kwargs.setdefault("log", lambda *_: None)
    return run_sweep(runs, results, name="t", trainer=trainer, **kwargs)


def _trained(log):
    return log.read_text().split() if log.exists() else []


def _check_whole(results, runs=GRID):
    records, problems = ResultsDir(results).read()
    assert problems == []
    assert sorted(r["id"] for r in records) == sorted(r.run_id for r in runs)  # each once
    frame = pd.read_json(results / "results.jsonl", lines=True)
    assert len(frame) == len(runs) and frame["id"].is_unique
    return records


def test_restarted_sweep_runs_only_the_missing_runs(tmp_path):
    results, log = tmp_path / "r", tmp_path / "trained.log"
    few = GRID[:4]
    summary = _sweep(results, log, runs=few)
    assert summary["trained"] == [r.run_id for r in few] and summary["recorded_before"] == 0
    messages = []
    summary = _sweep(results, log, log=messages.append)  # the whole grid: 8 missing runs train
    assert "the sweep grows" in messages[0]
    assert summary["recorded_before"] == 4 and len(summary["trained"]) == 8
    assert _sweep(results, log)["trained"] == []  # a third start does nothing
    assert sorted(_trained(log)) == sorted(r.run_id for r in GRID)  # each trained once
    records = _check_whole(results)
    line = next(r for r in records if r["id"] == GRID[0].run_id)
    assert line["window"] == 1 and line["num_examples"] == 100 and line["seed"] == 0
    assert line["test_accuracy"] == 0.19 and line["train_accuracy"] == 1.0
    assert line["failed"] is False and line["curve_train_eval_accuracy"] == [0.5, 1.0]
    assert line["sweep"] == "t" and line["run_dir"] == f"runs/{GRID[0].run_id}"


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path):
    results, log = tmp_path / "r", tmp_path / "trained.log"
    rng = random.Random(0)
    for round in range(6):
        started = tmp_path / f"started{round}"
        worker = start(_sweep_when_started, results, log, started)
        deadline = time.time() + 120
        while not started.exists() and time.time() < deadline:  # past the imports
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.15))
        worker.kill()
        worker.join()
    before = ResultsDir(results).read()[0] if (results / "sweep.json").exists() else []
    assert len(before) < len(GRID)  # really stopped part-way
    _sweep(results, log)
    _check_whole(results)
    trained = _trained(log)
    assert len(trained) == len(set(trained))  # no configuration trained twice
    assert not list((results / "claims").glob("*.claim"))  # all released after recording


def test_truncated_line_is_repaired_and_its_run_recorded_again(tmp_path):
    results, log = tmp_path / "r", tmp_path / "trained.log"
    _sweep(results, log)
    path = results / "results.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # the last line cut short, as by a kill
    lost = json.loads(data.splitlines()[-1])["id"]
    messages = []
    trainer = functools.partial(fake_train, log=log)
    summary = run_sweep(GRID, results, name="t", trainer=trainer, log=messages.append)
    assert len(summary["problems"]) == 1 and "truncated" in summary["problems"][0]
    assert any("moved to results.corrupt" in m for m in messages)
    assert summary["trained"] == [lost]  # re-recorded from its run folder ...
    assert len(_trained(log)) == len(GRID)  # ... not retrained
    _check_whole(results)
    assert (results / "results.corrupt").exists()


def test_shards_split_the_work(tmp_path):
    results, log = tmp_path / "r", tmp_path / "trained.log"
    done = []
    for i in range(3):
        done += _sweep(results, log, shard_index=i, shard_count=3)["trained"]
    assert sorted(done) == sorted(r.run_id for r in GRID)
    _check_whole(results)


def test_workers_sharing_a_results_dir_train_each_run_once(tmp_path):
    results, log = tmp_path / "r", tmp_path / "trained.log"
    workers = [start(_sweep_slowly, results, log, 0.05) for _ in range(3)]
    for worker in workers:
        worker.join()
    _check_whole(results)  # all recorded (a run busy elsewhere is skipped, done by its owner)
    trained = _trained(log)
    assert sorted(trained) == sorted(r.run_id for r in GRID)


def test_a_run_claimed_by_a_live_worker_is_skipped(tmp_path):
    from pvr_keras.sweeps import Claims

    results, log = tmp_path / "r", tmp_path / "trained.log"
    held = Claims(results / "claims").try_claim(GRID[0].run_id)
    summary = _sweep(results, log)
    assert summary["busy"] == [GRID[0].run_id] and len(summary["trained"]) == len(GRID) - 1
    held.release(done=False)
    assert _sweep(results, log)["trained"] == [GRID[0].run_id]


def test_a_failing_trainer_releases_its_claim(tmp_path):
    def broken(run, run_dir):
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        run_sweep(GRID, tmp_path, name="t", trainer=broken, log=lambda *_: None)
    from pvr_keras.sweeps import Claims

    claim = Claims(tmp_path / "claims").try_claim(GRID[0].run_id)
    assert claim is not None  # stale, not held
    claim.release(done=False)


def test_progress_lines(tmp_path):
    messages = []
    trainer = functools.partial(fake_train, log=tmp_path / "log")
    run_sweep(GRID[:3], tmp_path / "r", name="demo", trainer=trainer, log=messages.append)
    assert messages[0].startswith("[demo] 3 runs in the grid;") and "3 to run" in messages[0]
    assert messages[1].startswith("[demo] 1/3 runs done | mlp-w1-mod_sum-n100-s0: train 1.000")
    assert "ETA" in messages[-1] and messages[-1].startswith("[demo] 3/3 runs done")


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="at least one Run"):
        run_sweep([], tmp_path, name="t")
    with pytest.raises(ValueError, match="name must be"):
        run_sweep(GRID, tmp_path, name="a/b")
    with pytest.raises(ValueError, match="shard"):
        run_sweep(GRID, tmp_path, name="t", shard_index=3, shard_count=3)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "sweep.json").write_text(
        '{"format": "pvr-keras/sweep", "format_version": 0}'
    )
    with pytest.raises(IncompatibleResultsError, match="incompatible version"):
        run_sweep(GRID, tmp_path / "old", name="t")


def test_a_sweep_of_block_runs_is_a_sweep_like_the_token_ones(tmp_path):
    """Figure 7's setting over CNN widths x training-set sizes, IID and held out: a grid of
    block runs, recorded with their kind and drawn by the same figures."""
    from pvr_keras.runconfig import Run
    from pvr_keras.sweeps import FIGURES, expand, make_figures

    base = Run.make("block", model="vgg11_bn", epochs=1)
    grid = expand({"holdout": [0, 1], "width": [8, 16], "num_examples": [500, 1000]}, base)
    assert len({r.run_id for r in grid}) == 8
    assert grid[0].run_id.startswith("block-vgg11_bn-mnist-width8-n500-s0-")

    def trainer(run, run_dir):
        accuracy = 0.01 if run.holdout else run.width / 20
        return {"final": {"train_eval_accuracy": 1.0, "test_accuracy": accuracy},
                "history": {"epoch": [1]}, "failed": False, "status": "complete",
                "wall_time_s": 0.0}  # fmt: skip

    summary = run_sweep(grid, tmp_path, name="blocks", figure=FIGURES["blocks"],
                        trainer=trainer, log=lambda *_: None)  # fmt: skip
    assert len(summary["trained"]) == 8
    lines = [json.loads(s) for s in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert {line["kind"] for line in lines} == {"block"}
    assert {(line["width"], line["holdout"]) for line in lines} == {
        (w, h) for w in (8, 16) for h in (False, True)
    }
    written = make_figures(tmp_path, log=lambda *_: None)
    assert {p.name for p in written} >= {"blocks_test_accuracy.png", "blocks.csv"}
    rows = (tmp_path / "figures" / "blocks.csv").read_text().splitlines()
    assert rows[0].startswith("model,holdout,width,num_examples")


def test_only_trains_a_jobs_runs_and_keeps_the_whole_grid(tmp_path):
    """A launched job's sweep (``only``) trains its runs alone; the sweep's definition still
    holds the whole grid, so the figures know every run."""
    results, log = tmp_path / "r", tmp_path / "trained.log"
    mine = {GRID[1].run_id, GRID[4].run_id}
    summary = _sweep(results, log, only=mine)
    assert set(summary["trained"]) == mine and summary["shard"] == 2
    assert set(log.read_text().split()) == mine
    ids = json.loads((results / "sweeps" / "t.json").read_text())["run_ids"]
    assert ids == [run.run_id for run in GRID]


@pytest.mark.parametrize("recorded_there", [True, False], ids=["recorded", "left"])
def test_wait_waits_for_a_live_claim_then_skips_or_trains(tmp_path, recorded_there):
    """With ``wait`` (a launched job), a run a live worker holds is waited for, not skipped:
    when that worker lets go having recorded it, it is skipped; when it lets go without (it
    died), it is trained here. Without ``wait`` it is skipped as busy."""
    import threading

    from pvr_keras.sweeps import Claims, result_line

    results, log = tmp_path / "r", tmp_path / "trained.log"
    run = GRID[0]
    ResultsDir(results, create=True)
    claims = Claims(results / "claims")
    held = claims.try_claim(run.run_id)  # another live worker's claim (another descriptor)
    assert held is not None
    busy = _sweep(results, log, runs=[run])
    assert busy["busy"] == [run.run_id] and not log.exists()

    def let_go():
        time.sleep(1.0)
        if recorded_there:
            record = fake_train(run, ResultsDir(results).run_dir(run.run_id), log=tmp_path / "x")
            ResultsDir(results).append(result_line(run, record, "t"))
        held.release(done=recorded_there)

    thread = threading.Thread(target=let_go)
    thread.start()
    start_s = time.perf_counter()
    summary = _sweep(results, log, runs=[run], wait=True)
    thread.join()
    assert time.perf_counter() - start_s >= 0.9 and summary["busy"] == []
    assert summary["trained"] == ([] if recorded_there else [run.run_id])
    assert log.exists() != recorded_there
    assert len(ResultsDir(results).read()[0]) == 1
