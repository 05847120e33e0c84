"""Evaluate a finished run's model on fresh data: another split, window, holdout or seed.

    python recipes/evaluate.py RUN_DIR                       # its own test set: the record's
    python recipes/evaluate.py RUN_DIR --holdout 0 1 2       # IID and holdout-k test sets
    python recipes/evaluate.py RUN_DIR --window 1 2 3 --seed 7 --num-examples 20000
    python recipes/evaluate.py RUN_DIR --split train --num-examples 5000

RUN_DIR is any finished run folder with a saved model (``record.json`` and ``model.keras``):
``token_pvr.py``, ``block_iid.py``, ``image_sequence.py``, a sweep's or benchmark's
``runs/<id>`` or ``block_holdout.py``'s ``holdout`` / ``iid`` folders, of any task kind and
any model (a builder of your own is reloaded from its module or file). Each combination of
``--window`` and ``--holdout`` is one row of the printed table (split, window, holdout, seed,
examples, accuracy, loss); settings not given are the run's own, so the first row of a plain call is
the run's recorded test accuracy. ``--json PATH`` also writes the rows. Block runs take
``--holdout true|false`` (Figure 6's shift).
"""

import argparse
import itertools
import json
import pathlib

from pvr_keras import cli, files


def _holdout(text):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        message = f"holdout must be an integer or true/false: {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def parse(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run_dir", help="a finished run folder (record.json and model.keras)")
    parser.add_argument("--split", choices=("test", "train"), default="test")
    parser.add_argument("--num-examples", type=int, help="examples (default: the run's test size)")
    parser.add_argument("--seed", type=int, help="stream seed (default: the run's)")
    parser.add_argument("--window", type=int, nargs="+", help="window sizes (default: the run's)")
    parser.add_argument("--holdout", type=_holdout, nargs="+", help="holdout settings")
    parser.add_argument("--data-dir", help="TFDS data dir of image runs (default: the run's)")
    parser.add_argument("--backend", choices=("tensorflow", "jax"), help="Keras backend")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument(
        "--trust-code",
        action="store_true",
        help="import the builder or task kind file the run names (only the file it trained "
        "with: its SHA-256 is checked); without it a run naming code of its own is refused",
    )
    args = parser.parse_args(argv)
    if args.json is not None:  # checked before the evaluation, not after it
        target = pathlib.Path(args.json)
        if target.is_dir():
            raise cli.ConfigError(f"--json {args.json} is a folder; give a file name")
        if not target.parent.is_dir():
            raise cli.ConfigError(f"--json {args.json}: no folder {target.parent}")
    from pvr_keras.training.evaluate import run_folder_problem

    problem = run_folder_problem(args.run_dir)
    if problem:
        raise cli.ConfigError(problem)
    for name in ("num_examples", "window"):
        values = getattr(args, name)
        for value in values if isinstance(values, list) else [values]:
            if value is not None and value < 1:
                raise cli.ConfigError(f"--{name.replace('_', '-')} must be >= 1; received {value}")
    if args.seed is not None and not 0 <= args.seed < 2**63:
        raise cli.ConfigError(f"--seed must be in [0, 2**63); received {args.seed}")
    return args


def main(argv=None):
    args = parse(argv)
    cli.start(args.backend)
    from pvr_keras import training

    run = training.load_run(args.run_dir, trust_code=args.trust_code)
    windows = args.window or [None]
    holdouts = args.holdout or [None]
    rows = []
    for window, holdout in itertools.product(windows, holdouts):
        try:
            rows.append(
                run.evaluate(
                    split=args.split, num_examples=args.num_examples, seed=args.seed,
                    holdout=holdout, window=window, data_dir=args.data_dir,
                )
            )  # fmt: skip
        except ValueError as err:
            raise cli.ConfigError(str(err)) from None
    final = run.record.get("final") or {}
    print(f"{args.run_dir}: {run.kind} run, {run.record.get('model')}, recorded test accuracy "
          f"{final.get('test_accuracy')}")  # fmt: skip
    header = ("split", "window", "holdout", "seed", "examples", "accuracy", "loss")
    table = [header] + [
        tuple(f"{r[k]:.4f}" if k in ("accuracy", "loss") else str(r[k]) for k in header)
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
    if args.json:
        files.write_text(args.json, json.dumps(rows, indent=1) + "\n")
    return {"rows": rows}


if __name__ == "__main__":
    cli.main(main)
