#!/usr/bin/env bash
# The medium study of Generalization on the Unseen (Abbe, Bengio, Lotfi, Rizk 2023) in
# docs/results/gotu: which models learn the min-degree interpolator, the leak against the
# learning rate, length generalisation, majority (maj3), 2parity at d = 40 (tracked on a sample
# of the cube), the Degree-Curriculum (N = 3,000 to 11,000). recipes/gotu.py, one task after
# another, coverage first (seed 1 of everything, then seeds 2-3); resumable: run it again
# after a kill and finished runs are skipped.
#
#   bash tools/studies/gotu_study.sh [RESULTS [FLAGS...]]   # default runs/gotu_medium
#   python tools/export_results.py RESULTS docs/results
# Any flags after RESULTS go to every grid of the study: the launcher's put it on a cluster
# (docs/scaling.md, "A study on SLURM"), and the same command later collects it:
#   bash tools/studies/gotu_study.sh RESULTS --launcher submitit --submitit.partition gpu --submitit.detach
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/gotu_medium}
shift || true
LAUNCH=("$@")  # the launcher flags, given to every grid
PY=${PYTHON:-python}
BACKEND=${BACKEND:-}  # else the engine measured fastest on this machine (pvr_keras.engines)
gotu() {
  local task=$1; shift
  echo "=== $(date -u +%FT%TZ) $task $*"
  "$PY" recipes/gotu.py --preset medium ${BACKEND:+--backend "$BACKEND"} --task "$task" \
    --out "$RESULTS/$task" "$@" ${LAUNCH[@]+"${LAUNCH[@]}"}
}
for seeds in "1" "1 2 3"; do
  # shellcheck disable=SC2086  # the seeds are words
  gotu 2parity --seed $seeds
  gotu threesym --seed $seeds
  gotu rfexample --seed $seeds
  gotu lr --seed $seeds
  gotu lengthgen --seed $seeds
  gotu cyclic3dim15 --seed $seeds
  gotu maj3 --seed $seeds
  gotu 2parity40 --seed $seeds
  gotu full16parity --seed $seeds
done
echo "=== $(date -u +%FT%TZ) done"
