"""What a grid costs before anything is submitted (``--dry-run``): runs, training steps, and
the wall time of those steps from the engine measured for each model on this machine (the
engine cache, ``calibration``) and, where one is recorded, on a GPU.

Only training steps are counted: evaluation, start-up and checkpoints come on top (a few per
cent for the paper's runs, more for tiny ones).
"""

import collections

# Examples per second of the paper's token models at full width, batch 1024, float32, device
# input, measured on one NVIDIA H200 (tools/probes/gpu_check.py, docs/scaling.md "On a GPU");
# ResNet18 on 2x2 MNIST blocks at batch 50. Other widths and batches have no figure.
GPU = "one NVIDIA H200"
GPU_EXAMPLES_PER_S = {("mlp", 1024): 1_271_000, ("mixer", 1024): 40_800, ("resnet18", 50): 11_800}


def steps(run):
    """Training steps of ``run``: epochs x steps per epoch (its recipe's rules)."""
    n = run.num_examples
    return run.train.num_epochs(n) * run.train.steps_per_epoch(n)


def _measured(cache_path=None):
    """``{family: fastest ms per step}`` of this machine's engine cache (nothing measured)."""
    from pvr_keras import calibration

    path = calibration.cache_path() if cache_path is None else cache_path
    machines = calibration.load(path, say=lambda line: None)
    found = machines.get(calibration.machine_key(calibration.machine()), {})
    return {family: min(entry["ms_per_step"].values()) for family, entry in found.items()}


def estimate(runs, recorded=(), cache_path=None):
    """The cost of the runs of ``runs`` not in ``recorded``: a dict with ``runs``, ``to_train``,
    ``steps``, ``by_model`` (``{model family: {"runs", "steps", "cpu_s", "gpu_s"}}``; a
    time is None where no figure is measured) and the totals ``cpu_s`` and ``gpu_s`` (None
    unless every model has a figure)."""
    from pvr_keras import calibration

    measured = _measured(cache_path)
    todo = [run for run in runs if run.run_id not in set(recorded)]
    by_model = collections.OrderedDict()
    for run in todo:
        family = calibration.run_family(run)
        entry = by_model.setdefault(family, {"runs": 0, "steps": 0, "cpu_s": 0.0, "gpu_s": 0.0})
        count = steps(run)
        entry["runs"] += 1
        entry["steps"] += count
        ms = measured.get(family)
        entry["cpu_s"] = (
            None if ms is None or entry["cpu_s"] is None else (entry["cpu_s"] + count * ms / 1000)
        )
        rate = GPU_EXAMPLES_PER_S.get((run.model, run.batch_size)) if run.width == 1 else None
        entry["gpu_s"] = (
            None
            if rate is None or entry["gpu_s"] is None
            else (entry["gpu_s"] + count * run.batch_size / rate)
        )
    totals = {}
    for key in ("cpu_s", "gpu_s"):
        missing = [family for family, e in by_model.items() if e[key] is None]
        known = sum(e[key] for e in by_model.values() if e[key] is not None)
        totals[key] = None if missing else known
        totals[key.replace("_s", "_known_s")] = known  # the models that have a figure
        totals[key.replace("_s", "_missing")] = missing
    return {
        "runs": len(runs),
        "to_train": len(todo),
        "steps": sum(e["steps"] for e in by_model.values()),
        "by_model": dict(by_model),
        **totals,
    }


def total(found, where):
    """``found``'s time on ``where`` (``cpu`` or ``gpu``) as text: the whole, or at least the
    models that have a figure and which have none."""
    if found[f"{where}_s"] is not None:
        return duration(found[f"{where}_s"])
    missing = found[f"{where}_missing"]
    if len(missing) == len(found["by_model"]):
        return "not measured"
    names = ", ".join(family.split(" batch")[0] for family in missing)
    return f"over {duration(found[f'{where}_known_s'])} ({names} not measured)"


def duration(seconds):
    """``seconds`` as a short readable time (``45 s``, ``12 min``, ``3.4 h``, ``2.1 days``)."""
    if seconds is None:
        return "not measured"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def describe(found, *, parallel=None):
    """The lines ``--dry-run`` prints for ``estimate``'s result (``parallel``: jobs at once)."""
    from pvr_keras import calibration

    lines = [
        f"{found['to_train']} of {found['runs']} runs to train, {found['steps']:,} training steps"
    ]
    for family, entry in found["by_model"].items():
        lines.append(
            f"  {family}: {entry['runs']} runs, {entry['steps']:,} steps; this "
            f"machine {duration(entry['cpu_s'])}, {GPU} {duration(entry['gpu_s'])}"
        )
    cpu = calibration.cpu_name()
    lines.append(
        f"one run after another: this machine ({cpu}, {calibration.cores()} cores) "
        f"{total(found, 'cpu')}, {GPU} {total(found, 'gpu')}"
    )
    if parallel and parallel > 1 and found["gpu_s"] is not None:
        lines.append(f"{parallel} GPU jobs at once: about {duration(found['gpu_s'] / parallel)}")
    if found["cpu_s"] is None:
        lines.append(
            "  (a model 'not measured' here has no engine figure on this machine: a "
            "grid of it measures one when it starts; tools/probes/bench_engines.py)"
        )
    return lines
