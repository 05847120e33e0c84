"""Exports benchmark configs' splits as files any framework reads, with a dataset card, or as
an lm-evaluation-harness task folder.

    python tools/export_dataset.py token/w3 DIR --format parquet       # pyarrow
    python tools/export_dataset.py token/w3 boolean/f3 DIR --format parquet  # DIR/token_w3/...
    python tools/export_dataset.py boolean/f3-frozen0 DIR --format text  # JSON lines of prompts
    python tools/export_dataset.py token/w2-holdout1 DIR --format tfrecord --size small
    python tools/export_dataset.py token/w3 boolean/f3 DIR --format lm-eval --size small
    lm_eval --model hf --model_args pretrained=MODEL --include_path DIR --tasks pvr_token_w3

See ``pvr_keras.benchmarks.export``: DIR must be new (or an empty folder, not a link); it gets
train, validation and test files (one config) or a folder of them per config (several) and a
README.md whose YAML header lets Hugging Face ``datasets`` read them
(``load_dataset(DIR, "token_w3")``); ``--format lm-eval`` writes the tasks ``pvr_token_w3``
(generated replies) and ``pvr_token_w3_mc`` (multiple choice) and the groups ``pvr`` and
``pvr_mc`` (``pvr_keras.benchmarks.lm_eval_export``). Exit status 2 for bad input, 1 when
another export writes DIR.
"""

import argparse
import sys


def main(argv=None):
    from pvr_keras.benchmarks import export

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    listing = "python -c 'from pvr_keras import benchmarks; print(benchmarks.names())'"
    parser.add_argument("names", nargs="+", metavar="NAME", help=f"benchmark configs ({listing})")
    parser.add_argument("out", help="a new folder")
    parser.add_argument("--format", default="parquet", choices=tuple(export.FORMATS))
    parser.add_argument("--size", default="standard", choices=("standard", "small"))
    parser.add_argument("--data-dir", help="TFDS data dir of MNIST / CIFAR-10 (image configs)")
    args = parser.parse_args(argv)
    export.export(args.names, args.out, fmt=args.format, size=args.size, data_dir=args.data_dir)
    return 0


def run(argv=None):
    """``main`` as a command: 0, or one line on stderr and 2 (bad input: a config, a format,
    a target that is a link, a file or cannot be written) or 1 (a target another export is
    writing, a planted lock link, a full disk)."""
    from pvr_keras.errors import DamagedFile, DiskFull, RunBusy, UnsafePath

    try:
        return main(argv)
    except (RunBusy, UnsafePath, DiskFull, DamagedFile) as error:
        print(f"export_dataset: error: {error}", file=sys.stderr)
        return 1
    except (ValueError, ImportError) as error:
        print(f"export_dataset: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run())
