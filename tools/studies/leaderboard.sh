#!/usr/bin/env bash
# The leaderboard (issue 36): every model of the paper on the benchmark's quick suite, at the
# widths a 2-core CPU trains (the MLP and MLP 2x at full width; the Transformer and MLP-Mixer
# at 1/8; ResNet18 and VGG11-BN at 8 base channels), on the machine's fastest engine. Each
# model's table is copied to docs/results/benchmark/quick/<label>.json as it finishes; the
# benchmark page's leaderboard (docs/benchmarks/README.md) is drawn from those files (tools/generate/results_tables.py --write).
# Resumable: run it again after a kill (finished entries are skipped). Image models read
# MNIST from the TFDS data dir (TFDS_DATA_DIR or --data-dir).
#
#   bash tools/studies/leaderboard.sh [RESULTS]        # default runs/benchmark
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/benchmark}
PY=${PYTHON:-python}
bench() {  # label, then the recipe's flags
  local label=$1; shift
  echo "=== $(date -u +%FT%TZ) $label"
  "$PY" tools/benchmark.py --suite quick --out "$RESULTS/quick/$label" "$@"
  cp "$RESULTS/quick/$label/benchmark.json" "docs/results/benchmark/quick/$label.json"
}
bench resnet18 --model resnet18
bench vgg11_bn --model vgg11_bn
bench transformer_x0.125 --model transformer --width 0.125
bench mixer_x0.125 --model mixer --width 0.125
bench mlp2x --model mlp2x
echo "=== $(date -u +%FT%TZ) done"
