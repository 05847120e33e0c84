"""What each holdout run of a sweep predicts on its held-out windows, and why (Figure 14).

    python tools/holdout_analysis.py RESULTS_DIR      # every holdout run with a saved model

For every run in ``RESULTS_DIR/results.jsonl`` with holdout-k >= 1 and a ``model.keras``: its
accuracy on the held-out test windows and on an IID test set (recorded), the labels it
predicts on each held-out tuple, and how often the true label of that tuple comes with the
tuple's digits in the run's training split (``pvr_keras.analysis.held_out_summary``). Writes
``RESULTS_DIR/holdout_analysis.json`` (everything), ``holdout_analysis.csv`` (one row per run
and tuple) and ``holdout_analysis.png`` (predicted labels on the held-out windows, per run).
"""

import argparse
import json
import pathlib
import sys

from pvr_keras import cli


def analyse(results_dir, test_examples=5_000, train_examples=100_000, trust_code=False):
    from pvr_keras import compat

    compat.import_tensorflow_quietly()
    import keras

    from pvr_keras import analysis, data, legacy, registry
    from pvr_keras.sweeps import ResultsDir
    from pvr_keras.training import load_run

    results_dir = pathlib.Path(results_dir)
    records, _ = ResultsDir(results_dir).read()
    out = []
    for line in sorted(records, key=lambda r: (r["window"], r.get("holdout_values") or [],
                                               r["holdout"], r["seed"])):  # fmt: skip
        if not line.get("holdout"):
            continue
        path = results_dir / line["run_dir"] / "model.keras"
        if not path.is_file():
            print(f"{line['id']}: no model.keras, skipped")
            continue
        with registry.reading(results_dir / "results.jsonl"):  # a line runs no code
            run = legacy.from_line(line)
        task = run.task
        model = load_run(path.parent, trust_code=trust_code).model
        x, y = data.token_arrays(task, test_examples, split="test", seed=run.seed,
                                 holdout=run.holdout)  # fmt: skip
        xt, yt = data.token_arrays(task, train_examples, split="train", seed=run.seed,
                                   holdout=run.holdout)  # fmt: skip
        # One call, not predict(): a new model per run would retrace predict's function.
        predicted = keras.ops.convert_to_numpy(model(x, training=False)).argmax(axis=1)
        summary = analysis.held_out_summary(task, run.holdout, x, y, predicted, xt, yt)
        summary.update(
            id=line["id"], window=run.window, seed=run.seed,
            holdout_values=list(task.held_out_base), train_accuracy=line["train_accuracy"],
            test_accuracy=line["test_accuracy"], iid_test_accuracy=line.get("iid_test_accuracy"),
        )  # fmt: skip
        out.append(summary)
        print(
            f"{line['id']}: held-out {summary['accuracy']:.3f} (recorded "
            f"{line['test_accuracy']:.3f}), IID {line.get('iid_test_accuracy')}, predicted "
            f"labels {summary['predicted_counts']}"
        )
    return out


def write(summaries, results_dir):
    from pvr_keras import figures, files

    results_dir = pathlib.Path(results_dir)
    files.write_text(results_dir / "holdout_analysis.json", json.dumps(summaries, indent=1) + "\n")
    rows = [["id", "window", "holdout_values", "holdout", "seed", "tuple", "label", "count",
             "accuracy", "predicted_counts", "train_rate_given_digit",
             "train_rate_given_digit_anywhere", "train_rate"]]  # fmt: skip
    for s in summaries:
        for t in s["tuples"]:
            rows.append([
                s["id"], s["window"], " ".join(map(str, s["holdout_values"])), s["holdout"],
                s["seed"], " ".join(map(str, t["tuple"])), t["label"], t["count"],
                t["accuracy"], " ".join(map(str, t["predicted_counts"])),
                " ".join(f"{v:.4f}" for v in t["train_rate_given_digit"]),
                " ".join(f"{v:.4f}" for v in t["train_rate_given_digit_anywhere"]),
                f"{t['train_rate']:.4f}",
            ])  # fmt: skip
    files.write_csv(results_dir / "holdout_analysis.csv", rows)
    if summaries:
        figures.held_out_predictions(summaries, results_dir / "holdout_analysis.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results_dir")
    parser.add_argument("--test-examples", type=int, default=5_000)
    parser.add_argument("--train-examples", type=int, default=100_000)
    cli.trust_flags(parser)
    args = parser.parse_args(argv)
    cli.trust_modules(args.trust_module)
    if not (pathlib.Path(args.results_dir) / "results.jsonl").is_file():
        raise FileNotFoundError(f"{args.results_dir} holds no results.jsonl")
    summaries = analyse(args.results_dir, args.test_examples, args.train_examples, args.trust_code)
    write(summaries, args.results_dir)
    print(f"wrote {args.results_dir}/holdout_analysis.json, .csv, .png ({len(summaries)} runs)")
    return summaries


if __name__ == "__main__":
    try:
        main()
    except (FileNotFoundError, ValueError) as error:
        print(f"holdout_analysis: error: {error}", file=sys.stderr)
        sys.exit(2)
