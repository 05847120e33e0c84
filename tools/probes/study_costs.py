"""What each study of the paper costs at its own settings (the ``paper`` presets): the runs
and training steps of each grid, and the time of those steps one run after another on this
machine (the engine measured fastest for each model here, from the engine cache: a model
never trained here reads "not measured") and on one H200 where a figure is recorded. The same
figures as ``--dry-run`` on each recipe; nothing trains. Prints a Markdown table
(docs/scaling.md, "What a study costs").

    python tools/probes/study_costs.py
"""

import contextlib
import io
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pvr_keras import calibration  # noqa: E402
from pvr_keras.launch import DryRun, cost  # noqa: E402

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


def study_cost(recipe, flags):
    """``cost.estimate`` of a recipe's paper grid (its ``--dry-run``), its output hidden."""
    sys.path.insert(0, str(REPO / "recipes"))
    try:
        module = __import__(recipe)
    finally:
        sys.path.remove(str(REPO / "recipes"))
    with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()):
        argv = [*_preset(flags), "--dry-run", "--out", f"{out}/r"]
        try:
            found = module.main(argv)
        except DryRun as done:
            found = done.summary
    return found["cost"]


def _preset(flags):
    return flags if "--preset" in flags else ["--preset", "paper", *flags]


def main():
    cpu = f"{calibration.cpu_name()}, {calibration.cores()} cores"
    print(f"| study | runs | training steps | this CPU ({cpu}) | one H200 |")
    print("| --- | --- | --- | --- | --- |")
    for study, figures, recipe, flags in STUDIES:
        found = study_cost(recipe, flags)
        models = ", ".join(f"{e['runs']} {family.split(' batch')[0]}"
                           for family, e in found["by_model"].items())  # fmt: skip
        print(f"| {study} ({figures}; `{recipe}.py {' '.join(_preset(flags))}`) "
              f"| {found['runs']:,} ({models}) | {found['steps']:,} "
              f"| {cost.duration(found['cpu_s'])} | {cost.duration(found['gpu_s'])} |")  # fmt: skip


if __name__ == "__main__":
    main()
