"""Runs a sweep: every run of a grid trained once, recorded once, resumable at any point.

Each run trains with ``training.train`` in ``RESULTS/runs/<id>/``, so a killed run resumes
from its last epoch; when it finishes, one line is appended to ``RESULTS/results.jsonl``.
Started again, a sweep skips the runs recorded there. Several workers may share one results
directory (claims, see ``claims.py``) and/or split the grid with shards; both together are
fine. See ``results.py`` for why a kill at any moment loses no record and corrupts none.
"""

import pathlib
import time

from pvr_keras.sweeps.claims import Claims
from pvr_keras.sweeps.grid import shard, unique
from pvr_keras.sweeps.results import ResultsDir

CURVES = ("train_eval_accuracy", "test_accuracy", "train_loss", "test_loss")


def train_run(run, run_dir, *, save_model=True, verbose=0, input=None):
    """Trains one ``Run`` (any kind) into ``run_dir`` (``training.runs.run``); returns its
    record. ``input``: ``"device"`` or ``"tfdata"`` (default: the run's, else device input
    on JAX)."""
    from pvr_keras.training import runs

    return runs.run(run, run_dir, save_model=save_model, verbose=verbose, input=input)


def saved_models(out, runs):
    """Each run of ``runs`` recorded in the results folder ``out``, with its results line and
    its saved model (``runs/<id>/model.keras``, read as ``training.load_run`` reads it):
    yields ``(run, line, model)`` in the order of ``runs``, one model loaded at a time.

    Raises:
        RuntimeError: a run is not recorded in ``out`` (trained by another worker still?).
    """
    from pvr_keras.training import load_run

    out = pathlib.Path(out)
    records, _ = ResultsDir(out).read()
    lines = {r["id"]: r for r in records}
    for run in runs:
        if run.run_id not in lines:
            raise RuntimeError(f"run {run.run_id} is not recorded in {out} (another worker's?)")
        yield run, lines[run.run_id], load_run(out / "runs" / run.run_id).model


def result_line(run, record, sweep):
    """The flat results line of a finished run: config fields, finals, flags, curves."""
    final = record.get("final") or {}
    history = record.get("history") or {}
    return {
        "id": run.run_id,
        "sweep": sweep,
        **run.to_dict(),
        "train_accuracy": final.get("train_eval_accuracy"),  # evaluated after the last epoch
        "test_accuracy": final.get("test_accuracy"),
        # Holdout runs: accuracy on an IID test set beside the held-out one (else None).
        "iid_test_accuracy": final.get("iid_test_accuracy"),
        "train_loss": final.get("train_loss"),
        "test_loss": final.get("test_loss"),
        "failed": record.get("failed"),
        "failed_rule": record.get("failed_rule"),
        "status": record.get("status"),
        "epochs_completed": record.get("epochs_completed"),
        "wall_time_s": record.get("wall_time_s"),
        "num_params": record.get("num_params"),
        "backend": record.get("backend"),
        "input": record.get("input"),
        "jit_compile": record.get("jit_compile"),
        "host": record.get("host"),
        "finished": record.get("finished"),
        "run_dir": f"runs/{run.run_id}",
        "curve_epoch": history.get("epoch", []),
        **{f"curve_{key}": history.get(key, []) for key in CURVES},
    }


class Progress:
    """Runs done / total and an ETA weighted by each run's rough cost (``Run.cost``)."""

    def __init__(self, name, total, done, todo, log):
        self.name, self.total, self.done, self.log = name, total, done, log
        self.cost_left = sum(run.cost() for run in todo)
        self.cost_done = 0
        self.t0 = time.perf_counter()

    def finished(self, run, line):
        self.done += 1
        self.cost_done += run.cost()
        self.cost_left -= run.cost()
        elapsed = time.perf_counter() - self.t0
        eta = elapsed / self.cost_done * self.cost_left if self.cost_done else float("nan")
        flag = " FAILED" if line["failed"] else ""
        if run.spec.metric == "mse":  # a regression: its losses say how it did
            how = f"train MSE {_fmt(line['train_loss'])} test MSE {_fmt(line['test_loss'])}"
        else:
            how = f"train {_fmt(line['train_accuracy'])} test {_fmt(line['test_accuracy'])}"
        self.log(
            f"[{self.name}] {self.done}/{self.total} runs done | {run.run_id.rsplit('-', 1)[0]}"
            f": {how}{flag} ({line['wall_time_s'] / 60:.1f} min) | "
            f"elapsed {elapsed / 60:.1f} min, ETA {eta / 60:.1f} min"
        )


def _fmt(value):
    return "n/a" if value is None else f"{value:.3f}"


def run_sweep(
    runs,
    results_dir,
    *,
    name,
    figure=None,
    shard_index=0,
    shard_count=1,
    claims=True,
    trainer=train_run,
    log=print,
    population=1,
    only=None,
    wait=False,
):
    """Trains every run of ``runs`` that ``results_dir`` has no record of.

    Args:
        runs: ``Run`` list (any kind), the whole grid (repeats are dropped).
        results_dir: the results directory (created if needed).
        name: the sweep's name; its run ids and ``figure`` go to ``sweeps/<name>.json``.
        figure: JSON-ready plotting spec for ``sweeps.figures`` (or None).
        shard_index, shard_count: train only shard ``i`` of ``n`` (``grid.shard``).
        claims: claim each run before training it (needed when several workers share
            ``results_dir`` without disjoint shards; harmless otherwise).
        trainer: ``(run, run_dir) -> run record``; ``train_run`` by default. With
            ``population`` above 1 it must return what ``training.runs.run`` returns (it is
            called inside ``runs.deferring()`` to collect each run's arguments).
        log: where progress lines go.
        population: train up to this many runs of one architecture at a time as one JAX
            program (``training.population``); 1: one run after another.
        only: train only the runs of these ids (a launched job's, ``pvr_keras.launch``);
            the sweep's definition still holds the whole grid.
        wait: a run claimed by a live worker is waited for (then skipped if that worker
            recorded it, else trained here), not skipped: a job whose run is still held by
            an earlier job of it (its launcher killed) finishes it.

    Returns:
        A dict: ``total`` (grid), ``shard`` (runs in this shard), ``recorded_before``,
        ``trained`` (ids this call recorded), ``failed_runs`` (those of them failed by the
        paper's rule), ``busy`` (ids claimed by live workers, not
        run here), ``problems`` (bad lines found in the results file at start and moved to
        ``results.corrupt``; their runs are recorded again, from their run folders).

    Example:
        >>> from pvr_keras.sweeps import expand
        >>> runs = expand({"seed": [0, 1]}, dict(num_examples=1000, epochs=1, min_steps=0))
        >>> summary = run_sweep(runs, "/tmp/my_sweep", name="demo")  # doctest: +SKIP
    """
    runs = unique(runs)
    if not runs:
        raise ValueError("runs must hold at least one Run")
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"name must be a non-empty string without '/'; received {name!r}")
    mine = shard(runs, shard_index, shard_count)
    if only is not None:
        mine = [run for run in mine if run.run_id in only]
    results = ResultsDir(results_dir, create=True)
    ids = [run.run_id for run in runs]
    before, after = results.write_sweep(name, {"name": name, "figure": figure, "run_ids": ids})
    if 0 < before < after:
        log(f"[{name}] the sweep grows from {before} to {after} runs")
    problems = results.repair()  # bad lines (a writer killed mid-line) -> results.corrupt
    for problem in problems:
        log(f"[{name}] warning: {results.results} {problem}; moved to results.corrupt")
    recorded = results.recorded_ids()
    todo = [run for run in mine if run.run_id not in recorded]
    where = f"shard {shard_index}/{shard_count}: " if shard_count > 1 else ""
    log(
        f"[{name}] {len(runs)} runs in the grid; {where}{len(mine)} to do, "
        f"{len(mine) - len(todo)} already recorded, {len(todo)} to run -> {results.path}"
    )
    progress = Progress(name, len(mine), len(mine) - len(todo), todo, log)
    owner = Claims(results.claims) if claims else None
    if owner is not None:
        owner.clean(recorded)
    trained, busy, failed = [], [], []
    if population > 1:
        _train_populations(todo, results, owner, trainer, population, name, progress, log,
                           trained, busy, failed, wait)  # fmt: skip
        todo = []
    for run in todo:
        claim = _claim(owner, run, name, log, wait)
        if claim is False:
            busy.append(run.run_id)
            continue
        try:
            if run.run_id in results.recorded_ids():  # finished elsewhere meanwhile
                progress.done += 1
                if claim is not None:
                    claim.release(done=True)
                continue
            record = trainer(run, results.run_dir(run.run_id))
            _recorded(run, record, results, name, progress, trained, failed)
        except BaseException:
            if claim is not None:
                claim.release(done=False)
            raise
        if claim is not None:
            claim.release(done=True)
    return {
        "total": len(runs),
        "shard": len(mine),
        "recorded_before": len(mine) - len(todo),
        "trained": trained,
        "busy": busy,
        "failed_runs": failed,
        "problems": problems,
    }


def _recorded(run, record, results, name, progress, trained, failed):
    line = result_line(run, record, name)
    if results.append(line):
        trained.append(run.run_id)
    if line["failed"]:
        failed.append(run.run_id)
    progress.finished(run, line)


WAIT_S = 2.0  # how often a waiting worker looks at a claim a live worker holds


def _claim(owner, run, name, log, wait=False):
    """The run's claim (None: no claims kept), or False when a live worker holds it
    (``wait``: once it lets go, the claim)."""
    if owner is None:
        return None
    claim = owner.try_claim(run.run_id)
    if claim is None and wait:
        holder = owner.holder(run.run_id) or {}
        log(f"[{name}] {run.run_id}: claimed by a live worker ({holder.get('host')} pid "
            f"{holder.get('pid')}); waiting for it")  # fmt: skip
        while claim is None:
            time.sleep(WAIT_S)
            claim = owner.try_claim(run.run_id)
    if claim is None:
        holder = owner.holder(run.run_id) or {}
        log(
            f"[{name}] {run.run_id}: claimed by a live worker "
            f"({holder.get('host')} pid {holder.get('pid')}), skipped"
        )
        return False
    if claim.previous:
        log(
            f"[{name}] {run.run_id}: took over a stale claim of "
            f"{claim.previous.get('host')} pid {claim.previous.get('pid')} (no longer held)"
        )
    return claim


def _train_populations(todo, results, owner, trainer, size, name, progress, log, trained,
                       busy, failed, wait=False):  # fmt: skip
    """The runs of ``todo`` in populations of up to ``size`` (``training.population``)."""
    from pvr_keras.training import population, runs

    for group in population.groups(todo, size):
        claims, members = [], []
        try:
            for run in group:
                claim = _claim(owner, run, name, log, wait)
                if claim is False:
                    busy.append(run.run_id)
                    continue
                claims.append(claim)
                if run.run_id in results.recorded_ids():  # finished elsewhere meanwhile
                    progress.done += 1
                    continue
                members.append(run)
            arguments = []
            with runs.deferring():
                for run in members:
                    found = trainer(run, results.run_dir(run.run_id))
                    if not isinstance(found, runs.Deferred):
                        raise TypeError(
                            f"a sweep's trainer must return training.runs.run(...) to train in "
                            f"a population; {getattr(trainer, '__name__', trainer)!r} "
                            f"returned a {type(found).__name__}"
                        )
                    arguments.append(found.arguments)
            if members:
                log(f"[{name}] a population of {len(members)}: "
                    f"{', '.join(run.run_id for run in members)}")  # fmt: skip
                records = population.train(arguments, log=log)
                for run, record in zip(members, records, strict=True):
                    _recorded(run, record, results, name, progress, trained, failed)
        except BaseException:
            for claim in claims:
                if claim is not None:
                    claim.release(done=False)
            raise
        for claim in claims:
            if claim is not None:
                claim.release(done=True)


__all__ = ["Progress", "result_line", "run_sweep", "train_run"]
