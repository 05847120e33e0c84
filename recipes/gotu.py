"""Generalization on the unseen: what networks output where they were never trained.

    python recipes/gotu.py                                   # quick: 2parity, the MLP
    python recipes/gotu.py --task threesym --preset medium   # every model, 3 seeds
    python recipes/gotu.py --task lengthgen                  # parity on Hamming balls
    python recipes/gotu.py --task full16parity               # Degree-Curriculum vs normal
    python recipes/gotu.py --task 2parity --preset paper     # their script: 10 seeds
    python recipes/gotu.py --task 2parity40                  # 2parity at d = 40, sampled

Abbe, Bengio, Lotfi, Rizk (ICML 2023) train networks on the seen part of the cube {+1, -1}^d
and find that on the unseen part many of them output the min-degree interpolator (MDI) of
the target: of all functions equal to it on the seen points, the one with the least Fourier
weight on high degrees. This recipe trains their tasks (``--task``: a Boolean function on a
seen domain, runs of the ``gotu`` kind) with their models and their script's settings
(learning rate, epochs, batch size and optimizer per model and task), tracks the learned
function exactly on the whole cube epoch by epoch (``runs/<id>/fourier.json``: its leak
towards the MDI, alpha = mean((f - g)(f - MDI)) / mean((f - MDI)^2) over the unseen points,
1 for the MDI and 0 for the truth; its error on the unseen points against f and the MDI;
its degree profile; the coefficients of the relevant monomials), and reports per variant.

Tasks (theirs, by their names): ``2parity`` (x0x1 on {x0 = 1 or x1 = 1}, d = 15),
``threesym`` (x0x1 - 1.25x1x2 + 1.5x0x2 on {x0x1x2 = 1}), ``cyclic3dim15`` (the cyclic sum
of x_i x_(i+1) x_(i+2) on {x0, x1 or x2 = 1}), ``maj3`` (majority of x0, x1, x2 on {x0 = 1
or x1 = 1}; their code runs it at d = 15, as here), ``rfexample`` (x0x1x2 + x0x3x4x5 with
x0 frozen, d = 18: random features with ReLU or the polynomial activation), ``2parity40``
(2parity at d = 40, their Figure 9; see below); the studies
``lr`` (2parity with their MLP at their nine learning rates), ``lengthgen`` (parity of 15
bits trained on the Hamming ball H(x) <= k, k = 6..10, one variant each) and
``full16parity`` (parity of 16 bits on N = 3,000..11,000 examples, normal training against
the Degree-Curriculum, leap 4: the steps to a training loss below 1e-3). The variants of
``2parity``, ``threesym``, ``cyclic3dim15``, ``maj3`` and ``rfexample`` are their models:
``mlp`` (``gotu_mlp``), ``meanfield`` (``mean_field``, SGD at rate 1000), ``rfrelu`` /
``rfpoly`` (``random_features``) and ``transformer`` (``gotu_transformer``, at
``--transformer-width``); ``--variants`` picks some.

``2parity40``: their settings for d = 40 are not in their script; these are our choices: the
``2parity`` variants' settings, the target and domain of ``2parity`` at d = 40, 24,576
examples drawn uniformly from the domain (the seen points of 2parity at d = 15, so the same
examples and steps an epoch) and a test split of 8,192 uniform points. Its cube (2^40 points)
cannot be listed, so the tracker measures on a fixed sample of 65,536 uniform points of it
(``analysis.sampled_tracking``): the learned coefficients, the leak and the unseen errors
are estimates (the leak and unseen errors on the sample's unseen quarter), the degree profile
is not measured; the target's and the MDI's coefficients stay exact (their expansions).
fourier.json and gotu.json's ``tracking`` say so (``evaluation``: ``sampled``, the points).

Presets: ``quick`` (minutes on a 2-core CPU: the MLP alone, seed 1, at most 20 epochs; each
variant's line says when that cuts its own setting),
``medium`` (every variant, seeds 1-3, the Transformer at width 1/8: docs/results/gotu),
``paper`` (their script: seeds 1-10, the Transformer at their width). Their settings that
differ here: PyTorch's Adam adds its weight decay (0.001) to the gradient, Keras's Adam
decays the weights apart (set to 0 here); their ``maj3`` draws 2^15 points with replacement
from the domain and tests on 2^15 random points (here: the same draws, and the exact measures
on the whole cube).

Writes into ``--out`` (default ``runs/gotu/{task}``, ``{task}`` the task's name):
gotu.json (per run and per variant: the leak, the unseen errors, the coefficients learned
against the truth and the MDI, the steps), gotu.csv (one row per variant), gotu.png (the
coefficients of the relevant monomials: truth, MDI, learned; and the leak, or the steps, per
variant), config_gotu.json (the first run, the variants, the seeds), gotu_measures.json
(every run's measures any summary here held: a call with fewer variants or seeds between two
wider ones loses none of them), the sweep's results.jsonl and the run folders. Resumable: run
it again after a kill.
"""

import dataclasses
import functools
import json
import pathlib

from pvr_keras import cli, files

# Their model names -> our builder and its arguments.
MODELS = {
    "mlp": ("gotu_mlp", {}),
    "meanfield": ("mean_field", {}),
    "rfrelu": ("random_features", {"activation": "relu"}),
    "rfpoly": ("random_features", {"activation": "poly"}),
    "transformer": ("gotu_transformer", {}),
}


def _fit(model, lr, epochs, batch, optimizer="sgd", **more):
    return dict(model=model, learning_rate=lr, epochs=epochs, batch_size=batch,
                optimizer=optimizer, **more)  # fmt: skip


D15 = dict(num_bits=15, draw="all")
D15_SEEN = 24_576  # 2parity's seen points at d = 15: its examples an epoch
# Per task: the task's fields, its variants (their script.sh settings per model), and what the
# figure's right panel shows (the leak, or the steps to the loss threshold).
TASKS = {
    "2parity": (
        dict(D15, target="x0x1", domain="any_of:0,1"),
        {
            "mlp": _fit("mlp", 0.003, 50, 64),
            "meanfield": _fit("meanfield", 1000.0, 50, 64),
            "rfrelu": _fit("rfrelu", 1e-5, 40, 256),
            "transformer": _fit("transformer", 1e-5, 20, 256, "adam"),
        },
    ),
    "threesym": (
        dict(D15, target="x0x1-1.25x1x2+1.5x0x2", domain="parity:0,1,2"),
        {
            "mlp": _fit("mlp", 0.003, 40, 64),
            "meanfield": _fit("meanfield", 1000.0, 40, 64),
            "rfrelu": _fit("rfrelu", 1e-5, 40, 256),
            "transformer": _fit("transformer", 2e-5, 40, 256, "adam"),
        },
    ),
    "cyclic3dim15": (
        dict(D15, target="cyclic:3", domain="any_of:0,1,2"),
        {
            "mlp": _fit("mlp", 0.003, 100, 64),
            "meanfield": _fit("meanfield", 1000.0, 100, 64),
            "rfrelu": _fit("rfrelu", 3e-4, 50, 256),
            "transformer": _fit("transformer", 2e-5, 80, 256, "adam"),
        },
    ),
    "maj3": (
        dict(
            num_bits=15,
            target="majority:0,1,2",
            domain="any_of:0,1",
            draw="uniform",
            num_examples=2**15,
        ),
        {
            "mlp": _fit("mlp", 0.003, 40, 64),
            "meanfield": _fit("meanfield", 1000.0, 40, 64),
            "rfrelu": _fit("rfrelu", 1e-4, 80, 256),
            "transformer": _fit("transformer", 1e-5, 30, 256, "adam"),
        },
    ),  # fmt: skip
    "2parity40": (  # our settings (their script has none at d = 40): the module docstring
        dict(
            num_bits=40, target="x0x1", domain="any_of:0,1", draw="uniform", num_examples=D15_SEEN
        ),
        {
            "mlp": _fit("mlp", 0.003, 50, 64),
            "meanfield": _fit("meanfield", 1000.0, 50, 64),
            "rfrelu": _fit("rfrelu", 1e-5, 40, 256),
            "transformer": _fit("transformer", 1e-5, 20, 256, "adam"),
        },
    ),
    "rfexample": (
        dict(num_bits=18, draw="all", target="x0x1x2+x0x3x4x5", domain="frozen:0"),
        {
            "rfrelu": _fit("rfrelu", 3e-4, 100, 256),
            "rfpoly": _fit("rfpoly", 3e-4, 100, 256),
        },
    ),
    "lr": (
        dict(D15, target="x0x1", domain="any_of:0,1"),
        {
            f"lr{lr:g}": _fit("mlp", lr, epochs, 64)
            for lr, epochs in (
                (0.15, 4),
                (0.1, 4),
                (0.03, 40),
                (0.01, 50),
                (0.003, 50),
                (0.001, 50),
                (3e-4, 60),
                (1e-4, 100),
                (3e-5, 250),
            )
        },
    ),  # fmt: skip
    "lengthgen": (
        dict(D15, target="parity:all"),
        {f"k{k}": _fit("mlp", 1e-5, 100, 64, "adam", domain=f"ball:{k}") for k in range(6, 11)},
    ),
    "full16parity": (
        dict(num_bits=16, target="parity:all", domain="all", draw="uniform"),
        {
            f"N{n}-{mode}": _fit(
                "mlp", 1e-4, 2000, 64, "adam", num_examples=n, curriculum_leap=leap
            )
            for n in (3000, 5000, 7000, 9000, 11000)
            for mode, leap in (("normal", 16), ("curriculum", 4))
        },
    ),  # fmt: skip
}
STEPS_TASKS = ("full16parity",)  # their figure: the steps to a training loss below 1e-3
PROFILE_TASKS = ("lengthgen",)  # the learned degree profiles (their MDIs differ per variant)
TEST_EXAMPLES = 8192  # the recorded test loss's sample; the tracker measures the whole cube
SEEDS = {"quick": (1,), "medium": (1, 2, 3), "paper": tuple(range(1, 11))}
QUICK_EPOCHS = 20  # the quick preset's cap on a variant's own epochs


@dataclasses.dataclass(frozen=True)
class Own:
    task: str = dataclasses.field(
        default="2parity", metadata={"help": "their task: " + ", ".join(TASKS)}
    )
    variants: tuple[str, ...] | None = dataclasses.field(
        default=None, metadata={"help": "the task's variants to train (default: the preset's)"}
    )
    transformer_width: float = dataclasses.field(
        default=0.125, metadata={"help": "width of gotu_transformer (1: theirs)"}
    )
    track_every: int = dataclasses.field(
        default=1,
        metadata={
            "help": "epochs between two evaluations on the cube (exact; sampled above d = 20)"
        },
    )
    out: str = dataclasses.field(
        default="runs/gotu/{task}",
        metadata={"help": "output folder ({task}: the task's name; the other fields too)"},
    )

    def validate(self, run):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}; received {self.task!r}")
        known = TASKS[self.task][1]
        for v in self.variants or ():
            if v not in known:
                raise ValueError(f"the variants of {self.task} are {', '.join(known)}; "
                                 f"received {v!r}")  # fmt: skip
        if self.variants is not None and len(set(self.variants)) != len(self.variants):
            raise ValueError(f"variants must be distinct; received {list(self.variants)}")
        cli.check_ints(self, ("track_every",), 1)
        if not self.transformer_width > 0:
            raise ValueError(f"transformer_width must be > 0; received {self.transformer_width}")
        out_folder(self)  # a placeholder that is no field: refused before any work


def out_folder(own):
    """``--out`` with its placeholders filled in from the recipe's fields (``{task}``: the
    task's name; a list's values joined by ``-``)."""
    values = {k: "-".join(map(str, v)) if isinstance(v, list) else v
              for k, v in cli.to_dict(own).items()}  # fmt: skip
    return pathlib.Path(cli.format_out(own.out, values))


def quick(given):
    """One variant (the MLP, or the first), seed 1, 20 epochs."""
    return dict(seed=SEEDS["quick"])


def medium(given):
    """Every variant, seeds 1-3, the Transformer at width 1/8 (docs/results/gotu)."""
    return dict(seed=SEEDS["medium"])


def paper(given):
    """Their script: every variant, seeds 1-10, the Transformer at their width."""
    return dict(seed=SEEDS["paper"], transformer_width=1.0)


PRESETS = {"quick": quick, "medium": medium, "paper": paper}

COMMAND = cli.Command(
    kind="gotu",
    presets=PRESETS,
    body=None,
    own=Own,
    description=__doc__,
    exclude=("holdout", "devices", "data_dir", "download", "tensorboard", "model"),
)


def runs_of(parsed, preset, log=None):
    """``[(variant, run)]``, one per (variant, seed): the task's fields, the variant's
    settings, then the run flags given on the command line (``--epochs 5`` shortens every
    variant). ``log`` gets a line per variant: the epochs it trains, and why when that is not
    the variant's own setting (the quick preset's cap, or ``--epochs``)."""
    from pvr_keras.tasks import FunctionTask

    run, own = parsed.run, parsed.own
    seeds = cli.study_seeds(parsed, "variants")
    task_fields, variants = TASKS[own.task]
    chosen = own.variants or (
        (("mlp",) if "mlp" in variants else tuple(variants)[:1]) if preset == "quick"
        else tuple(variants)
    )  # fmt: skip
    given = {k: v for k, v in parsed.given.items() if k in run.flat() and k != "seed"}
    labelled = []
    for label in chosen:
        settings = dict(variants[label])
        model, kwargs = MODELS[settings.pop("model")]
        values = {**task_fields, **settings, "model": model, "model_kwargs": dict(kwargs),
                  "width": own.transformer_width if model == "gotu_transformer" else 1.0,
                  "momentum": 0.0, "weight_decay": 0.0}  # fmt: skip
        own_epochs = values["epochs"]
        why = "its own setting"
        if preset == "quick" and "epochs" not in given and own_epochs > QUICK_EPOCHS:
            values["epochs"] = QUICK_EPOCHS
            why = (f"the quick preset's cap; the variant's own setting is {own_epochs}: pass "
                   f"--epochs {own_epochs} for it")  # fmt: skip
        values.update(given)
        if "epochs" in given and given["epochs"] != own_epochs:
            why = f"--epochs; the variant's own setting is {own_epochs}"
        if log is not None:
            log(f"[gotu] {own.task} {label}: {values['epochs']} epochs ({why})")
        task = FunctionTask(**{k: values[k] for k in ("num_bits", "target", "domain", "draw")
                               if k in values})  # fmt: skip
        if task.draw == "all":  # every seen point once an epoch
            values.setdefault("num_examples", task.num_seen)
        # the test split is measured on the cube exactly (fourier.json); this is its sample
        values.setdefault("test_examples", min(2**task.num_bits, TEST_EXAMPLES))
        values.setdefault("train_eval_examples", min(values.get("num_examples", 8192), 8192))
        base = run.replace(**values)
        labelled.extend((label, base.replace(seed=s)) for s in seeds)
    return labelled


@functools.lru_cache(maxsize=16)
def mdi_of(task):
    """The task's min-degree interpolator on the cube (cached per task)."""
    from pvr_keras.analysis.unseen import task_mdi

    return task_mdi(task)


@functools.lru_cache(maxsize=16)
def mdi_expansion_of(task):
    """The task's min-degree interpolator as a Fourier expansion {bits: coefficient} (cached
    per task), for a cube too large to list; a ValueError for a task without one."""
    from pvr_keras.analysis.unseen import mdi_expansion

    expansion = mdi_expansion(task)
    if expansion is None:
        raise ValueError(f"above d = 20 the MDI is taken from the target's expansion: give a "
                         f"polynomial target off a Hamming ball; received {task}")  # fmt: skip
    return expansion


def _listed(task):
    """Whether the task's cube can be listed (exact measures; else sampled)."""
    from pvr_keras.analysis.boolean import MAX_CUBE_BITS

    return task.num_bits <= MAX_CUBE_BITS


@functools.lru_cache(maxsize=16)
def mdi_degree(task):
    """The degree of the task's MDI: the highest degree with Fourier weight on it (above
    d = 20: the most bits of a monomial of its expansion)."""
    import numpy as np

    from pvr_keras import analysis

    if not _listed(task):
        return max((len(bits) for bits in mdi_expansion_of(task)), default=0)
    profile = np.asarray(analysis.degree_profile(mdi_of(task)))
    return int(np.flatnonzero(profile > 1e-12 * profile.sum()).max())


def low_degree_weight(profile, degree):
    """The fraction of a learned function's Fourier weight at degrees <= ``degree``."""
    total = sum(profile)
    return sum(profile[: degree + 1]) / total if total > 0 else None


def train_tracked(run, run_dir, *, every=1):
    """Trains one run with its tracker (exact on the cube; above d = 20 on a sample of it,
    the MDI from its expansion); the model is saved."""
    from pvr_keras.analysis.fourier_tracking import FourierTracker
    from pvr_keras.training import runs

    task = run.task
    mdi = mdi_of(task) if _listed(task) else mdi_expansion_of(task)
    tracker = FourierTracker(task, run_dir, every=every, mdi=mdi)  # seen: its domain
    return runs.run(run, run_dir, save_model=True, callbacks=[tracker])


def _monomial(bits):
    return "x" + "x".join(map(str, bits)) if bits else "1"


# A run's measures in gotu.json: what a run folder's fourier.json gives, and what a previous
# summary may hold for a run whose folder is elsewhere (imported records).
MEASURES = {"epochs_tracked": int, "leak": float, "unseen_mse": float,
            "unseen_mse_to_mdi": float, "seen_mse": float, "degree_profile": list,
            "mdi_degree": int, "low_degree_weight": float, "coefficients": list,
            "steps": int, "reached_eps": bool, "stages": list}  # fmt: skip


# Every run's measures that a summary of the folder held: a later call with a narrower grid
# (other variants or seeds) writes a gotu.json without them, and a wider one after it finds
# them here (for the runs whose folders are not here). Not exported: gotu.json is the record.
KEPT_MEASURES = "gotu_measures.json"


def _stale(record, line):
    """Whether a run folder's ``record`` is of another attempt than its results ``line``."""
    return bool(record and line) and record.get("epochs_completed") != line.get("epochs_completed")


def previous_summary(out):
    """``{"runs": {run_dir: measures}, "tracking": ...}`` of the folder's last gotu.json (and,
    for the runs it does not list, of ``KEPT_MEASURES``), for the runs whose folders are not
    here: a study's records taken in with tools/import_results.py bring its summary, not its
    run folders (fourier.json), and the next summary keeps their measures from it. Read as
    untrusted: an entry whose fields are not of their kinds is left out (that run's measures
    are then None)."""
    try:
        kept = _entries(files.read_json(pathlib.Path(out) / KEPT_MEASURES))
    except FileNotFoundError:
        kept = {}
    try:
        found = files.read_json(pathlib.Path(out) / "gotu.json")
    except FileNotFoundError:
        return {"runs": kept, "tracking": None}
    found = found if isinstance(found, dict) else {}
    tracking = found.get("tracking")
    if not (isinstance(tracking, dict) and isinstance(tracking.get("monomials"), list)
            and all(isinstance(m, str) for m in tracking["monomials"])
            and isinstance(tracking.get("target"), list)
            and isinstance(tracking.get("mdi"), list | None)
            and _is_evaluation(tracking.get("evaluation"))):  # fmt: skip
        tracking = None
    return {"runs": {**kept, **_entries(found.get("runs"))}, "tracking": tracking}


def _entries(runs):
    """``{run_dir: measures}`` of a summary's list of runs read back, each entry whose fields
    are of their kinds (``MEASURES``)."""
    kept = {}
    for entry in runs if isinstance(runs, list) else []:
        if not (isinstance(entry, dict) and isinstance(entry.get("run_dir"), str)):
            continue
        if all(entry.get(k) is None or isinstance(entry[k], kind)
               or (kind is float and isinstance(entry[k], int) and not isinstance(entry[k], bool))
               for k, kind in MEASURES.items()):  # fmt: skip
            kept[entry["run_dir"]] = {k: entry.get(k) for k in MEASURES}
    return kept


def _is_evaluation(found):
    """Whether a summary's ``tracking.evaluation`` read back is of its kinds (None: exact on
    the cube; else the sample's kind and its numbers of points)."""
    counts = ("points", "seen_points", "unseen_points")
    return found is None or (
        isinstance(found, dict) and isinstance(found.get("kind"), str)
        and all(isinstance(found.get(k), int) and not isinstance(found[k], bool) for k in counts)
    )  # fmt: skip


def analyse(labelled, out, records, previous=None, lines=None):
    """Per run: the last tracked epoch's numbers (from its folder; else, for a run whose folder
    is not here or is not the recorded run's, its entry in ``previous``, the last summary:
    ``previous_summary``); per variant: their summary over seeds. ``lines``: the results
    lines by run id; a folder whose record has fewer epochs than its line (an attempt stopped
    here, the run recorded from elsewhere: tools/import_results.py) is not measured."""
    import numpy as np

    from pvr_keras.analysis import fourier_tracking

    previous = previous or {"runs": {}, "tracking": None}
    per_run, first = [], None  # first: the first run's tracking (its monomials, MDI)
    for label, run in labelled:
        found = fourier_tracking.read(pathlib.Path(out) / "runs" / run.run_id) or {}
        run_dir = f"runs/{run.run_id}"
        stale = _stale(records.get(run.run_id), (lines or {}).get(run.run_id))
        found = {} if stale else found
        if not found and run_dir in previous["runs"]:
            kept = previous["runs"][run_dir]
            per_run.append({"variant": label, "seed": run.seed, "run_dir": run_dir, **kept,
                            "measured": "previous summary"})  # fmt: skip
            continue
        first = first or found or None
        epochs = found.get("epochs") or {}
        last = epochs[max(epochs, key=int)] if epochs else {}
        record = {} if stale else records.get(run.run_id, {})
        curriculum = record.get("curriculum") or {}
        degree, profile = mdi_degree(run.task), last.get("degree_profile")
        per_run.append({
            "variant": label,
            "seed": run.seed,
            "run_dir": run_dir,
            "epochs_tracked": len(epochs),
            "leak": last.get("leak"),
            "unseen_mse": last.get("unseen_mse"),
            "unseen_mse_to_mdi": last.get("unseen_mse_to_mdi"),
            "seen_mse": last.get("seen_mse"),
            "degree_profile": profile,
            "mdi_degree": degree,  # the weight at degrees <= it: the MDI's 1, the truth's less
            "low_degree_weight": low_degree_weight(profile, degree) if profile else None,
            "coefficients": last.get("coefficients"),
            "steps": curriculum.get("total_steps", record.get("steps_completed")),
            "reached_eps": curriculum.get("stopped"),  # the loss went below eps at r >= d
            "stages": curriculum.get("stages"),
            "measured": "run folder" if found else None,
        })  # fmt: skip
    variants = []
    for label in dict.fromkeys(r["variant"] for r in per_run):
        mine = [r for r in per_run if r["variant"] == label]
        leaks = [r["leak"] for r in mine if r["leak"] is not None]
        unseen = [r["unseen_mse"] for r in mine if r["unseen_mse"] is not None]
        steps = [r["steps"] for r in mine if r["steps"] is not None]
        variants.append({
            "variant": label,
            "seeds": len(mine),
            "leak_mean": float(np.mean(leaks)) if leaks else None,
            "leak_min": float(np.min(leaks)) if leaks else None,
            "leak_max": float(np.max(leaks)) if leaks else None,
            "unseen_mse_mean": float(np.mean(unseen)) if unseen else None,
            "steps_mean": float(np.mean(steps)) if steps else None,
        })  # fmt: skip
    tracking = _tracking_summary(first) or previous["tracking"]
    return {"runs": per_run, "variants": variants, "tracking": tracking}


def _tracking_summary(found):
    if not found:
        return None
    return {
        "monomials": [_monomial(b) for b in found["subset_bits"]],
        "target": found["target_coefficients"],
        "mdi": found.get("mdi_coefficients"),
        # sampled: the learned coefficients, leak and errors are estimates on these points
        **({"evaluation": found["evaluation"]} if "evaluation" in found else {}),
    }


def _profile_figure(result, path, title):
    """Length generalisation: the learned degree profiles (their MDI's degree marked) and the
    weight at the MDI's degrees per variant; the MDI off a Hamming ball is in the thousands,
    so the monomials and the leak say nothing there."""
    import numpy as np

    from pvr_keras import figures

    profiles, degrees, values = {}, {}, []
    for v in result["variants"]:
        mine = [r for r in result["runs"] if r["variant"] == v["variant"] and r["degree_profile"]]
        if mine:
            shares = [np.asarray(r["degree_profile"]) / sum(r["degree_profile"]) for r in mine]
            profiles[v["variant"]] = np.mean(shares, axis=0).tolist()
            degrees[v["variant"]] = mine[0]["mdi_degree"]
        values.append([r["low_degree_weight"] for r in mine])
    metric = {
        "name": "Fourier weight at the MDI's degrees (1: all of it)",
        "variants": [v["variant"] for v in result["variants"]],
        "values": values,
        "reference": {"MDI": 1.0},
    }
    return figures.gotu({"profiles": profiles, "mdi_degrees": degrees}, metric, path, title)


def _figure(result, own, path, title):
    import numpy as np

    from pvr_keras import figures

    if own.task in PROFILE_TASKS:
        return _profile_figure(result, path, title)
    tracking = result["tracking"]
    if tracking is None or tracking["mdi"] is None:
        return None
    order = np.argsort(-np.maximum(np.abs(tracking["target"]), np.abs(tracking["mdi"])))[:12]
    learned = {}
    for v in result["variants"]:
        rows = [r["coefficients"] for r in result["runs"]
                if r["variant"] == v["variant"] and r["coefficients"]]  # fmt: skip
        if rows:
            learned[v["variant"]] = np.mean(rows, axis=0)[order].tolist()
    coefficients = {
        "monomials": [tracking["monomials"][i] for i in order],
        "target": [tracking["target"][i] for i in order],
        "mdi": [tracking["mdi"][i] for i in order],
        "learned": learned,
    }
    if tracking.get("evaluation"):  # the learned ones: estimates on a sample of the cube
        coefficients["measured"] = f"learned: on {tracking['evaluation']['points']:,} points"
    steps = own.task in STEPS_TASKS
    key = "steps" if steps else "leak"
    metric = {
        "name": "steps until the training loss < eps" if steps else
                "leak on the unseen (1: the MDI, 0: the truth)",
        "variants": [v["variant"] for v in result["variants"]],
        "values": [[r[key] for r in result["runs"] if r["variant"] == v["variant"]]
                   for v in result["variants"]],
        "reference": {} if steps else {"MDI": 1.0, "truth": 0.0},
    }  # fmt: skip
    return figures.gotu(coefficients, metric, path, title)


def main(argv=None):
    parsed = COMMAND.parse_all(argv)
    labelled = cli.check_task(lambda: runs_of(parsed, parsed.preset, log=print))
    runs = [run for _, run in labelled]
    chosen = list(dict.fromkeys(label for label, _ in labelled))
    # What the configs record is what trains: the grid's first run (the kind's default run,
    # which the variants replace, trains nowhere), the variants chosen, the folder written.
    own = dataclasses.replace(parsed.own, out=str(out_folder(parsed.own)), variants=tuple(chosen))
    parsed = dataclasses.replace(parsed, run=runs[0], own=own)
    summary = cli.run_sweep(
        parsed, runs, name="gotu", figure=None,
        trainer=functools.partial(train_tracked, every=own.track_every), grows=True,
    )  # fmt: skip
    from pvr_keras import sweeps

    out = pathlib.Path(own.out)
    records, _ = sweeps.ResultsDir(out).read()
    recorded = {r["id"]: r for r in records}
    missing = [run.run_id for run in runs if run.run_id not in recorded]
    if missing:
        raise RuntimeError(f"runs not recorded (trained by another worker?): {missing}")
    full = {run.run_id: _record(out, run) for _, run in labelled}
    previous = previous_summary(out)
    result = analyse(labelled, out, full, previous, recorded)
    result["task"] = dataclasses.asdict(runs[0].task)  # the first variant's (lengthgen: k6)
    # The whole config of the grid analysed (what config_gotu.json holds as this call wrote
    # it; a later call, started and stopped, rewrites that file: exports take this one).
    result["config"] = {"task": own.task, **summary["config"], "variants": list(chosen)}
    files.write_text(out / "gotu.json", json.dumps(result, indent=1) + "\n")
    measured = {r["run_dir"]: {k: r.get(k) for k in MEASURES} for r in result["runs"]}
    every = [{"run_dir": d, **m} for d, m in {**previous["runs"], **measured}.items()]
    files.write_text(out / KEPT_MEASURES, json.dumps(every) + "\n")
    columns = ["variant", "seeds", "leak_mean", "leak_min", "leak_max", "unseen_mse_mean",
               "steps_mean"]  # fmt: skip
    files.write_csv(out / "gotu.csv",
                    [columns] + [[v[c] for c in columns] for v in result["variants"]])  # fmt: skip
    task = runs[0].task
    domains = list(dict.fromkeys(run.task.domain for run in runs))
    domain = (f"the domain {domains[0]}" if len(domains) == 1 else
              f"the domains {domains[0]} to {domains[-1]} (one per variant)")  # fmt: skip
    title = (f"{own.task}: f = {task.target} on {domain} (d = {task.num_bits}); "
             f"{len(runs)} run{'s' * (len(runs) > 1)}")  # fmt: skip
    sampled = (result["tracking"] or {}).get("evaluation")
    if sampled:
        title += f"; measured on {sampled['points']:,} sampled points"
    drawn = _figure(result, own, out / "gotu.png", title)
    _report(result, out, drawn)
    return {"failed": False, **summary}


def rebuilt_config(summary, system):
    """``gotu.json``'s ``config`` for a ``summary`` written before it held the whole config
    (its run the kind's default run, no grid): this recipe's grid of the summary's task,
    variants, seeds and recipe fields, whose run ids must be the summary's runs' (as a set);
    ``system``, how they ran, is kept. The summary is read from disk: each value must be of
    its kind before it becomes a flag (a string there is never a flag of its own), and no
    code it names is imported (``references.reading``). Raises ValueError when a value is
    not of its kind or the grid is another."""
    from pvr_keras import references

    old, recipe = summary["config"], summary["config"]["recipe"]
    seeds = [run["seed"] for run in summary["runs"]]
    task, variants, out = old["task"], old["variants"], recipe["out"]
    width, every = recipe["transformer_width"], recipe["track_every"]
    if not (task in TASKS and isinstance(variants, list)
            and all(isinstance(v, str) and v in TASKS[task][1] for v in variants)
            and all(type(s) is int for s in seeds) and type(every) is int
            and type(width) in (int, float) and isinstance(out, str)):  # fmt: skip
        raise ValueError(f"a gotu summary whose task, variants, seeds or recipe fields are not "
                         f"of their kinds: {task!r}, {variants!r}, {seeds!r}")  # fmt: skip
    seeds = sorted(set(seeds))
    argv = [f"--task={task}", "--preset=medium", "--variants", *variants, "--seed",
            *map(str, seeds), f"--transformer-width={width}", f"--track-every={every}",
            f"--out={out}"]  # fmt: skip
    with references.reading("a gotu summary"):
        parsed = COMMAND.parse_all(argv)
        labelled = runs_of(parsed, parsed.preset)
    ids = [run.run_id for _, run in labelled]
    recorded = [run["run_dir"].rpartition("/")[2] for run in summary["runs"]]
    if sorted(ids) != sorted(recorded):
        raise ValueError(f"{old['task']}: today's grid of its variants and seeds is other runs "
                         f"than the summary's: {sorted(set(ids) ^ set(recorded))}")  # fmt: skip
    own = dataclasses.replace(parsed.own, variants=tuple(old["variants"]))
    config = cli.config_of(labelled[0][1], own, parsed.axes)
    return {"task": old["task"], **config, "system": system, "variants": list(old["variants"])}


def _record(out, run):
    from pvr_keras.training import records

    try:
        return records.read_record(pathlib.Path(out) / "runs" / run.run_id)
    except (OSError, ValueError):
        return {}


def _report(result, out, drawn):
    print("\nvariant              seeds  leak alpha (mean, min-max)   unseen MSE   steps")
    for v in result["variants"]:
        leak = ("-" if v["leak_mean"] is None else
                f"{v['leak_mean']:.3f} ({v['leak_min']:.3f}-{v['leak_max']:.3f})")  # fmt: skip
        unseen = "-" if v["unseen_mse_mean"] is None else f"{v['unseen_mse_mean']:.4f}"
        steps = "-" if v["steps_mean"] is None else f"{v['steps_mean']:.0f}"
        print(f"{v['variant']:20s} {v['seeds']:5d}  {leak:27s}  {unseen:11s}  {steps}")
    sampled = (result["tracking"] or {}).get("evaluation")
    if sampled:
        print(f"(estimates on {sampled['points']:,} uniform points of the cube, "
              f"{sampled['unseen_points']:,} of them unseen; no degree profile)")  # fmt: skip
    made = "gotu.png, " if drawn else ""
    print(f"wrote {out}/gotu.json, gotu.csv, {made}config_gotu.json")


if __name__ == "__main__":
    cli.main(main)
