#!/usr/bin/env bash
# The quick presets whose numbers the docs quote (docs/results/README.md's table and "What the
# quick presets show"), run once so that their records are committed (docs/results/*_quick,
# noise_sensitivity): Figure 5 on the paper preset (no training), the token_pvr run, Figure 9's
# and Figure 14's quick sweeps, Figures 12-13's quick seeds and Figures 7-8's quick CNNs (real
# MNIST from the TFDS data dir: TFDS_DATA_DIR or --data-dir). Resumable: run it again after a
# kill (finished runs are skipped). About 30 min on a 2-core CPU.
#
#   bash tools/studies/quick_records.sh [RESULTS]          # default runs/quick
#   python tools/export_results.py RESULTS docs/results
#   python tools/generate/results_tables.py docs/results --write
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/quick}
PY=${PYTHON:-python}
echo "=== $(date -u +%FT%TZ) quick records -> $RESULTS"
"$PY" recipes/noise_sensitivity.py --preset paper --out "$RESULTS/noise_sensitivity"
"$PY" recipes/token_pvr.py --out "$RESULTS/token_pvr_quick"
"$PY" recipes/token_sweep.py --sweep size_window --out "$RESULTS/token"
"$PY" recipes/token_sweep.py --sweep holdout --out "$RESULTS/token"
"$PY" recipes/fast_slow.py --name fast_slow_quick --out "$RESULTS/token"
"$PY" recipes/block_holdout.py --out "$RESULTS/block_holdout_quick/resnet18"
"$PY" recipes/chain.py --out "$RESULTS/chain_quick"
echo "=== $(date -u +%FT%TZ) done"
