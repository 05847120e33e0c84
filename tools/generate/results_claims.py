"""The results against the paper: one row per claim of the paper (``ROWS``), each number of
its "ours" and "command, time" cells computed from the committed records of docs/results (the
studies' ``results.jsonl`` lines, ``<study>.json`` summaries and figure7's ``logits.json``),
never typed. ``tools/generate/results_tables.py --write`` puts the whole table in
docs/results/README.md (``<!-- table: claims -->`` ... ``<!-- end table -->``) and one line
per claim in the README (``<!-- table: summary -->``: claim, verdict, the part of "ours" that
``SUMMARY`` names, the study's page); ``--check`` (and a test) fails when a committed record
and a page disagree. Also here: the quick presets' gallery, the benchmark's leaderboard and
the value markers of the prose (``VALUE``).

The other columns, and the verdicts, are written here by hand against the scale of
docs/results/README.md (reproduced, partly, contradicted, not run). Edit a row here, then
``--write``.
"""

import pathlib
import re
import sys

from claims import (
    boolean,
    fast_slow,
    figure7,
    figure11,
    gallery,
    gotu,
    holdout,
    interventions,
    leaderboard,
    noise,
    quick_sweeps,
    thresholds,
)
from claims.records import studies

HERE = pathlib.Path(__file__).resolve().parent


HEADER = ("figure / section", "the paper", "ours", "our setting against the paper's",
          "command, time", "verdict")  # fmt: skip


# (figure, the paper's claim, ours and time, our setting, verdict); verdict may be a function
# of the records (its counts), and a row's function may return its own verdict.
ROWS = [
    ("Fig. 5, App. C: noise sensitivity",
     "mod_sum rises with the window; min, max fall; median, maj_vote no clean ladder", noise.fig5,
     "the paper's definition and Monte Carlo estimate (10 runs of 10,000 sampled pairs per "
     "delta; no training)", "reproduced"),
    ("Fig. 7: CNNs on 2x2 MNIST, IID vs holdout",
     "both CNNs ~100% train and test IID; under holdout 100% train, test far below chance",
      figure7.fig7,
     "width 16 (paper 64), 60k examples, 5 epochs of Adam 2e-3 cosine (paper 10 of 1e-4), 1 seed",
     "partly: reproduced at width 16 (paper 64), 5 epochs (paper 10), 1 seed"),
    ("Fig. 8: logits under holdout",
     "the holdout model gives the held-out classes low logits", figure7.fig8, "as Fig. 7",
     "partly: reproduced at width 16 (paper 64), 5 epochs (paper 10), 1 seed"),
    ("Fig. 15, App. B: logits of further pointer positions",
     "holdout failures are systematic: the learned pointer-label correlations give the held-out "
     "classes of every pointed cell low logits", figure7.fig15, "as Fig. 7", figure7.fig15_verdict),
    ("Fig. 9: MLP, size x window",
     "train 100% everywhere; test random at small sizes, jumps to 100% past a threshold",
      thresholds.fig9,
     "the paper's MLP, 2 seeds, windows 2-3, 30 epochs at window 2 and 80 at window 3 (paper "
     "200), plus window 2 at 10^4 and 3x10^4 on the paper's 200 epochs",
     "partly: the threshold jump reproduced at window 2 (window 3 sits on it at 3x10^5); 100% "
     "training accuracy at small sizes only on the paper's 200-epoch recipe (window 2)"),
    ("Fig. 10: MLP 2x", "\"MLP and MLP 2x have similar performance\"", thresholds.fig10_mlp2x,
     "the quick suite only (1 seed, 20,000 examples, 12 epochs at batch 128), not Fig. 10's "
     "size x window grid",
     "partly (the same on every quick-suite entry, where both fit only window 1 and the "
     "easy variants; Fig. 10's grid not run)"),
    ("Fig. 10: Transformer, MLP-Mixer need fewer examples",
     "both solve harder windows with less data than the MLP", thresholds.fig10,
     "window 2 only, 1 seed, 1/8 widths (144,506 and 136,138 parameters against 8.5M and 8.4M), "
     "30 epochs (80 at 10^4)", "partly"),
    ("Fig. 11: up to 5x10^7 examples",
     "MLP learns window 4 at 10^7 but saturates; Mixer solves complexity m at ~5x10^(m+3)",
      figure11.fig11,
     "windows 1-3 of 4: window 4 not finished (the Mixer's two runs are 2 x 97,660 steps, "
     "about 11 h on a 2-core CPU at TensorFlow's best 0.2 s a step and more under load; "
     "training, resumable, in the background; the MLP at 10^6 / 10^7 after them), 1 seed "
     "(3 at window 3's tenth), 1/8 width "
     "(144,506 parameters against 8.5M), 20 epochs of the threshold size with 2 of warm-up "
     "(paper 200 and 10)",
     "partly (windows 1-3 within the paper's sufficient sizes, window 3's tenth in 3 seeds "
     "of 3; 1 seed elsewhere, reduced width and schedule)"),
    ("Fig. 12-13, App. E: fast vs slow learners",
     "fast learners generalise, slow ones memorise; CKA fast-fast 0.9146 > fast-slow 0.3182 "
     "(App. E's setting)", fast_slow.fig12,
     "the paper's MLP only (the MLP-Mixer half of both figures not run), window 3, 300k, 80 "
     "epochs (paper 200); 4 and 6 seeds; App. E also on the paper's 200 epochs, 6 seeds, CKA "
     "over the 3 whose models are kept", fast_slow.fig12_verdict),
    ("Fig. 14: holdout at higher complexity (window 3)",
     "when training succeeds, 100% on held-out windows, even with all permutations held out",
     holdout.fig14_w3,
     "the paper's MLP, 300k, 2 seeds per setting, 80 epochs (paper 200); and the paper's "
     "recipe (200 epochs, 10 of warm-up), 3 seeds per setting", holdout.fig14_w3_verdict),
    ("Fig. 14: holdout, window 2", "as above", holdout.fig14_w2,
     "30 epochs, 2 of warm-up (paper 200 and 10; 2.7x fewer steps than our window-3 runs), 2 "
     "seeds; and the paper's recipe, 3 seeds", None),
    ("Fig. 16, App. C: aggregations",
     "mod_sum the most challenging; \"the tasks become noticeably more challenging to learn as "
     "the neighborhood size increases only when using the mod_sum aggregation function\"",
      quick_sweeps.fig16,
     "the paper's MLP, 1 seed, 3k and 10k examples, 12 epochs at batch 128, >= 600 steps (paper "
     "200 epochs at 1024)",
     quick_sweeps.fig16_verdict),
    ("Fig. 17, App. D: without the pointer", "much easier without the pointer (MLP-Mixer)",
     quick_sweeps.fig17,
     "the MLP, not the Mixer; 1 seed; 2k-30k examples, 12 epochs at batch 128, >= 600 steps "
     "(paper 200 epochs at 1024)", "partly (the MLP, 1 seed, quick schedule)"),
    ("Follow-up (Abbe et al. 2022): Boolean PVR holdout",
     "trained with bit i frozen to +1, generalisation error (½MSE on the cube) ≈ Inf_i(f)",
     boolean.boolean,
     "their code's recipe (1,900 examples, Adam 5e-5, batch 64, 100 epochs); 3 seeds per bit "
     "for the MLP (theirs: 40), 1 seed and 3 of 11 bits for the Transformer; d = 11 only; not "
     "tested: the Mixer, d = 20, the noise-stability bound",
     "partly (f3's trend for the MLP, its value bits, within 0.02-0.05 of f with the bit "
     "frozen; not its pointer bits; the Transformer's 3 bits of 1 seed are no trend; parity "
     "inconclusive: the MLP fits its training half less well than f3's)"),
    ("Follow-up (Abbe et al. 2023): generalization on the unseen",
     "trained on a seen domain, random features and Transformers learn a min-degree "
     "interpolator (MDI) on the unseen part (Figure 5: with ReLU random features less than "
     "with a polynomial activation); mean-field nets reach leaky solutions, and so do large "
     "learning rates; this explains length-generalisation failures (parity trained on a "
     "Hamming ball); the Degree-Curriculum needs fewer steps for parity", gotu.gotu,
     "their tasks, models and settings per model (tools/studies/gotu_study.sh); seeds 1-3 "
     "(theirs: 1-10), on TensorFlow or JAX as each record says (listed per task on the "
     "study's page); the "
     "Transformer at width 1/8 (dim 32); their Adam runs (every Transformer, lengthgen, "
     "full16parity) without their coupled weight decay 0.001 and at Keras's epsilon 1e-7 "
     "(theirs 1e-8; both now options: --coupled-weight-decay, --adam-epsilon); the random "
     "features trained, as their code's misspelt `required_grad` leaves them",
     gotu.gotu_verdict),
    ("Beyond the paper (Geiger et al. 2022): where the pointer is resolved",
     "PVR as a causal-abstraction testbed: interchange intervention accuracy (IIA) locates the "
     "high-level variables (pointer P, pointed values S_j) in a network; the paper makes no "
     "claim here", interventions.interventions,
     "the 1/8 Transformer and Mixer (dim 64) and the paper's MLP (DAS), window 1, 20,000 (MLP "
     "50,000) examples, batch 256, seeds 1-3; 1,024 changing test pairs per variable",
     "measured (no claim of the paper to judge)"),
]  # fmt: skip


def _rows(studies):
    """Every row of ``ROWS`` computed: ``[figure, claim, ours, setting, time, verdict]``."""
    rows = []
    for figure, claim, make, setting, verdict in ROWS:
        made = make(studies)
        ours, time = made[:2]
        if len(made) == 3:
            verdict = made[2]
        elif callable(verdict):
            verdict = verdict(studies)
        rows.append([figure, claim, ours, setting, time, verdict])
    return rows


def table(studies):
    """docs/results/README.md's table of every claim (Markdown) from ``studies(results)``."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    rows = _rows(studies)
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


HEADLINE = 100  # characters of a summary line's headline, at most (cut at a clause)


SUMMARY_HEADER = ("claim", "verdict", "ours, in short", "details")


# Per row (by its figure): the part of its computed "ours" column the summary quotes (a
# pattern; the first clause when none matches) and the page that has the study.
SUMMARY = {
    "Fig. 5, App. C: noise sensitivity": (None, "README.md#what-the-quick-presets-show"),
    "Fig. 8: logits under holdout":
        (r"mean logit of classes [^:]+: holdout ResNet18 [^,]+", "figure7.md"),
    "Fig. 15, App. B: logits of further pointer positions":
        (r"bottom left[^:]*: holdout ResNet18 [^,]+", "figure7.md"),
    "Fig. 10: MLP 2x": (r"MLP vs MLP 2x: w1 [^,]+, w2 [^,]+", "benchmark.md"),
    "Fig. 10: Transformer, MLP-Mixer need fewer examples": (None, "thresholds.md"),
    "Fig. 11: up to 5x10^7 examples": (r"window 3 [^;,]*? at its threshold [^,]+", None),
    "Fig. 12-13, App. E: fast vs slow learners":
        (r"CKA fast-fast vs fast-slow [^,]+ at the first hidden layer", None),
    "Fig. 14: holdout at higher complexity (window 3)":
        (r"the \d+ that fit by epoch \d+ get [^(]+held-out", None),
    "Fig. 14: holdout, window 2":
        (r"held-out accuracy splits by seed: holdout-1 [^,]+", None),
    "Follow-up (Abbe et al. 2022): Boolean PVR holdout": (r"f3: ½MSE tracks [^)]*\)", None),
    "Follow-up (Abbe et al. 2023): generalization on the unseen":
        (r"2parity \([^)]*\): [^;]+", None, "leak towards the MDI: "),
    "Beyond the paper (Geiger et al. 2022): where the pointer is resolved":
        (r"transformer window 1 \([^)]*\): [^;]+", "interventions.md"),
}  # fmt: skip


STUDY_LINK = re.compile(r"\]\((\w+\.md)\)")


def headline(ours, pattern=None):
    """What the summary quotes of a row's "ours" column: the part ``pattern`` finds, else the
    first clause (cut at "; " or ". "), cut at the last ", " within ``HEADLINE`` characters.
    A pattern that finds nothing is an error (the row's wording changed)."""
    if pattern is not None:
        found = re.search(pattern, ours)
        if found is None:
            raise ValueError(f"summary: {pattern!r} is not in {ours[:80]!r}...")
        cut = found.group(0)
    else:
        cut = re.split(r"; |\. ", ours, maxsplit=1)[0]
    if len(cut) > HEADLINE:
        cut = cut[:HEADLINE].rsplit(", ", 1)[0] + ", ..."
    return cut


def verdict_word(verdict):
    """The verdict's words on the scale (``partly``, ``reproduced``, ``contradicted``...),
    without its reasons."""
    return re.split(r"[:(;,]", verdict, maxsplit=1)[0].strip()


def summary(studies):
    """The README's summary: one line per claim (claim, verdict, headline number, link to the
    study's page), each computed from the same rows as ``table``."""
    lines = ["| " + " | ".join(SUMMARY_HEADER) + " |", "|" + " --- |" * len(SUMMARY_HEADER)]
    for figure, _, ours, _, time, verdict in _rows(studies):
        pattern, page, *prefix = SUMMARY.get(figure, (None, None))
        if page is None:
            found = STUDY_LINK.search(time)
            page = found.group(1) if found else "README.md"
        row = [figure, f"**{verdict_word(verdict)}**", "".join(prefix) + headline(ours, pattern),
               f"[study](docs/results/{page})"]  # fmt: skip
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    found = studies(sys.argv[1] if len(sys.argv) > 1 else HERE.parents[1] / "docs" / "results")
    print(table(found) + "\n" + gallery.gallery(found) + "\n" + leaderboard.leaderboard(found))
