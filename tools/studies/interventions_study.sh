#!/usr/bin/env bash
# Where the paper's token models resolve the pointer (recipes/interventions.py): the 1/8
# Transformer and Mixer at window 1 (positional IIA per layer and position), the paper's MLP at
# window 1 (DAS per hidden layer), then both at window 3 (hours on a 2-core CPU). Seeds 1-3.
# Last, ResNet18 on 2x2 MNIST blocks (recipes/block_interventions.py, medium: width 16): IIA of
# each cell per quadrant of block1/3/5/7, into RESULTS/block; MNIST from DATA_DIR (default
# TFDS_DATA_DIR).
# Resumable: run it again after a kill; finished runs and their models are kept in RESULTS.
#
#   bash tools/studies/interventions_study.sh [RESULTS [FLAGS...]]   # default runs/interventions
#   DATA_DIR=/data/tfds bash tools/studies/interventions_study.sh      # the block study's MNIST
#   python tools/export_results.py RESULTS docs/results   # the records -> interventions*/
# Any flags after RESULTS go to every grid (the launcher's, to put it on a cluster).
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/interventions}
shift || true
LAUNCH=("$@")
PY=${PYTHON:-python}
BACKEND=${BACKEND:-}
BLOCK_BACKEND=${BLOCK_BACKEND:-tensorflow}  # the faster engine of a CPU for the CNNs
DATA_DIR=${DATA_DIR:-${TFDS_DATA_DIR:-}}
study() {
  echo "=== $(date -u +%FT%TZ) $*"
  "$PY" recipes/interventions.py ${BACKEND:+--backend "$BACKEND"} --out "$RESULTS" "$@" \
    ${LAUNCH[@]+"${LAUNCH[@]}"}
}
study --preset medium
study --preset medium_mlp
study --preset medium_w3
echo "=== $(date -u +%FT%TZ) block_interventions --preset medium"
"$PY" recipes/block_interventions.py --preset medium ${BLOCK_BACKEND:+--backend "$BLOCK_BACKEND"} \
  ${DATA_DIR:+--data-dir "$DATA_DIR"} --out "$RESULTS/block" ${LAUNCH[@]+"${LAUNCH[@]}"}
