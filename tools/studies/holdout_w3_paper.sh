#!/usr/bin/env bash
# Figure 14 at window 3 on the paper's own recipe (issue 39, 3a): the paper's MLP on 300,000
# examples, 200 epochs with 10 of warm-up, holdout-1 and all six orders of (0, 1, 2) held out,
# seeds 0-2 (6 runs, 1-3 hours each on a 2-core CPU). Resumable: run it again after a kill.
#
#   bash tools/studies/holdout_w3_paper.sh [RESULTS [FLAGS...]]   # default runs/holdout_w3_paper
#   python tools/holdout_analysis.py RESULTS/token
#   python tools/export_results.py RESULTS docs/results
# On another machine, take the committed records in first so finished runs are skipped:
#   python tools/import_results.py docs/results/holdout_paper RESULTS/token
# Any flags after RESULTS go to every grid of the study: the launcher's put it on a cluster
# (docs/scaling.md, "A study on SLURM"), and the same command later collects it:
#   bash tools/studies/holdout_w3_paper.sh RESULTS --launcher submitit --submitit.partition gpu --submitit.detach
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/holdout_w3_paper}
shift || true
PY=${PYTHON:-python}
BACKEND=${BACKEND:-tensorflow}
echo "=== $(date -u +%FT%TZ) holdout window 3, paper recipe"
"$PY" recipes/token_sweep.py --sweep holdout --preset paper --backend "$BACKEND" --windows 3 \
  --holdouts 1 6 --seeds 0 1 2 --out "$RESULTS/token" "$@"
echo "=== $(date -u +%FT%TZ) done"
