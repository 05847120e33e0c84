"""Evaluate a finished run's model on fresh data: another split, window, holdout or seed.

    python tools/evaluate.py RUN_DIR                       # its own test set: the record's
    python tools/evaluate.py RUN_DIR --holdout 0 1 2       # IID and holdout-k test sets
    python tools/evaluate.py RUN_DIR --window 1 2 3 --seed 7 --num-examples 20000
    python tools/evaluate.py RUN_DIR --split train --num-examples 5000

RUN_DIR is any finished run folder with a saved model (``record.json`` and ``model.keras``):
``token_pvr.py``, ``block_iid.py``, ``image_sequence.py``, a sweep's or benchmark's
``runs/<id>`` or ``block_holdout.py``'s ``holdout`` / ``iid`` folders, of any task kind and
any model (a builder of your own is reloaded from its module or file). Each combination of
``--window`` and ``--holdout`` is one row of the printed table (split, window, holdout, seed,
examples, accuracy, loss); settings not given are the run's own, so the first row of a plain
call is the run's recorded test accuracy. Each row is the run with those fields replaced,
streamed and scored as training streams and scores it. A ``--window`` / ``--holdout`` the run
cannot take is refused at once, from its record, before any framework loads. ``--json PATH``
also writes the rows. Block runs take ``--holdout true|false`` (Figure 6's shift).
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
    cli.trust_flags(parser)
    args = parser.parse_args(argv)
    cli.trust_modules(args.trust_module)
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
    check_requests(args)
    return args


def check_requests(args):
    """Refuses a ``--window`` / ``--holdout`` the run cannot take (holdout 3 of a window-2
    run), from its record alone: before Keras or TensorFlow is imported. A record naming
    code of its own is checked once loaded (``training.load_run`` decides whether to trust
    it), as is a record that does not read."""
    from pvr_keras import legacy, registry
    from pvr_keras.errors import UntrustedCode
    from pvr_keras.training import records

    # Read as untrusted: a run rebuilt here with another window or holdout imports nothing
    # its record names (an aggregation of its own); load_run decides, with --trust-code.
    with registry.reading(args.run_dir):
        try:
            config = records.read_record(args.run_dir)["config"]
            run = legacy.from_config(config)
        except (OSError, ValueError, TypeError, KeyError):
            return  # load_run says what is wrong with the folder
        for window, holdout in itertools.product(args.window or [None], args.holdout or [None]):
            fields = {"holdout": holdout, "seed": args.seed}
            if window is not None:
                fields["window"] = window
            try:
                run.replace(**{k: v for k, v in fields.items() if v is not None})
            except UntrustedCode:
                return  # code of the run's own: load_run checks it, once trusted
            except ValueError as err:
                raise cli.ConfigError(str(err)) from None


def _number(value, metric):
    """A recorded metric as a reader wants it: accuracy 4 decimals (and a percent), MSE 4
    decimals; none recorded: ``none``."""
    if value is None:
        return "none"
    if metric == "mse":
        return f"{value:.4f}"
    return f"{value:.4f} ({100 * value:.2f}%)"


def main(argv=None):
    args = parse(argv)
    cli.start(args.backend)
    from pvr_keras import training

    run = training.load_run(args.run_dir, trust_code=args.trust_code)
    windows = args.window or [None]
    holdouts = args.holdout or [None]
    rows = []
    for window, holdout in itertools.product(windows, holdouts):
        fields = {"seed": args.seed, "holdout": holdout, "window": window}
        try:
            rows.append(
                run.evaluate(
                    split=args.split, num_examples=args.num_examples, data_dir=args.data_dir,
                    **{k: v for k, v in fields.items() if v is not None},
                )
            )  # fmt: skip
        except ValueError as err:
            raise cli.ConfigError(str(err)) from None
    final = run.record.get("final") or {}
    metric = run.run.spec.metric
    what = "test MSE" if metric == "mse" else "test accuracy"
    recorded = final.get("test_loss" if metric == "mse" else "test_accuracy")
    # The run's model as the run names it (a builder of yours by its reference), not the
    # Keras model's own name ("functional" for a builder that names none).
    print(f"{args.run_dir}: {run.run.spec.name} run, model {run.run.model}, recorded {what} "
          f"{_number(recorded, metric)}")  # fmt: skip
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
