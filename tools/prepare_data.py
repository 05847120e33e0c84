"""Prepare MNIST and CIFAR-10 in a TFDS data dir, for a machine without internet.

    python tools/prepare_data.py DIR                   # both datasets into DIR
    python tools/prepare_data.py DIR --datasets mnist  # only MNIST (~11 MB download)

Run it on a machine with internet, copy DIR to the air-gapped machine, then point the library
at it: ``export TFDS_DATA_DIR=DIR`` (or ``data_dir=DIR`` / a recipe's ``--data-dir DIR``).
DIR is an ordinary TFDS data dir (what ``tfds build NAME --data_dir DIR`` leaves), prepared by
TFDS's own ``download_and_prepare``; datasets already prepared there are left as they are.
Without a connection it stops within seconds and says so (exit status 2).
"""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data_dir", metavar="DIR", help="the TFDS data dir to prepare")
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["mnist", "cifar10"],
        choices=["mnist", "cifar10"],
        help="which datasets (default: both)",
    )
    args = parser.parse_args(argv)
    from pvr_keras.data import images

    prepared = {}
    for name in args.datasets:
        root, version = images.prepare(name, args.data_dir)
        prepared[name] = version
        print(f"{name} {version}: prepared in {root}")
    return prepared


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as error:
        print(f"prepare_data: error: {error}", file=sys.stderr)
        sys.exit(2)
