"""What each study of the paper costs at its own settings (the ``paper`` presets): the runs
and training steps of each grid, and the time of those steps one run after another on this
machine (the engine measured fastest for each model here, from the engine cache: a model
never trained here reads "not measured") and on one H200 where a figure is recorded. The same
figures as ``--dry-run`` on each recipe; nothing trains. Prints a Markdown table
(docs/scaling.md, "What a study costs").

    python tools/probes/study_costs.py             # from the engines measured so far
    python tools/probes/study_costs.py --measure   # measures each model not measured yet
"""

import contextlib
import io
import pathlib
import runpy
import tempfile

from pvr_keras import calibration
from pvr_keras.launch import DryRun, cost

REPO = pathlib.Path(__file__).resolve().parents[2]

# (study, the paper's figures, recipe, flags)
STUDIES = (
    ("size x window", "Figures 9-11", "token_sweep", ["--sweep", "size_window"]),
    ("aggregations", "Figure 16", "token_sweep", ["--sweep", "aggregations"]),
    ("without the pointer", "Figure 17", "token_sweep", ["--sweep", "pointer"]),
    ("holdout, windows 2-3", "Figure 14", "token_sweep", ["--sweep", "holdout"]),
    ("fast vs slow learners", "Figures 12-13", "fast_slow", []),
    ("fast vs slow, MLP-Mixer", "Figure 12", "fast_slow", ["--preset", "paper_mixer"]),
    ("Boolean PVR holdout", "Abbe et al. 2022", "boolean_holdout", []),
    ("GOTU 2parity", "Abbe et al. 2023", "gotu", []),
)


def study_cost(recipe, flags, measure=False):
    """``cost.estimate`` of a recipe's paper grid (its ``--dry-run``), its output hidden;
    ``measure``: first the engines of each of its models not measured on this machine yet
    (``engines.choose``, cached where the machine was quiet)."""
    main = runpy.run_path(str(REPO / "recipes" / f"{recipe}.py"), run_name=f"recipes_{recipe}")[
        "main"
    ]
    with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()):
        argv = [*_preset(flags), "--dry-run", "--out", f"{out}/r"]
        try:
            found = main(argv)
        except DryRun as done:
            found = done.summary
    if measure:
        from pvr_keras import engines

        firsts = {}
        for run in found["runs"]:
            firsts.setdefault(calibration.run_family(run), run)
        for run in firsts.values():
            engines.choose(run=run, calibrate=True, environ={})
        found = {**found, "cost": cost.estimate(found["runs"])}
    return found["cost"]


def _preset(flags):
    return flags if "--preset" in flags else ["--preset", "paper", *flags]


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--measure", action="store_true",
        help="measure the engines of each model not measured here yet (the paper-width "
        "Transformer and MLP-Mixer at batch 1024 take minutes each and ~20 GB on a CPU)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    cpu = f"{calibration.cpu_name()}, {calibration.cores()} cores"
    print(f"| study | runs | training steps | this CPU ({cpu}) | one H200 |")
    print("| --- | --- | --- | --- | --- |")
    for study, figures, recipe, flags in STUDIES:
        found = study_cost(recipe, flags, args.measure)
        models = ", ".join(f"{e['runs']} {family.split(' batch')[0]}"
                           for family, e in found["by_model"].items())  # fmt: skip
        print(f"| {study} ({figures}; `{recipe}.py {' '.join(_preset(flags))}`) "
              f"| {found['runs']:,} ({models}) | {found['steps']:,} "
              f"| {cost.total(found, 'cpu')} | {cost.total(found, 'gpu')} |")  # fmt: skip


if __name__ == "__main__":
    main()
