#!/usr/bin/env bash
# The medium studies of docs/results/ (the paper's findings at a scale a 2-core CPU can answer),
# one after another, resumable: run it again after a kill and it goes on where it stopped.
#
#   bash tools/studies/medium_studies.sh [RESULTS [PART [FLAGS...]]]   # default runs/medium all
#
# RESULTS/token    token_sweep holdout + size_window medium, fast_slow medium and medium_main
#                  (one results directory, so runs the studies share are trained once)
# RESULTS/figure7  block_holdout medium for ResNet18 and VGG11-BN (each with its IID run)
# RESULTS/boolean  boolean_holdout (Abbe et al. 2022): f3 and parity windows with the MLP, one
#                  seed per frozen bit, then 3; f3 with the 1/4-width Transformer (3 bits,
#                  then 6) and Mixer
# The two parts can run at the same time (two processes share two cores better than one).
# Coverage first: seed 0 of the holdout study, then the threshold sweep, fast_slow (Appendix E's
# setting, then Figure 12's), and the holdout study's remaining seeds (runs already finished
# are skipped, not retrained).
# Then `python tools/export_results.py RESULTS docs/results` writes the small records.
# Measured on a 2-core CPU: see docs/results/README.md (about 14 hours in all).
# PART: token, figure7, boolean or all. FLAGS go to every grid of the token and boolean parts:
# the launcher's put them on a cluster (docs/scaling.md, "A study on SLURM"); figure7 trains
# one configuration a call (its holdout and IID runs), here.
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/medium}
PART=${2:-all}
shift 2 || shift $# || true
LAUNCH=("$@")  # the launcher flags, given to every grid
case "$PART" in token | figure7 | boolean | all) ;; *)
  echo "usage: $0 [RESULTS [token|figure7|boolean|all [FLAGS...]]]" >&2
  exit 2
  ;;
esac
PY=${PYTHON:-python}
TOKEN_BACKEND=${TOKEN_BACKEND:-tensorflow}  # the faster engine of a CPU (tools/probes/bench_engines.py)
BLOCK_BACKEND=${BLOCK_BACKEND:-tensorflow}
step() { echo "=== $(date -u +%FT%TZ) $*"; "$@"; }
ok3() { "$@" || [ $? = 3 ]; }  # exit 3: a run that finished but failed by the paper's rule

if [ "$PART" = token ] || [ "$PART" = all ]; then
  sweep() { step "$PY" recipes/token_sweep.py --preset medium --backend "$TOKEN_BACKEND" \
    --out "$RESULTS/token" "$@" ${LAUNCH[@]+"${LAUNCH[@]}"}; }
  sweep --sweep holdout --seeds 0
  sweep --sweep size_window
  for preset in medium medium_main; do
    step "$PY" recipes/fast_slow.py --preset "$preset" --backend "$TOKEN_BACKEND" \
      --out "$RESULTS/token" ${LAUNCH[@]+"${LAUNCH[@]}"}
  done
  sweep --sweep holdout
fi
if [ "$PART" = figure7 ] || [ "$PART" = all ]; then
  for model in resnet18 vgg11_bn; do
    step ok3 "$PY" recipes/block_holdout.py --preset medium --model "$model" \
      --backend "$BLOCK_BACKEND" --out "$RESULTS/figure7/$model"
  done
fi
if [ "$PART" = boolean ] || [ "$PART" = all ]; then
  boolean() { step "$PY" recipes/boolean_holdout.py --backend "$TOKEN_BACKEND" \
    --out "$RESULTS/boolean" "$@" ${LAUNCH[@]+"${LAUNCH[@]}"}; }
  boolean --name quick_f3
  boolean --aggregation parity --window-mode cyclic --name quick_parity
  boolean --preset medium --name f3_mlp
  boolean --preset medium --aggregation parity --window-mode cyclic --name parity_mlp
  # bits 0 3 7 first (a pointer bit and two value bits; the 6-bit setting reuses their runs)
  boolean --model bits_transformer --width 0.25 --bits 0 3 7 --name f3_transformer_3bits
  boolean --model bits_transformer --width 0.25 --bits 0 1 2 3 7 10 --name f3_transformer
  boolean --model bits_mixer --width 0.25 --bits 0 1 2 3 7 10 --name f3_mixer
fi
echo "=== $(date -u +%FT%TZ) $PART done"
