#!/usr/bin/env bash
# One check for a machine with a GPU: the devices, then a paper-sized epoch of mlp and mixer on
# token data and of resnet18 on block data, examples/s per model, backend and input (JAX:
# device input, made on the accelerator, against tf.data; TensorFlow: tf.data) and, for the
# token models, the achieved TFLOP/s as a fraction of the GPU's dense bf16 peak; then every
# recipe's paper preset for a few steps at full size on JAX (tools/studies/smoke_presets.sh). Ends
# with one summary table. Sized to finish in under 8 minutes on an H200 (tools/probes/gpu_check.py
# says how): LIMIT (120 s) per backend, SMOKE_LIMIT (200 s) for the presets.
# Usage: bash tools/probes/gpu_check.sh   (PYTHON=..., BACKENDS="jax tensorflow", LIMIT=...,
# SMOKE_BACKENDS=jax; extra arguments go to tools/probes/gpu_check.py, e.g. --policy mixed_bfloat16)
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
SUMMARY=$(mktemp "${TMPDIR:-/tmp}/gpu_check_summary.XXXXXX")
export GPU_CHECK_SUMMARY=$SUMMARY SMOKE_SUMMARY=$SUMMARY
start=$SECONDS
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"
for backend in ${BACKENDS:-jax tensorflow}; do
  if ! KERAS_BACKEND=$backend "$PY" -c "import keras" >/dev/null 2>&1; then
    echo "backend $backend: keras cannot start it here (package missing); skipped"
    printf '%s\t-\t-\tskipped: keras cannot start it\n' "$backend" >>"$SUMMARY"
    continue
  fi
  if ! KERAS_BACKEND=$backend timeout "${LIMIT:-120}" "$PY" tools/probes/gpu_check.py "$@"; then
    echo "backend $backend: failed or ran past ${LIMIT:-120} s"
    printf '%s\t-\t-\tFAILED or past %s s\n' "$backend" "${LIMIT:-120}" >>"$SUMMARY"
  fi
done
# Last: every recipe's paper preset for a few steps at full size.
SMOKE_LIMIT=${SMOKE_LIMIT:-200}
BACKENDS=${SMOKE_BACKENDS:-jax} timeout "$SMOKE_LIMIT" bash tools/studies/smoke_presets.sh \
  || printf 'smoke\t-\t-\tfailures, or past %s s\n' "$SMOKE_LIMIT" >>"$SUMMARY"
echo
echo "summary ($((SECONDS - start)) s):"
"$PY" - "$SUMMARY" <<'PYTHON'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
head = ["backend", "model / recipe", "input", "result"]
rows = [head] + [(r + ["", "", "", ""])[:4] for r in rows]
widths = [max(len(r[i]) for r in rows) for i in range(4)]
for r in rows:
    print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)))
PYTHON
