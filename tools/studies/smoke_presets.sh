#!/usr/bin/env bash
# Every recipe's `paper` preset for a few steps at full size (the paper's widths and batch
# sizes, tiny example counts), per backend: does each one build, compile, train, record and
# save on this machine? One line per recipe: ok/FAILED and seconds. Meant for the first
# session on a GPU machine (tools/probes/gpu_check.sh runs it last); works on a CPU, slowly.
#
#   bash tools/studies/smoke_presets.sh            # BACKENDS="jax tensorflow", PYTHON=python3
#   BACKENDS=jax bash tools/studies/smoke_presets.sh
#   SMOKE_ONLY="token_pvr_mlp boolean_holdout" bash tools/studies/smoke_presets.sh   # just these
#
# With SMOKE_SUMMARY set, each result is also appended there (tab-separated) for
# tools/probes/gpu_check.sh's summary table.
#
# Image recipes need MNIST prepared (TFDS_DATA_DIR, or a connection for the first download).
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/pvr_smoke.XXXXXX")
TOKEN_FEW=(--num-examples 4096 --test-examples 2048 --epochs 1 --warmup-epochs 0 --min-steps 0)
VISUAL_FEW=(--num-examples 500 --test-examples 200 --train-eval-examples 100 --epochs 1)
failed=0

smoke() {  # name, then the command's arguments
  local name=$1; shift
  if [ -n "${SMOKE_ONLY:-}" ] && [[ " $SMOKE_ONLY " != *" $name "* ]]; then
    return 0
  fi
  local start=$SECONDS status=0 result
  "$PY" "$@" >"$OUT/$name.log" 2>&1 || status=$?
  # Exit 3: the run finished but failed by the paper's rule (expected after a few steps).
  if [ "$status" = 0 ] || [ "$status" = 3 ]; then
    result="ok ($((SECONDS - start)) s)"
    echo "  ok      $name ($((SECONDS - start)) s)"
  else
    result="FAILED ($((SECONDS - start)) s; exit $status; log $OUT/$name.log)"
    echo "  FAILED  $name ($((SECONDS - start)) s; exit $status; log $OUT/$name.log)"
    tail -5 "$OUT/$name.log" | sed 's/^/          /'
    failed=1
  fi
  if [ -n "${SMOKE_SUMMARY:-}" ]; then
    printf '%s\t%s\tpaper preset\t%s\n' "$KERAS_BACKEND" "$name" "$result" >>"$SMOKE_SUMMARY"
  fi
}

for backend in ${BACKENDS:-jax tensorflow}; do
  export KERAS_BACKEND=$backend
  echo "paper presets, a few steps at full size [$backend]:"
  for model in mlp mlp2x transformer mixer; do
    smoke "token_pvr_$model" recipes/token_pvr.py --preset paper --model "$model" "${TOKEN_FEW[@]}" \
      --out "$OUT/$backend/token_pvr_$model"
  done
  smoke evaluate tools/evaluate.py "$OUT/$backend/token_pvr_mlp" --holdout 0 --window 1 2
  for model in resnet18 vgg11_bn; do
    smoke "block_iid_$model" recipes/block_iid.py --preset paper --model "$model" \
      "${VISUAL_FEW[@]}" --out "$OUT/$backend/block_iid_$model"
  done
  smoke block_holdout recipes/block_holdout.py --preset paper "${VISUAL_FEW[@]}" \
    --iid-run "$OUT/$backend/block_iid_resnet18" --out "$OUT/$backend/block_holdout"
  smoke image_sequence recipes/image_sequence.py --preset paper "${VISUAL_FEW[@]}" \
    --out "$OUT/$backend/image_sequence"
  smoke fast_slow recipes/fast_slow.py --preset paper --seeds 0 1 "${TOKEN_FEW[@]}" \
    --cka-examples 500 --out "$OUT/$backend/fast_slow"
  smoke token_sweep recipes/token_sweep.py --preset paper --sweep size_window --models mixer \
    --windows 1 --sizes 4096 --seeds 0 --epochs 1 --warmup-epochs 0 --min-steps 0 \
    --test-examples 2048 --out "$OUT/$backend/token_sweep"
  smoke boolean_holdout recipes/boolean_holdout.py --preset paper --bits 0 --seeds 0 \
    --epochs 1 --out "$OUT/$backend/boolean_holdout"
  smoke tune recipes/tune.py --preset paper --max-trials 1 --epochs 1 --warmup-epochs 0 \
    --num-examples 4096 --val-examples 1024 --directory "$OUT/$backend/tune"
done
echo "logs and runs: $OUT"
exit $failed
