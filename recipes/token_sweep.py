"""The paper's token-task sweeps (Figures 9-11, 14, 16, 17), resumable, shardable, plotted.

    python recipes/token_sweep.py --sweep size_window           # quick, on a CPU
    python recipes/token_sweep.py --sweep holdout --preset paper --out results/paper
    python recipes/token_sweep.py --sweep size_window --preset paper --shard 3/8   # machine 3
    python recipes/token_sweep.py --sweep pointer --preset paper --dry-run        # size it

Sweeps (``--sweep``):

- ``size_window``: training-set size x window x architecture, mod_sum (Figures 9, 10, 11).
- ``aggregations``: size x window for each aggregation, MLP (Figure 16).
- ``pointer``: size x window without and with the pointer (Figure 17; MLP-Mixer in the paper).
- ``holdout``: holdout-k for windows 2 and 3, k = 0..window! (Figure 14; Appendix E's MLP on
  300k examples). Runs whose final training accuracy is below 60% are *discarded from the
  figure's means, as the paper does*; they are still drawn (open circles) and recorded.

Every run trains in ``OUT/runs/<id>/`` and appends one line to ``OUT/results.jsonl``
(``pandas.read_json(path, lines=True)``); started again, the sweep runs only what is missing.
Killed at any point, a rerun resumes the killed run from its last epoch. Several machines can
share ``OUT`` (claims) and/or take ``--shard i/n`` of the grid. At the end (and any time with
``python tools/make_figures.py OUT``) the figures go to ``OUT/figures/``.

Presets. ``quick`` (default) runs on a 2-core CPU in under 20 minutes per sweep: the MLP only
(the others cost 3.5x (MLP 2x) to ~70-100x (Transformer, MLP-Mixer) its multiply-adds per
example), training sets of 2x10^3-10^4 (3x10^4 for holdout and pointer), 2,000 test
examples, and a shortened recipe: batch 128 (not 1024: eight times the updates per epoch,
which these small sets need), 12 epochs with a 1-epoch warm-up, and at least 600 steps (the
paper: 800). The ``pointer`` quick sweep uses the MLP where the paper uses MLP-Mixer; the
``holdout`` quick sweep, window 2 only, a narrower MLP (widths 128-256-128-64) for 50 epochs,
which learns window 2 from 30k examples on a CPU (the paper's MLP does not in that time).

``paper`` carries the paper's grids with its recipe (SGD momentum 0.9, batch 1024, 200 epochs,
10 warm-up, >= 800 steps), 3 seeds (5 for holdout), 10,000 test examples: sizes 10^2-10^6 for
all four architectures and windows 1-4, plus 3x10^6-5x10^7 for the MLP and MLP-Mixer (Figure
11). ``--dry-run`` prints the number of runs and training examples per architecture. Expected
GPU time (an estimate from these counts, not measured: we assume about 10^6 training
examples/s for the MLP and 10^5 for MLP-Mixer and Transformer on one H100-class GPU,
evaluation included): ``size_window`` paper is 504 runs, 1.6x10^11 training examples each for
the MLP and MLP-Mixer and 3.5x10^9 each for MLP 2x and Transformer, so about 2 GPU-days for
the MLPs and 18 for MLP-Mixer, almost all in the 10^7-5x10^7 runs (a 5x10^7 MLP-Mixer run
alone is ~1 GPU-day); ``aggregations`` (540 MLP runs) ~5 GPU-hours; ``pointer`` (216
MLP-Mixer runs up to 10^6) ~1 GPU-day; ``holdout`` 50 MLP runs of 6x10^7 examples, ~1
GPU-hour. Split them over machines with ``--shard`` or a shared ``--out``.

Measured quick presets on a 2-core CPU (see docs/results, "What the quick presets show"):
size_window 8.9 and holdout 8.3 min (JAX, under load), aggregations 6.5 min and pointer 5.6 min
(TF, no other load, peak RSS 1.4 GB).
"""

import dataclasses
import math

from pvr_keras import cli
from pvr_keras.runconfig import TOKEN
from pvr_keras.tasks import AGGREGATIONS

SWEEPS = ("size_window", "aggregations", "pointer", "holdout")
ALL_AGGREGATIONS = AGGREGATIONS  # the table's names (pvr_keras.tasks)
PAPER_SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
MASSIVE_SIZES = (3_000_000, 10_000_000, 50_000_000)  # Figure 11: MLP and MLP-Mixer only
# The sweep's grid is the run flags given several values (--window 1 2 --seed 0 1); its older
# plural flags still read.
ALIASES = {"--models": "model", "--windows": "window", "--sizes": "num_examples",
           "--aggregations": "aggregation", "--holdouts": "holdout", "--seeds": "seed",
           "--widths": "model.widths"}  # fmt: skip
GRID = ("model", "window", "num_examples", "holdout", "seed", "aggregation")
APPENDIX_E = (3, 6, (1, 2, 3))  # window 3, all 6 permutations of (1, 2, 3) held out

QUICK_RECIPE = dict(
    epochs=12, warmup_epochs=1, min_steps=600, batch_size=128, learning_rate=0.05,
    test_examples=2_000,
)  # fmt: skip
PAPER_RECIPE = dict(test_examples=10_000)  # the paper's token recipe, training.TOKEN
# medium: the paper's recipe shortened to 30 epochs (2 of warm-up, the cosine decay over the
# rest), and to 80 epochs (3 of warm-up) at window 3, whose MLP needs the longer schedule
# (measured, 300k examples: on the 30-epoch schedule it had fit 16% of its training set at
# epoch 20, on the 80-epoch one 99.6% at epoch 36, with 94.9% test accuracy). Sized so that
# each study finishes in about 2 hours on a 2-core CPU.
MEDIUM_RECIPE = dict(test_examples=10_000, epochs=30, warmup_epochs=2)
MEDIUM_BY_WINDOW = {3: dict(epochs=80, warmup_epochs=3)}


def quick(given):
    """Minutes on a 2-core CPU: the MLP, small training sets, a shortened recipe."""
    sweep = given.get("sweep", "size_window")
    if sweep == "holdout":  # a narrower MLP that learns window 2 from 30k examples on a CPU
        axes = {"model": "mlp", "model.widths": (128, 256, 128, 64), "window": 2,
                "num_examples": 30_000, "seed": (0, 1)}  # fmt: skip
        return {**QUICK_RECIPE, **axes, "epochs": 50, "min_steps": 0}
    axes = {
        "size_window": dict(window=(1, 2), num_examples=(2_000, 5_000, 10_000), seed=(0, 1)),
        "aggregations": dict(
            window=(2, 3), num_examples=(3_000, 10_000), seed=0, aggregation=ALL_AGGREGATIONS
        ),  # fmt: skip
        "pointer": dict(window=(1, 2), num_examples=(2_000, 10_000, 30_000), seed=0),
    }.get(sweep, {})
    return {**QUICK_RECIPE, "model": "mlp", **axes}


def medium(given):
    """The studies of docs/results: the paper's MLP (and 1/8-width Transformer and Mixer)
    on the paper's recipe shortened to 30 epochs (80 at window 3)."""
    sweep = given.get("sweep", "size_window")
    axes = {
        "holdout": dict(window=(2, 3), num_examples=300_000, seed=(0, 1)),
        "size_window": dict(
            window=(2, 3), num_examples=(10_000, 30_000, 100_000, 300_000), seed=(0, 1)
        ),  # fmt: skip
    }.get(sweep, {})
    return {**MEDIUM_RECIPE, "model": "mlp", **axes}


def paper(given):
    """The paper's grids with its recipe (200 epochs, ...), 3 seeds (5 for holdout)."""
    sweep = given.get("sweep", "size_window")
    axes = {
        "size_window": dict(model=("mlp", "mlp2x", "transformer", "mixer"),
                            window=(1, 2, 3, 4), num_examples=PAPER_SIZES, seed=(0, 1, 2)),
        "aggregations": dict(model="mlp", window=(1, 2, 3, 4), num_examples=PAPER_SIZES,
                             seed=(0, 1, 2), aggregation=ALL_AGGREGATIONS),
        "pointer": dict(model="mixer", window=(1, 2, 3, 4), num_examples=PAPER_SIZES,
                        seed=(0, 1, 2)),
        "holdout": dict(model="mlp", window=(2, 3), num_examples=300_000,
                        seed=(0, 1, 2, 3, 4)),
    }[sweep]  # fmt: skip
    return {**PAPER_RECIPE, **axes}


PRESETS = {"quick": quick, "medium": medium, "paper": paper}


@dataclasses.dataclass(frozen=True)
class Own:
    sweep: str = dataclasses.field(
        default="size_window", metadata={"choices": SWEEPS, "help": "which figure's sweep"}
    )
    out: str = dataclasses.field(default="runs/token_sweep", metadata={"help": "results directory"})
    shard: str = dataclasses.field(default="0/1", metadata={"help": "run shard i of n: i/n"})
    claims: bool = dataclasses.field(
        default=True, metadata={"help": "claim runs (workers sharing --out)"}
    )
    figures: bool = dataclasses.field(default=True, metadata={"help": "draw figures at the end"})
    dry_run: bool = dataclasses.field(
        default=False, metadata={"help": "print the grid's size and cost, train nothing"}
    )

    def validate(self, run):
        from pvr_keras import sweeps

        cli.check_task(lambda: sweeps.parse_shard(self.shard))


def build(parsed):
    """The sweep's runs (all checked) and its figure spec, from a parsed command line."""
    from pvr_keras import sweeps

    run, own, given, preset = parsed.run, parsed.own, parsed.given, parsed.preset
    if preset == "medium" and own.sweep not in ("holdout", "size_window"):
        raise ValueError(f"the {own.sweep} sweep has presets paper, quick; received 'medium'")
    if run.model_kwargs.get("widths") and {r.model for r in parsed.runs()} - {"mlp"}:
        models = tuple(dict.fromkeys(r.model for r in parsed.runs()))
        raise ValueError(f"widths is for the mlp model only; received models {models}")
    holdouts = parsed.axes.get("holdout", (run.holdout,)) if "holdout" in given else None
    if own.sweep != "holdout" and holdouts not in (None, (0,)):
        raise ValueError(f"holdouts is for the holdout sweep; received {holdouts} for {own.sweep}")
    axes = {k: v for k, v in parsed.axes.items() if k != "holdout"}
    if own.sweep == "pointer":
        axes["pointer"] = (False, True)
    # A grid's extra runs are left out once any of its axes is given on the command line.
    axes_given = bool(set(given) & set(GRID))
    runs = []
    if own.sweep == "holdout":
        for window in parsed.axes.get("window", (run.window,)):
            every = math.factorial(window)
            ks = (0, 1, every) if preset == "medium" else range(every + 1)
            ks = holdouts if holdouts is not None else ks
            runs += sweeps.expand({**axes, "window": (window,), "holdout": tuple(ks)}, run)
        if preset in ("medium", "paper") and not axes_given:
            window, k, values = APPENDIX_E
            runs += sweeps.expand(
                {**axes, "window": (window,), "holdout": (k,), "holdout_values": (values,)}, run
            )
    else:
        runs = sweeps.expand(axes, run) if axes else [run]
        if own.sweep == "size_window" and preset == "paper" and not axes_given:
            massive = {**axes, "model": ("mlp", "mixer"), "num_examples": MASSIVE_SIZES}
            runs += sweeps.expand(massive, run)
    if preset == "medium":
        # The window-3 MLP needs the longer schedule, unless the command line gives one.
        runs = [
            r.replace(**{k: v for k, v in MEDIUM_BY_WINDOW[r.window].items() if k not in given})
            if r.window in MEDIUM_BY_WINDOW else r
            for r in runs
        ]  # fmt: skip
        if own.sweep == "size_window" and not axes_given:
            runs += medium_size_window_extras(axes, run, given)
    return sweeps.unique(runs), dict(sweeps.FIGURES[own.sweep])


def medium_size_window_extras(axes, run, given):
    """Figures 9-10: 1/8-width Transformer and MLP-Mixer at window 2 where the MLP fails, and
    the MLP on the paper's own 200-epoch recipe at the small sizes, where the medium
    schedule's 800-900 steps do not fit the training set (the paper's: 2,000 and 5,900)."""
    from pvr_keras import sweeps

    small = {**axes, "window": (2,)}
    others = sweeps.expand(
        {**small, "model": ("transformer", "mixer"), "num_examples": (10_000, 30_000, 100_000),
         "seed": (0,), "width": (0.125,)},
        run,
    )  # fmt: skip
    recipe = {k: v for k, v in (("epochs", TOKEN.epochs), ("warmup_epochs", TOKEN.warmup_epochs))
              if k not in given}  # fmt: skip
    paper_mlp = sweeps.expand(
        {**small, "model": ("mlp",), "num_examples": (10_000, 30_000), "seed": (0, 1)},
        run.replace(**recipe),
    )
    return others + paper_mlp


def describe(runs):
    """Runs and training examples (epochs x set size) per architecture, as text."""
    per_model = {}
    for run in runs:
        count, cost = per_model.get(run.model, (0, 0))
        per_model[run.model] = (count + 1, cost + run.train_examples())
    return "; ".join(
        f"{model}: {count} runs, {cost:.2e} training examples"
        for model, (count, cost) in per_model.items()
    )


COMMAND = cli.Command(
    kind="token",
    presets=PRESETS,
    own=Own,
    body=None,
    description=__doc__,
    exclude=("devices", "data_dir", "download", "tensorboard"),
    aliases=ALIASES,
)


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    runs, figure = cli.check_task(lambda: build(parsed))
    name = parsed.own.sweep if parsed.preset == "quick" else f"{parsed.own.sweep}_{parsed.preset}"
    return cli.run_sweep(parsed, runs, name=name, figure=figure, describe=describe)


if __name__ == "__main__":
    cli.main(main)
