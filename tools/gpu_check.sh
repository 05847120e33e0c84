#!/usr/bin/env bash
# One check for a machine with a GPU: the devices, then a paper-sized epoch of mlp and mixer on
# token data and of resnet18 on block data, examples/s per model, backend and input (JAX:
# device input, made on the accelerator, against tf.data; TensorFlow: tf.data) and, for the
# token models, the achieved TFLOP/s as a fraction of the GPU's dense bf16 peak (under 10
# minutes); then every recipe's paper preset for a few steps at full size
# (tools/smoke_presets.sh, SMOKE_LIMIT seconds at most).
# Usage: bash tools/gpu_check.sh   (PYTHON=..., BACKENDS="jax tensorflow", LIMIT=...; extra
# arguments go to tools/gpu_check.py, e.g. --policy mixed_bfloat16)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"
for backend in ${BACKENDS:-jax tensorflow}; do
  if ! KERAS_BACKEND=$backend "$PY" -c "import keras" >/dev/null 2>&1; then
    echo "backend $backend: keras cannot start it here (package missing); skipped"
    continue
  fi
  KERAS_BACKEND=$backend timeout "${LIMIT:-300}" "$PY" tools/gpu_check.py "$@" \
    || echo "backend $backend: failed or ran past ${LIMIT:-300} s"
done
# Last: every recipe's paper preset for a few steps at full size.
SMOKE_LIMIT=${SMOKE_LIMIT:-900}
timeout "$SMOKE_LIMIT" bash tools/smoke_presets.sh || echo "smoke_presets: failures or ran past $SMOKE_LIMIT s"
