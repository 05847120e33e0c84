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

Measured quick presets on a 2-core CPU (see the README gallery): size_window 8.9
and holdout 8.3 min (JAX, under load), aggregations 6.5 min and pointer 5.6 min (TF, no other
load, peak RSS 1.4 GB).
"""

import dataclasses
import math

from pvr_keras import config as configs
from pvr_keras.training.recipe import TOKEN

SWEEPS = ("size_window", "aggregations", "pointer", "holdout")
ALL_AGGREGATIONS = ("mod_sum", "median", "maj_vote", "min", "max")
PAPER_SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
MASSIVE_SIZES = (3_000_000, 10_000_000, 50_000_000)  # Figure 11: MLP and MLP-Mixer only

QUICK_RECIPE = dict(
    epochs=12,
    warmup_epochs=1,
    min_steps=600,
    batch_size=128,
    learning_rate=0.05,
    test_examples=2_000,
)
PAPER_RECIPE = dict(  # the paper's token recipe, training.TOKEN
    epochs=TOKEN.epochs,
    warmup_epochs=TOKEN.warmup_epochs,
    min_steps=TOKEN.min_steps,
    batch_size=TOKEN.batch_size,
    learning_rate=TOKEN.learning_rate,
    test_examples=10_000,
)
# medium: the paper's recipe shortened to 30 epochs (2 of warm-up, the cosine decay over the
# rest), and to 80 epochs (3 of warm-up) at window 3, whose MLP needs the longer schedule
# (measured, 300k examples: on the 30-epoch schedule it had fit 16% of its training set at
# epoch 20, on the 80-epoch one 99.6% at epoch 36, with 94.9% test accuracy). Sized so that
# each study finishes in about 2 hours on a 2-core CPU.
MEDIUM_RECIPE = {**PAPER_RECIPE, "epochs": 30, "warmup_epochs": 2}
MEDIUM_BY_WINDOW = {3: dict(epochs=80, warmup_epochs=3)}
# Grid defaults per (sweep, scale); flags replace them.
GRIDS = {
    ("size_window", "quick"): dict(
        models=("mlp",), windows=(1, 2), sizes=(2_000, 5_000, 10_000), seeds=(0, 1)
    ),
    ("size_window", "paper"): dict(
        models=("mlp", "mlp2x", "transformer", "mixer"),
        windows=(1, 2, 3, 4),
        sizes=PAPER_SIZES,
        seeds=(0, 1, 2),
    ),
    ("aggregations", "quick"): dict(
        models=("mlp",),
        windows=(2, 3),
        sizes=(3_000, 10_000),
        seeds=(0,),
        aggregations=ALL_AGGREGATIONS,
    ),
    ("aggregations", "paper"): dict(
        models=("mlp",),
        windows=(1, 2, 3, 4),
        sizes=PAPER_SIZES,
        seeds=(0, 1, 2),
        aggregations=ALL_AGGREGATIONS,
    ),
    ("pointer", "quick"): dict(
        models=("mlp",), windows=(1, 2), sizes=(2_000, 10_000, 30_000), seeds=(0,)
    ),
    ("pointer", "paper"): dict(
        models=("mixer",), windows=(1, 2, 3, 4), sizes=PAPER_SIZES, seeds=(0, 1, 2)
    ),
    # Holdout needs a run that learns its window on a CPU: the narrower MLP of the fast_slow
    # quick preset, 50 epochs at batch 128, learns window 2 from 30k examples (window 3 needs
    # far more data: paper preset only).
    ("holdout", "quick"): dict(
        models=("mlp",),
        widths=(128, 256, 128, 64),
        windows=(2,),
        sizes=(30_000,),
        seeds=(0, 1),
        epochs=50,
        batch_size=128,
        min_steps=0,
    ),
    ("holdout", "paper"): dict(
        models=("mlp",),
        windows=(2, 3),
        sizes=(300_000,),
        seeds=(0, 1, 2, 3, 4),
        appendix_e=True,
    ),
    # Figure 14 with the paper's MLP on 300k examples: holdout-0, holdout-1 and every
    # permutation held out (k = window!), and Appendix E's permutations of (1, 2, 3).
    ("holdout", "medium"): dict(
        models=("mlp",),
        windows=(2, 3),
        sizes=(300_000,),
        seeds=(0, 1),
        holdout_ends=True,
        appendix_e=True,
        recipe_by_window=MEDIUM_BY_WINDOW,
    ),
    # Figures 9-10: the paper's MLP at windows 2 and 3 over 10^4..3x10^5 examples;
    # 1/8-width Transformer and MLP-Mixer at window 2 where the MLP fails; and the MLP on the
    # paper's own 200-epoch recipe at the small sizes, where the medium schedule's 800-900
    # steps do not fit the training set (the paper's: 2,000 and 5,900 steps).
    ("size_window", "medium"): dict(
        models=("mlp",),
        windows=(2, 3),
        sizes=(10_000, 30_000, 100_000, 300_000),
        seeds=(0, 1),
        recipe_by_window=MEDIUM_BY_WINDOW,
        extra=(
            dict(
                models=("transformer", "mixer"),
                width=0.125,
                windows=(2,),
                sizes=(10_000, 30_000, 100_000),
                seeds=(0,),
            ),
            dict(
                models=("mlp",),
                windows=(2,),
                sizes=(10_000, 30_000),
                seeds=(0, 1),
                recipe=dict(epochs=TOKEN.epochs, warmup_epochs=TOKEN.warmup_epochs),
            ),
        ),
    ),  # fmt: skip
}
# Grid keys that are not Config fields: how a scale fills in holdout ks and extra runs.
GRID_ONLY = ("holdout_ends", "appendix_e", "extra", "recipe_by_window")
APPENDIX_E = (3, 6, (1, 2, 3))  # window 3, all 6 permutations of (1, 2, 3) held out


@dataclasses.dataclass(frozen=True)
class Config:
    sweep: str = dataclasses.field(
        default="size_window", metadata={"choices": SWEEPS, "help": "which figure's sweep"}
    )
    scale: str = dataclasses.field(
        default="quick",
        metadata={
            "choices": ("quick", "medium", "paper"),
            "help": "grid and recipe defaults (--preset)",
        },
    )
    models: tuple[str, ...] | None = dataclasses.field(
        default=None, metadata={"help": "architectures (default: the sweep's)"}
    )
    windows: tuple[int, ...] | None = dataclasses.field(default=None, metadata={"help": "windows"})
    sizes: tuple[int, ...] | None = dataclasses.field(
        default=None, metadata={"help": "training-set sizes"}
    )
    aggregations: tuple[str, ...] | None = dataclasses.field(
        default=None, metadata={"help": "aggregations (aggregations sweep; else mod_sum)"}
    )
    holdouts: tuple[int, ...] | None = dataclasses.field(
        default=None, metadata={"help": "holdout k values (holdout sweep; default 0..window!)"}
    )
    seeds: tuple[int, ...] | None = dataclasses.field(default=None, metadata={"help": "seeds"})
    widths: tuple[int, ...] | None = dataclasses.field(
        default=None, metadata={"help": "MLP hidden widths (default: the paper's)"}
    )
    epochs: int | None = None
    warmup_epochs: int | None = None
    min_steps: int | None = dataclasses.field(
        default=None, metadata={"help": "train at least this many steps"}
    )
    batch_size: int | None = None
    learning_rate: float | None = None
    test_examples: int | None = None
    out: str = dataclasses.field(default="runs/token_sweep", metadata={"help": "results directory"})
    shard: str = dataclasses.field(default="0/1", metadata={"help": "run shard i of n: i/n"})
    claims: bool = dataclasses.field(
        default=True, metadata={"help": "claim runs (workers sharing --out)"}
    )
    figures: bool = dataclasses.field(default=True, metadata={"help": "draw figures at the end"})
    dry_run: bool = dataclasses.field(
        default=False, metadata={"help": "print the grid's size and cost, train nothing"}
    )
    backend: str | None = configs.backend_field()

    def validate(self):
        from pvr_keras import sweeps

        configs.check_task(lambda: sweeps.parse_shard(self.shard))
        configs.check_task(lambda: build(self))  # every run of the grid, before any work


PRESETS = {scale: Config(scale=scale) for scale in ("quick", "medium", "paper")}
RECIPES = {"quick": QUICK_RECIPE, "medium": MEDIUM_RECIPE, "paper": PAPER_RECIPE}


def resolved(cfg):
    """``cfg`` with every None filled in from its sweep's grid and recipe defaults."""
    if (cfg.sweep, cfg.scale) not in GRIDS:
        scales = sorted(scale for sweep, scale in GRIDS if sweep == cfg.sweep)
        raise ValueError(
            f"the {cfg.sweep} sweep has presets {', '.join(scales)}; received {cfg.scale!r}"
        )
    grid = GRIDS[cfg.sweep, cfg.scale]
    recipe = RECIPES[cfg.scale]
    fill = {}
    for field in dataclasses.fields(cfg):
        if getattr(cfg, field.name) is None:
            if field.name in grid:
                fill[field.name] = grid[field.name]
            elif field.name in recipe:
                fill[field.name] = recipe[field.name]
    if cfg.aggregations is None and "aggregations" not in grid:
        fill["aggregations"] = ("mod_sum",)
    return dataclasses.replace(cfg, **fill)


def build(cfg):
    """The sweep's runs (all validated) and its figure spec."""
    from pvr_keras import sweeps

    given = {f.name for f in dataclasses.fields(cfg) if getattr(cfg, f.name) is not None}
    grid = GRIDS.get((cfg.sweep, cfg.scale), {})
    cfg = resolved(cfg)
    if cfg.widths and set(cfg.models) - {"mlp"}:
        raise ValueError(f"widths is for the mlp model only; received models {cfg.models}")
    base = dict(
        model_kwargs={"widths": list(cfg.widths)} if cfg.widths else {},
        epochs=cfg.epochs,
        warmup_epochs=cfg.warmup_epochs,
        min_steps=cfg.min_steps,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        test_examples=cfg.test_examples,
    )
    axes = {
        "seed": cfg.seeds,
        "model": cfg.models,
        "aggregation": cfg.aggregations,
        "pointer": (False, True) if cfg.sweep == "pointer" else (True,),
        "window": cfg.windows,
        "num_examples": cfg.sizes,
    }
    runs = []
    # A grid's extra runs and Appendix E's are left out once any grid axis is given.
    axes_given = given & {"models", "windows", "sizes", "holdouts", "seeds", "aggregations"}
    if cfg.sweep == "holdout":
        for window in cfg.windows:
            every = math.factorial(window)
            ks = (0, 1, every) if grid.get("holdout_ends") else range(every + 1)
            ks = cfg.holdouts if cfg.holdouts is not None else ks
            runs += sweeps.expand({**axes, "window": (window,), "holdout": tuple(ks)}, base)
        if grid.get("appendix_e") and not axes_given:
            window, k, values = APPENDIX_E
            axes_e = {**axes, "window": (window,), "holdout": (k,), "holdout_values": (values,)}
            runs += sweeps.expand(axes_e, base)
    else:
        if cfg.holdouts not in (None, (0,)):
            raise ValueError(
                f"holdouts is for the holdout sweep; received {cfg.holdouts} for {cfg.sweep}"
            )
        runs = sweeps.expand(axes, base)
        if cfg.sweep == "size_window" and cfg.scale == "paper":
            massive = {**axes, "model": ("mlp", "mixer"), "num_examples": MASSIVE_SIZES}
            runs += sweeps.expand(massive, base)
    # Per-window recipe fields of the grid, unless given on the command line.
    by_window = grid.get("recipe_by_window", {})
    runs = [
        dataclasses.replace(
            run, **{k: v for k, v in by_window[run.window].items() if k not in given}
        )
        if run.window in by_window
        else run
        for run in runs
    ]
    # A grid's extra runs (after the per-window recipe: an extra states its own).
    for extra in grid.get("extra", ()) if not axes_given else ():
        more = {"model": extra["models"], "window": extra["windows"]}
        more.update(num_examples=extra["sizes"], seed=extra["seeds"])
        if "width" in extra:
            more["width"] = (extra["width"],)
        recipe = {k: v for k, v in extra.get("recipe", {}).items() if k not in given}
        runs += sweeps.expand({**axes, **more}, {**base, **recipe})
    return sweeps.unique(runs), dict(sweeps.FIGURES[cfg.sweep])


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


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    from pvr_keras import sweeps

    shard_index, shard_count = sweeps.parse_shard(cfg.shard)
    runs, figure = build(cfg)
    name = cfg.sweep if cfg.scale == "quick" else f"{cfg.sweep}_{cfg.scale}"
    print(f"[{name}] {len(runs)} runs: {describe(runs)}")
    if cfg.dry_run:
        return {"total": len(runs), "runs": runs}
    configs.start(cfg)
    sweeps.ResultsDir(cfg.out, create=True)  # an incompatible folder fails here, untouched
    # The sweep's latest config: a results directory grows with every grid run into it.
    everything = tuple(f.name for f in dataclasses.fields(cfg))
    configs.write(resolved(cfg), cfg.out, name=f"config_{name}.json", may_differ=everything)
    if cfg.sweep == "holdout":
        print(
            f"[{name}] note: as in the paper's Figure 14, runs whose final training accuracy "
            f"is below {figure['discard_below']:.0%} are discarded from the figure's means "
            f"(drawn as open circles, kept in results.jsonl)"
        )
    summary = sweeps.run_sweep(
        runs,
        cfg.out,
        name=name,
        figure=figure,
        shard_index=shard_index,
        shard_count=shard_count,
        claims=cfg.claims,
    )
    if summary["busy"]:
        print(f"[{name}] {len(summary['busy'])} runs are being trained by other workers")
    if cfg.figures:
        sweeps.make_figures(cfg.out, only=[name])
    return summary


if __name__ == "__main__":
    configs.run(main)
