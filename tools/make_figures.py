"""Paper-style figures from a sweep results directory.

    python tools/make_figures.py RESULTS_DIR                # every sweep stored there
    python tools/make_figures.py RESULTS_DIR --sweep holdout --out figures/

For each sweep in ``RESULTS_DIR/sweeps/`` (written by ``recipes/token_sweep.py``) it draws the
figure its spec asks for (``pvr_keras.sweeps.figures``): test accuracy against training-set
size on a log axis, one line per window, one panel per architecture (Figures 9-11), per
aggregation (Figure 16), without/with pointer (Figure 17), or against k for holdout-k
(Figure 14, runs below 60% training accuracy drawn as discarded). Error bars span the seeds;
failed runs are drawn as crosses, not dropped. Writes ``<sweep>_<metric>.png`` and
``<sweep>.csv`` (the numbers drawn) into ``--out`` (default ``RESULTS_DIR/figures``).

Lines of ``results.jsonl`` that are not whole records (a writer killed mid-line) are reported
and skipped. A directory that is not a results directory, or holds no readable record, is an
error (exit status 2) with a message that says what was found; so is a link, a FIFO or a
device at ``results.jsonl``, ``sweep.json`` or in ``sweeps/`` (never read through or waited
on).
"""

import argparse
import sys

from pvr_keras.sweeps.figures import make_figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results_dir", help="a sweep results directory")
    parser.add_argument("--out", help="output folder (default RESULTS_DIR/figures)")
    parser.add_argument("--sweep", nargs="+", help="only these sweeps")
    args = parser.parse_args(argv)
    return make_figures(args.results_dir, args.out, args.sweep)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a link refused (UnsafePath), a damaged file
        print(f"make_figures: error: {error}", file=sys.stderr)
        sys.exit(2)
