#!/usr/bin/env bash
# A reduced Figure 11 (issue 20, item 2c): the 1/8-width MLP-Mixer at windows 1-4, each at the
# paper's threshold ~5x10^(m+3) examples (m = window - 1) and at one tenth of it, with the
# same step budget for both sizes of a window (20 epochs of the threshold size; the tenth
# trains as many steps), so a failure at the tenth is not under-training; plus the paper's
# MLP at window 4 on 10^6 and 10^7 examples. One seed. Resumable: run it again after a kill.
# The step-budget control (window 2 at a tenth of its threshold on window 3's tenth-size
# budget, 9,800 steps with ~100 of warm-up) and seeds 1-2 of window 3 at 5x10^4 run before
# window 4. Every run on BACKEND if set, else on the engine measured fastest on this machine for
# the run's model (pvr_keras.engines; cached per machine).
# The paper states sufficiency at ~5x10^(m+3); a tenth of it is our probe, not its claim.
# The window-4 Mixer alone is 2 x 97,660 steps: ~11 h on a 2-core CPU at TensorFlow + XLA's
# ~0.2 s a step (tools/probes/bench_engines.py), 47-93 h at JAX's; each line can run on its own machine.
#
#   bash tools/studies/figure11_reduced.sh [RESULTS [FLAGS...]]   # default runs/figure11_reduced
#   python tools/make_figures.py RESULTS/token       # Figure 11's panels from the records
#   python tools/export_results.py RESULTS docs/results   # the records -> figure11/
# On another machine, take the committed records in first so finished runs are skipped:
#   python tools/import_results.py docs/results/figure11 RESULTS/token
# Any flags after RESULTS go to every grid of the study: the launcher's put it on a cluster
# (docs/scaling.md, "A study on SLURM"), and the same command later collects it:
#   bash tools/studies/figure11_reduced.sh RESULTS --launcher submitit --submitit.partition gpu --submitit.detach
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-runs/figure11_reduced}
shift || true
LAUNCH=("$@")  # the launcher flags, given to every grid
PY=${PYTHON:-python}
BACKEND=${BACKEND:-}
sweep() {
  echo "=== $(date -u +%FT%TZ) $*"
  "$PY" recipes/token_sweep.py --sweep size_window --preset paper ${BACKEND:+--backend "$BACKEND"} --seeds 0 \
    --test-examples 10000 --epochs 20 --warmup-epochs 2 --out "$RESULTS/token" "$@" ${LAUNCH[@]+"${LAUNCH[@]}"}
}
# --min-steps: 20 epochs of the threshold size at batch 1024, for both sizes of the window;
# window 1 gets window 2's budget, because 100 steps left the Mixer unfitted on 5,000 examples
# (59.6% training accuracy in a first run).
sweep --models mixer --width 0.125 --windows 1 --sizes 500 5000 --min-steps 980
sweep --models mixer --width 0.125 --windows 2 --sizes 5000 50000 --min-steps 980
sweep --models mixer --width 0.125 --windows 3 --sizes 50000 500000 --min-steps 9780
# the control: window 2 at 5x10^3 on the steps (and warm-up steps) of window 3 at 5x10^4
sweep --models mixer --width 0.125 --windows 2 --sizes 5000 --min-steps 9800 --warmup-epochs 20
sweep --models mixer --width 0.125 --windows 3 --sizes 50000 --min-steps 9780 --seeds 1 2
sweep --models mixer --width 0.125 --windows 4 --sizes 500000 5000000 --min-steps 97660
sweep --models mlp --windows 4 --sizes 1000000 10000000 --min-steps 195320
echo "=== $(date -u +%FT%TZ) done"
