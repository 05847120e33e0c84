#!/usr/bin/env bash
# One short check for a machine with a GPU (under 8 minutes): the devices, then a paper-sized
# epoch of mlp and mixer on token data and of resnet18 on block data, examples/s per model and
# backend. Usage: bash tools/gpu_check.sh   (PYTHON=..., BACKENDS="jax tensorflow", LIMIT=...)
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
  KERAS_BACKEND=$backend timeout "${LIMIT:-220}" "$PY" tools/gpu_check.py "$@" \
    || echo "backend $backend: failed or ran past ${LIMIT:-220} s"
done
