"""Fast vs slow learners and their representations (Section 6.1: Figures 12 and 13).

    python recipes/fast_slow.py                          # quick, on a CPU
    python recipes/fast_slow.py --preset paper           # MLP, 300k examples, 2 neighbours
    python recipes/fast_slow.py --preset paper_mixer     # MLP-Mixer, 5M examples, 5 neighbours
    python recipes/fast_slow.py --preset medium          # Appendix E's setting, 80 epochs
    python recipes/fast_slow.py --preset medium_main     # Figure 12's MLP setting, 80 epochs

Trains several seeds of one high-complexity setting (a sweep over seeds: resumable, each run's
model saved as ``runs/<id>/model.keras``), labels each run fast, slow or between by the rule of
``pvr_keras.analysis.dynamics`` (printed and stored), picks the two fastest fast learners and
the slow learner that fits its training set latest, and computes linear CKA between their
``pre_logits`` activations on the slow learner's training set: CKA(fast1, fast2) and
CKA(fast1, slow). The paper finds the first higher. For mod_sum it also stores which label
frequencies each seed's features use (``analysis.label_frequencies``): seeds that place the
labels on circles of different frequencies have CKA near 0 however well both generalise. When
the seeds give no slow learner (or fewer than two fast ones), it says so and computes only what
exists. CKA needs the models in ``--out``: where some runs are only records (taken in from a
committed study with tools/import_results.py), they are not trained again; they are labelled,
drawn and tabled like the rest, and CKA compares (and picks among) the seeds whose models are
there, with a note naming the seeds left out; with fewer than two models it is left out.

Writes into ``--out``, named by ``--name`` (default ``fast_slow``): NAME.json (rule, every
seed's fit epoch, speed and final accuracies, the picks, CKA plain and debiased, and per hidden
layer: ``by_layer``), NAME.csv (one row per seed), NAME_learning_curves.png (Figure 12:
training and test accuracy per epoch, fast in blue, slow in red, between in grey), NAME_cka.png
(Figure 13) and config_NAME.json, plus
the sweep ``NAME`` (``sweeps/NAME.json``), results.jsonl and run folders. Settings of other
names can share one ``--out`` (a sweep results directory: runs they have in common, and runs
of token_sweep there, are trained once).

Presets. ``paper``: MLP, window 3 (2 neighbours), 300,000 examples, the paper's recipe (200
epochs), 6 seeds; ``paper_mixer``: MLP-Mixer, window 6 (5 neighbours), 5,000,000 examples,
4 seeds: GPU-days. ``quick``: a narrower MLP (widths 128-256-128-64, 8.7x fewer multiply-adds
than the paper's) on window 2 (1 neighbour) with 30,000 examples, 8 seeds, 50 epochs at batch
128: near the data size where it starts to generalise, so seeds differ in speed. ``medium``
(Appendix E's setting: window 3, 300,000 examples, every order of (1, 2, 3) held out, 6 seeds)
and ``medium_main`` (Figure 12's: the same without holdout, 4 seeds, named
``fast_slow_main``): the paper's MLP on 80 epochs, about 25 min a seed on a 2-core CPU; see
docs/results/ for what they measured. Every flag of a token run (``--epochs``,
``--holdout``, ``--model``, ``--model.widths``, ...) sets the seeds' common run; ``--seed``
takes the seeds (at least two: ``--seed 0 1 2``).

Measured (quick, JAX, 12.6 minutes on a shared, loaded 2-core CPU): every seed fits its
training set, at epochs 21-38; five are fast (21-26, test accuracy >= 99.9%), one between (30),
two slow (35 and 38; the slowest ends at 80.5% test accuracy). Linear CKA of pre_logits on the
slow learner's training set: fast 6 vs fast 0 0.013, fast 6 vs slow 2 0.087; the means over
all fast-fast and all fast-slow pairs are 0.22 and 0.21. So the paper's ordering does not show
in this small setting: pairs of seeds differ widely (0.01 to 0.89) whatever their speed, as if
each seed picked its own features for the modular sum. Other backends and seeds give other
numbers.
"""

import dataclasses
import functools
import json
import pathlib

from pvr_keras import cli, files


@dataclasses.dataclass(frozen=True)
class Own:
    threshold: float = dataclasses.field(
        default=0.999, metadata={"help": "training accuracy that counts as fitted"}
    )
    fast_within: float = dataclasses.field(
        default=1.25, metadata={"help": "fast: fits within this factor of the earliest fit"}
    )
    slow_after: float = dataclasses.field(
        default=1.5, metadata={"help": "slow: fits at this factor of the earliest fit or later"}
    )
    min_gap: int = dataclasses.field(
        default=2, metadata={"help": "slow: and at least this many epochs after it"}
    )
    cka_examples: int = dataclasses.field(
        default=10_000, metadata={"help": "training examples of the slow learner for CKA"}
    )
    out: str = dataclasses.field(default="runs/fast_slow", metadata={"help": "output folder"})
    name: str = dataclasses.field(
        default="fast_slow",
        metadata={"help": "the sweep's name in --out and the stem of the files it writes"},
    )

    def validate(self, run):
        cli.check_range(self, "threshold", 0, 1, low_open=True)
        if not self.fast_within >= 1 or not self.slow_after > self.fast_within:
            raise cli.ConfigError(
                f"need 1 <= --fast-within < --slow-after; received {self.fast_within} and "
                f"{self.slow_after}"
            )
        cli.check_ints(self, ("min_gap",), 0)
        cli.check_ints(self, ("cka_examples",), 4)
        cli.check_stem(self.name)


# The presets: field values over the paper's MLP, window 3 (2 neighbours), 300,000 examples,
# the paper's recipe (200 epochs).
def paper(given):
    return dict(window=3, num_examples=300_000, test_examples=10_000, seed=(0, 1, 2, 3, 4, 5))


def paper_mixer(given):
    return dict(model="mixer", window=6, num_examples=5_000_000, test_examples=10_000,
                seed=(0, 1, 2, 3), out="runs/fast_slow_mixer")  # fmt: skip


def quick(given):
    """A narrower MLP (8.7x fewer multiply-adds per example) on window 2 at 30k examples:
    near the data size where the MLP starts to generalise, so seeds differ in speed."""
    return {"model.widths": (128, 256, 128, 64), "window": 2, "num_examples": 30_000,
            "test_examples": 2_000, "seed": (0, 1, 2, 3, 4, 5, 6, 7), "epochs": 50,
            "warmup_epochs": 1, "min_steps": 0, "batch_size": 128, "cka_examples": 5_000,
            "out": "runs/fast_slow_quick"}  # fmt: skip


def medium(given):
    """Appendix E's setting (the paper's CKA numbers, 0.9146 and 0.3182, are measured there):
    the paper's MLP, window 3, 300k examples, every permutation of (1, 2, 3) held out, 6
    seeds on token_sweep's medium window-3 recipe (80 epochs, 3 of warm-up; the paper: 200
    and 10); about 2.5 hours on a 2-core CPU (about 25 min a seed, measured at window 3)."""
    return dict(paper(given), holdout=6, holdout_values=(1, 2, 3), epochs=80, warmup_epochs=3,
                out="runs/fast_slow_medium")  # fmt: skip


def medium_main(given):
    """Figure 12's MLP setting (no holdout) on the same schedule; its seeds 0 and 1 are the
    holdout study's window-3 holdout-0 runs when both share one --out."""
    return dict(paper(given), seed=(0, 1, 2, 3), epochs=80, warmup_epochs=3,
                out="runs/fast_slow_medium", name="fast_slow_main")  # fmt: skip


PRESETS = {"quick": quick, "medium": medium, "medium_main": medium_main, "paper": paper,
           "paper_mixer": paper_mixer}  # fmt: skip

COMMAND = cli.Command(
    kind="token",
    presets=PRESETS,
    body=None,
    own=Own,
    description=__doc__,
    exclude=("devices", "data_dir", "download", "tensorboard"),
    aliases={"--seeds": "seed", "--widths": "model.widths"},  # the recipe's older flags
)


def runs_of(parsed):
    """One run per seed (``--seed``: at least two); the grid has no other axis."""
    seeds = parsed.axes.get("seed", (parsed.run.seed,))
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be at least two distinct seeds; received {list(seeds)}")
    others = sorted(set(parsed.axes) - {"seed"})
    if others:
        raise ValueError(f"the seeds are this study's one grid axis; received several values "
                         f"of {', '.join(others)}")  # fmt: skip
    return parsed.runs()


def analyse(own, runs, lines):
    """Classifies the runs, picks fast/fast/slow and computes CKA; returns the summary dict."""
    from pvr_keras import analysis

    by_seed = {run.seed: lines[run.run_id] for run in runs}
    histories = {
        str(seed): {
            "epoch": line["curve_epoch"],
            "train_eval_accuracy": line["curve_train_eval_accuracy"],
        }
        for seed, line in by_seed.items()
    }
    learners = analysis.classify(
        histories,
        threshold=own.threshold,
        fast_within=own.fast_within,
        slow_after=own.slow_after,
        min_gap=own.min_gap,
    )
    # CKA needs the models: the picks are made among the seeds whose models are in --out
    # (all of them after training here; fewer where some are records taken in from elsewhere).
    have = [r for r in learners if _model_path(own, runs, r.name).is_file()]
    absent = sorted(int(r.name) for r in learners if r not in have)  # learners: by fit epoch
    enough = len(have) >= 2  # else the picks say which seeds CKA would compare
    compared = have if enough else learners
    fast1, fast2, slow = analysis.pick_fast_slow(compared)
    summary = {
        "rule": analysis.describe_rule(own.threshold, own.fast_within, own.slow_after, own.min_gap),
        "seeds": [
            {
                "seed": int(r.name),
                "fit_epoch": r.fit_epoch,
                "speed": r.speed,
                "final_train_accuracy": by_seed[int(r.name)]["train_accuracy"],
                "final_test_accuracy": by_seed[int(r.name)]["test_accuracy"],
                "run_dir": by_seed[int(r.name)]["run_dir"],
            }
            for r in learners
        ],
        "fast1": int(fast1.name) if fast1 else None,
        "fast2": int(fast2.name) if fast2 else None,
        "slow": int(slow.name) if slow else None,
        "slow_fits_training_set": bool(slow and slow.fit_epoch is not None),
        "cka": {},
        "notes": [],
    }
    if absent and enough:
        summary["notes"].append(
            f"the models of seeds {absent} are not in {own.out}/runs (records taken in with "
            f"tools/import_results.py, or trained without saving them): CKA compares the seeds "
            f"whose models are here, {sorted(int(r.name) for r in have)}, and picks among them"
        )
    unmodelled_slow = [int(r.name) for r in learners if r.speed == "slow" and r not in compared]
    if slow is None and unmodelled_slow:
        summary["notes"].append(
            f"the slow learners {unmodelled_slow} have no model here: CKA(fast, slow) not computed"
        )
    elif slow is None:
        summary["notes"].append(
            "no clear slow learner among these seeds by the rule: CKA(fast, slow) not computed"
        )
    elif slow.fit_epoch is None:
        summary["notes"].append(
            f"the slow learner (seed {slow.name}) never fits its training set (the paper's slow "
            f"learners do); its CKA is reported anyway"
        )
    if fast1 is None or (fast2 is None and slow is None):
        summary["notes"].append("fewer than two runs to compare: no CKA computed")
        return summary
    if fast2 is None:
        summary["notes"].append("only one fast learner: CKA(fast1, fast2) not computed")
    if not enough:
        summary["notes"].append(
            f"CKA not computed: the models of seeds {absent} are not in {own.out}/runs (trained "
            f"without saving them, or records taken in with tools/import_results.py); it needs "
            f"at least two, and compares the seeds whose models are there"
        )
        return summary
    reference = slow or fast2
    summary["cka"] = _cka(own, runs, compared, fast1, fast2, slow, int(reference.name))
    return summary


def _recorded_without_model(own, runs):
    """Seeds recorded in ``own.out`` whose model is not there (before any work: a folder
    that is not a results folder yet has none)."""
    from pvr_keras import sweeps

    try:
        recorded = sweeps.ResultsDir(own.out).recorded_ids()
    except (FileNotFoundError, ValueError):  # new, or refused later with run_sweep's message
        return []
    return [r.seed for r in runs
            if r.run_id in recorded and not _model_path(own, runs, r.seed).is_file()]  # fmt: skip


def _model_path(own, runs, seed):
    """Where the recipe saved the model of the run of ``seed`` (a str or int)."""
    [run] = [run for run in runs if str(run.seed) == str(seed)]
    return pathlib.Path(own.out) / "runs" / run.run_id / "model.keras"


def _cka(own, runs, learners, fast1, fast2, slow, reference_seed):
    """CKA of the picked pairs, and of every pair of seeds, on one training set: at every
    block's output and at pre_logits (the paper does not say which layer it used)."""
    from pvr_keras import analysis, data
    from pvr_keras.training import load_run

    run_of = {str(run.seed): run for run in runs}
    reference = run_of[str(reference_seed)]
    x, y = data.token_arrays(
        reference.task,
        min(own.cka_examples, reference.num_examples),
        split="train",
        seed=reference_seed,
        holdout=reference.holdout,
    )
    models = {}  # each checked against its checksum
    for learner in learners:
        models[learner.name] = load_run(_model_path(own, runs, learner.name).parent).model
    result = {
        "layer": "pre_logits",
        "seeds": sorted(int(name) for name in models),
        "examples": int(len(x)),
        "on": f"training set of seed {reference_seed}"
        + (" (the slow learner)" if slow is not None else " (no slow learner)"),
    }
    # The picked pairs and every pair (so that one pick does not decide the comparison).
    candidates = {"fast1_fast2": (fast1, fast2), "fast1_slow": (fast1, slow)}
    pairs = {key: (a.name, b.name) for key, (a, b) in candidates.items() if None not in (a, b)}
    result["by_layer"] = analysis.cka_by_layer(models, x, pairs, order=int)
    features = {name: analysis.activations(m, "pre_logits", x) for name, m in models.items()}
    top = result["by_layer"]["pre_logits"]
    for key, (a, b) in pairs.items():
        result[key] = top[key]
        result[key + "_debiased"] = analysis.linear_cka(features[a], features[b], debiased=True)
    result["all_pairs"] = top["all_pairs"]
    result["mean_by_kind"] = analysis.mean_by_kind(
        top["all_pairs"], {r.name: r.speed for r in learners}
    )
    if reference.aggregation == "mod_sum":  # the label circles each seed's features use
        result["label_frequencies"] = {
            seed: analysis.label_frequencies(f, y, reference.task.num_classes)
            for seed, f in sorted(features.items(), key=lambda item: int(item[0]))
        }
    return result


def _plots(own, run, runs, lines, summary, out):
    from pvr_keras import figures

    speed = {s["seed"]: s for s in summary["seeds"]}
    curves = {
        r.seed: {
            "epoch": lines[r.run_id]["curve_epoch"],
            "train": lines[r.run_id]["curve_train_eval_accuracy"],
            "test": lines[r.run_id]["curve_test_accuracy"],
        }
        for r in runs
    }
    speeds = {seed: (info["speed"], info["fit_epoch"]) for seed, info in speed.items()}
    picks = {summary["fast1"], summary["fast2"], summary["slow"]} - {None}
    title = (
        f"{run.model} window {run.window} ({run.window - 1} "
        f"neighbour{'' if run.window == 2 else 's'}), "
        f"{run.num_examples:,} examples: fast (blue), slow (red), between (grey); thick: compared"
    )
    figures.fast_slow_curves(curves, speeds, out / f"{own.name}_learning_curves.png",
                             threshold=own.threshold, picks=picks, title=title)  # fmt: skip
    cka = summary["cka"]
    names = {
        "fast1_fast2": f"fast {summary['fast1']} vs\nfast {summary['fast2']}",
        "fast1_slow": f"fast {summary['fast1']} vs\nslow {summary['slow']}",
    }
    bars = [(names[k], cka[k], "tab:blue" if k == "fast1_fast2" else "tab:red") for k in names
            if k in cka]  # fmt: skip
    means = cka.get("mean_by_kind", {})
    for kind, color in (("fast_fast", "lightsteelblue"), ("fast_slow", "lightsalmon")):
        if kind in means:
            bars.append((f"mean of all\n{kind.replace('_', '-')} pairs", means[kind], color))
    title = (f"linear CKA of pre_logits on the\n{cka['on']}" if bars
             else f"no pair to compare\n(see {own.name}.json)")  # fmt: skip
    figures.cka_bars(bars, out / f"{own.name}_cka.png", title)


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    own = parsed.own
    runs = cli.check_task(lambda: runs_of(parsed))
    from pvr_keras import sweeps

    absent = _recorded_without_model(own, runs)
    if absent:
        print(f"[{own.name}] note: seeds {absent} are recorded in {own.out} without their "
              f"models (taken in from elsewhere?): they are not trained again, and CKA compares "
              f"only the seeds whose models are there")  # fmt: skip
    summary = cli.run_sweep(
        parsed, runs, name=own.name, figure=None,
        trainer=functools.partial(sweeps.train_run, save_model=True), grows=False,
    )  # fmt: skip
    out = pathlib.Path(own.out)
    records, _ = sweeps.ResultsDir(out).read()
    lines = {r["id"]: r for r in records}
    missing = [run.run_id for run in runs if run.run_id not in lines]
    if missing:
        raise RuntimeError(
            f"runs not recorded (trained by another worker?): {missing}; sweep {summary}"
        )
    summary = analyse(own, runs, lines)
    summary["config"] = {"run": parsed.run.to_dict(), "grid": cli.to_dict(parsed.axes),
                         "recipe": cli.to_dict(own)}  # fmt: skip
    files.write_text(out / f"{own.name}.json", json.dumps(summary, indent=1) + "\n")
    columns = ["seed", "fit_epoch", "speed", "final_train_accuracy", "final_test_accuracy"]
    files.write_text(
        out / f"{own.name}.csv",
        ",".join(columns)
        + "\n"
        + "".join(",".join(str(s[c]) for c in columns) + "\n" for s in summary["seeds"]),
    )
    _plots(own, parsed.run, runs, lines, summary, out)
    _report(summary, out, own.name)
    return summary


def _frequencies(freq):
    """'k=1 0.66, k=5 0.34 (class means: 67% of the variance)': the frequencies that count."""
    from pvr_keras.analysis import main_frequencies

    shares = main_frequencies(freq["frequency_share"])
    main = ", ".join(f"k={k} {s:.2f}" for k, s in shares) or "none"
    return f"{main} (class means: {freq['class_share']:.0%} of the variance)"


def _report(summary, out, name):
    print(f"\nrule: {summary['rule']}")
    for s in summary["seeds"]:
        print(
            f"  seed {s['seed']}: {s['speed']:7s} fit epoch {s['fit_epoch']}, train "
            f"{s['final_train_accuracy']:.3f}, test {s['final_test_accuracy']:.3f}"
        )
    cka = summary["cka"]
    for key in ("fast1_fast2", "fast1_slow"):
        if key in cka:
            print(f"  CKA {key}: {cka[key]:.4f} (debiased {cka[key + '_debiased']:.4f})")
    for kind, value in cka.get("mean_by_kind", {}).items():
        print(f"  mean CKA over {kind.replace('_', '-')} pairs: {value:.4f}")
    for layer, values in cka.get("by_layer", {}).items():
        shown = ", ".join(
            f"{k} {values[k]:.3f}" for k in ("fast1_fast2", "fast1_slow") if k in values
        )
        print(f"  {layer}: CKA {shown}")
    for seed, freq in cka.get("label_frequencies", {}).items():
        print(f"  seed {seed}: label frequencies {_frequencies(freq)}")
    for note in summary["notes"]:
        print(f"  note: {note}")
    print(
        f"wrote {out}/{name}.json, {name}.csv, {name}_learning_curves.png, {name}_cka.png, "
        f"config_{name}.json"
    )


if __name__ == "__main__":
    cli.main(main)
