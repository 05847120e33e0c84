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
exists.

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
docs/results/ for what they measured.

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
import re

from pvr_keras import config as configs
from pvr_keras.tasks import AGGREGATIONS
from pvr_keras.training.recipe import TOKEN


@dataclasses.dataclass(frozen=True)
class Config:
    model: str = dataclasses.field(
        default="mlp",
        metadata={"choices": ("mlp", "mlp2x", "transformer", "mixer"), "help": "architecture"},
    )
    widths: tuple[int, ...] | None = dataclasses.field(
        default=None, metadata={"help": "MLP hidden widths (default: the paper's)"}
    )
    window: int = dataclasses.field(default=3, metadata={"help": "window (neighbours + 1)"})
    aggregation: str = dataclasses.field(default="mod_sum", metadata={"choices": AGGREGATIONS})
    holdout: int = dataclasses.field(default=0, metadata={"help": "holdout-k (Appendix E)"})
    holdout_values: tuple[int, ...] | None = dataclasses.field(
        default=None,
        metadata={"help": "tuple whose permutations are held out (default 0..window-1)"},
    )
    num_examples: int = dataclasses.field(default=300_000, metadata={"help": "training set"})
    test_examples: int = 10_000
    seeds: tuple[int, ...] = dataclasses.field(
        default=(0, 1, 2, 3, 4, 5), metadata={"help": "seeds (data and initialisation)"}
    )
    epochs: int = TOKEN.epochs  # the paper's token recipe (training.TOKEN) by default
    warmup_epochs: int = TOKEN.warmup_epochs
    min_steps: int = TOKEN.min_steps
    batch_size: int = TOKEN.batch_size
    learning_rate: float = TOKEN.learning_rate
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
    backend: str | None = configs.backend_field()

    def validate(self):
        configs.check_range(self, "threshold", 0, 1, low_open=True)
        if not self.fast_within >= 1 or not self.slow_after > self.fast_within:
            raise configs.ConfigError(
                f"need 1 <= --fast-within < --slow-after; received {self.fast_within} and "
                f"{self.slow_after}"
            )
        configs.check_ints(self, ("min_gap",), 0)
        configs.check_ints(self, ("cka_examples",), 4)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", self.name):
            raise configs.ConfigError(
                f"--name must be letters, digits, '_', '.' or '-' (a file name stem); "
                f"received {self.name!r}"
            )
        configs.check_task(lambda: runs_of(self))  # every run's task, model and recipe


PRESETS = {
    # A narrower MLP (8.7x fewer multiply-adds per example) on window 2 at 30k examples:
    # near the data size where the MLP starts to generalise, so seeds differ in speed.
    "quick": Config(
        widths=(128, 256, 128, 64),
        window=2,
        num_examples=30_000,
        test_examples=2_000,
        seeds=(0, 1, 2, 3, 4, 5, 6, 7),
        epochs=50,
        warmup_epochs=1,
        min_steps=0,
        batch_size=128,
        cka_examples=5_000,
        out="runs/fast_slow_quick",
    ),
    # Appendix E's setting (the paper's CKA numbers, 0.9146 and 0.3182, are measured there):
    # the paper's MLP, window 3, 300k examples, every permutation of (1, 2, 3) held out, 6
    # seeds on token_sweep's medium window-3 recipe (80 epochs, 3 of warm-up; the paper: 200
    # and 10); about 2.5 hours on a 2-core CPU (about 25 min a seed, measured at window 3).
    "medium": Config(
        holdout=6,
        holdout_values=(1, 2, 3),
        seeds=(0, 1, 2, 3, 4, 5),
        epochs=80,
        warmup_epochs=3,
        out="runs/fast_slow_medium",
    ),
    # Figure 12's MLP setting (no holdout) on the same schedule; its seeds 0 and 1 are the
    # holdout study's window-3 holdout-0 runs when both share one --out.
    "medium_main": Config(
        seeds=(0, 1, 2, 3),
        epochs=80,
        warmup_epochs=3,
        out="runs/fast_slow_medium",
        name="fast_slow_main",
    ),
    "paper": Config(),
    "paper_mixer": Config(
        model="mixer",
        window=6,
        num_examples=5_000_000,
        seeds=(0, 1, 2, 3),
        out="runs/fast_slow_mixer",
    ),
}


def runs_of(cfg):
    from pvr_keras import sweeps

    if len(cfg.seeds) < 2 or len(set(cfg.seeds)) != len(cfg.seeds):
        raise ValueError(f"seeds must be at least two distinct seeds; received {cfg.seeds}")
    if cfg.widths is not None and cfg.model not in ("mlp",):
        raise ValueError(f"widths is for the mlp model; received model {cfg.model!r}")
    base = dict(
        model=cfg.model,
        window=cfg.window,
        aggregation=cfg.aggregation,
        holdout=cfg.holdout,
        holdout_values=cfg.holdout_values,
        num_examples=cfg.num_examples,
        test_examples=cfg.test_examples,
        epochs=cfg.epochs,
        warmup_epochs=cfg.warmup_epochs,
        min_steps=cfg.min_steps,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        model_kwargs={"widths": list(cfg.widths)} if cfg.widths else {},
    )
    return sweeps.expand({"seed": cfg.seeds}, base)


def analyse(cfg, runs, lines):
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
        threshold=cfg.threshold,
        fast_within=cfg.fast_within,
        slow_after=cfg.slow_after,
        min_gap=cfg.min_gap,
    )
    fast1, fast2, slow = analysis.pick_fast_slow(learners)
    summary = {
        "rule": analysis.describe_rule(cfg.threshold, cfg.fast_within, cfg.slow_after, cfg.min_gap),
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
    if slow is None:
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
    reference = slow or fast2
    summary["cka"] = _cka(cfg, runs, learners, fast1, fast2, slow, int(reference.name))
    return summary


def _cka(cfg, runs, learners, fast1, fast2, slow, reference_seed):
    """CKA of the picked pairs, and of every pair of seeds, on one training set."""
    import itertools

    import keras

    from pvr_keras import analysis, data
    from pvr_keras import models as _models  # noqa: F401  (registers the custom layers)

    run_of = {str(run.seed): run for run in runs}
    task = run_of[str(reference_seed)].task()
    x, y = data.token_arrays(
        task,
        min(cfg.cka_examples, cfg.num_examples),
        split="train",
        seed=reference_seed,
        holdout=cfg.holdout,
    )
    features, models = {}, {}
    for learner in learners:
        path = pathlib.Path(cfg.out) / "runs" / run_of[learner.name].run_id / "model.keras"
        if not path.exists():
            raise FileNotFoundError(
                f"{path} is missing: the run was trained without saving its model. Use an "
                f"--out folder of this recipe (it saves every model)"
            )
        models[learner.name] = keras.saving.load_model(path)
        features[learner.name] = analysis.activations(models[learner.name], "pre_logits", x)
    result = {
        "layer": "pre_logits",
        "examples": int(len(x)),
        "on": f"training set of seed {reference_seed}"
        + (" (the slow learner)" if slow is not None else " (no slow learner)"),
    }
    # The picked pairs and every pair (so that one pick does not decide the comparison), at
    # every block's output and at pre_logits (the paper does not say which layer it used); one
    # layer at a time, since a Mixer's flattened block outputs are large.
    candidates = {"fast1_fast2": (fast1, fast2), "fast1_slow": (fast1, slow)}
    pairs = {key: (a.name, b.name) for key, (a, b) in candidates.items() if None not in (a, b)}
    blocks = [
        layer.name for layer in models[fast1.name].layers if re.fullmatch(r"block\d+", layer.name)
    ]
    result["by_layer"] = {}
    for layer in [*blocks, "pre_logits"]:
        tapped = features if layer == "pre_logits" else {
            seed: analysis.activations(model, layer, x) for seed, model in models.items()
        }  # fmt: skip
        values = {key: analysis.linear_cka(tapped[a], tapped[b]) for key, (a, b) in pairs.items()}
        values["all_pairs"] = {
            f"{a}-{b}": analysis.linear_cka(tapped[a], tapped[b])
            for a, b in itertools.combinations(sorted(tapped, key=int), 2)
        }
        result["by_layer"][layer] = values
    top = result["by_layer"]["pre_logits"]
    for key, (a, b) in pairs.items():
        result[key] = top[key]
        result[key + "_debiased"] = analysis.linear_cka(features[a], features[b], debiased=True)
    result["all_pairs"] = top["all_pairs"]
    speed = {r.name: r.speed for r in learners}
    by_kind = {}
    for pair, value in top["all_pairs"].items():
        a, b = pair.split("-")
        by_kind.setdefault("_".join(sorted((speed[a], speed[b]))), []).append(value)
    result["mean_by_kind"] = {k: sum(v) / len(v) for k, v in sorted(by_kind.items())}
    if cfg.aggregation == "mod_sum":  # the label circles each seed's features use
        result["label_frequencies"] = {
            seed: analysis.label_frequencies(f, y, task.num_classes)
            for seed, f in sorted(features.items(), key=lambda item: int(item[0]))
        }
    return result


def _plots(cfg, runs, lines, summary, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    speed = {s["seed"]: s for s in summary["seeds"]}
    picks = {summary["fast1"], summary["fast2"], summary["slow"]} - {None}
    fig, (train_ax, test_ax) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    cmaps = {"fast": plt.cm.Blues, "between": plt.cm.Greys, "slow": plt.cm.Reds}
    for i, run in enumerate(sorted(runs, key=lambda r: r.seed)):
        line, info = lines[run.run_id], speed[run.seed]
        color = cmaps[info["speed"]](0.45 + 0.5 * (i + 1) / len(runs))
        fit = info["fit_epoch"] if info["fit_epoch"] is not None else "never"
        label = f"seed {run.seed}: {info['speed']}, fits at {fit}"
        width = 2.2 if run.seed in picks else 1.0
        train_ax.plot(
            line["curve_epoch"],
            line["curve_train_eval_accuracy"],
            color=color,
            lw=width,
            label=label,
        )
        test_ax.plot(
            line["curve_epoch"], line["curve_test_accuracy"], color=color, lw=width, label=label
        )
    train_ax.axhline(cfg.threshold, color="grey", ls=":", lw=0.8)
    for ax, what in ((train_ax, "training accuracy (evaluated)"), (test_ax, "test accuracy")):
        ax.set(xlabel="epoch", ylabel=what, ylim=(0, 1.02), title=what)
        ax.grid(alpha=0.3)
    test_ax.legend(fontsize=7)
    fig.suptitle(
        f"{cfg.model} window {cfg.window} ({cfg.window - 1} "
        f"neighbour{'' if cfg.window == 2 else 's'}), "
        f"{cfg.num_examples:,} examples: fast (blue), slow (red), between (grey); thick: compared",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out / f"{cfg.name}_learning_curves.png", dpi=110)
    plt.close(fig)

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
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * max(1, len(bars)), 3.8))
    if bars:
        ax.bar([b[0] for b in bars], [b[1] for b in bars], color=[b[2] for b in bars])
        for i, (_, v, _) in enumerate(bars):
            ax.text(i, v + 0.01, f"{v:.3f}", ha="center", fontsize=9)
        ax.set_title(f"linear CKA of pre_logits on the\n{cka['on']}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    else:
        ax.text(0.5, 0.5, f"no pair to compare\n(see {cfg.name}.json)", ha="center")
    ax.set(ylim=(0, 1.05), ylabel="CKA")
    fig.tight_layout()
    fig.savefig(out / f"{cfg.name}_cka.png", dpi=110)
    plt.close(fig)


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    configs.start(cfg)
    from pvr_keras import sweeps

    runs = runs_of(cfg)
    out = pathlib.Path(cfg.out)
    sweeps.ResultsDir(out, create=True)  # an incompatible folder fails here, untouched
    configs.write(cfg, out, f"config_{cfg.name}.json")
    sweeps.run_sweep(
        runs,
        out,
        name=cfg.name,
        trainer=functools.partial(sweeps.train_token_run, save_model=True),
    )
    records, _ = sweeps.ResultsDir(out).read()
    lines = {r["id"]: r for r in records}
    missing = [run.run_id for run in runs if run.run_id not in lines]
    if missing:
        raise RuntimeError(f"runs not recorded (trained by another worker?): {missing}")
    summary = analyse(cfg, runs, lines)
    summary["config"] = configs.to_dict(cfg)
    (out / f"{cfg.name}.json").write_text(json.dumps(summary, indent=1) + "\n")
    columns = ["seed", "fit_epoch", "speed", "final_train_accuracy", "final_test_accuracy"]
    (out / f"{cfg.name}.csv").write_text(
        ",".join(columns)
        + "\n"
        + "".join(",".join(str(s[c]) for c in columns) + "\n" for s in summary["seeds"])
    )
    _plots(cfg, runs, lines, summary, out)
    _report(summary, out, cfg.name)
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
    configs.run(main)
