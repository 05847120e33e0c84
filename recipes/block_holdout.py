"""Holdout shift on the 2x2 block-style visual PVR task, with the logit analysis (Figures 6-8).

    python recipes/block_holdout.py                                      # quick, on a CPU
    python recipes/block_holdout.py --iid-run runs/block_iid/...         # reuse an IID run
    python recipes/block_holdout.py --preset paper --model vgg11_bn
    python recipes/block_holdout.py --preset paper --devices 4           # data-parallel, 4 GPUs

Trains the CNN under the holdout shift of Figure 6 (training never has digits 1-3 top right,
4-6 bottom left, 7-9 or 0 bottom right; the test set has only those) and, for comparison, the
same CNN trained IID (``block_iid.py``'s run; or, with ``--iid-run``, a finished block_iid
folder of the same configuration is reused). Then it computes the logits of both models on
the held-out test examples (Figure 8): the model trained under holdout has learned that a
pointer into a cell never comes with the cell's held-out classes, and gives those classes
low logits, so it scores below chance; the IID model has no such bias.

Writes into ``--out``: config.json; holdout/ and iid/ (run folders: record.json, history.csv,
learning_curve.png, model.keras); logits.json (accuracies on the held-out test set, mean
logits for pointer 0 with labels 1-3, per pointer group and per true class, for both models);
logits.csv (the same means, one row per model, subset and class) and logits.png: row 1 the
IID model, row 2 the holdout model; column 1 the mean logit of each class over held-out test
examples with pointer 0 and label 1-3 (Figure 8), columns 2-4 the same over the examples
whose pointer names the top-right, bottom-left and bottom-right cell; held-out classes of
that cell in red.

Presets as ``block_iid.py`` (``pvr_keras.kinds.block.kind.PRESETS``; ``paper``: width 64, Adam
1e-4, batch 50, 10 epochs, 60k/10k; ``medium``: width 16, 60k/10k, 5 epochs of Adam 2e-3 with
cosine decay; ``quick``: width 8, 25k examples, 5 epochs of Adam 2e-3 with cosine decay).
Measured for ``quick`` on real MNIST, TensorFlow, a 2-core CPU shared with other jobs
(load average 8-9), both models trained: 10.3 min in all (holdout run 5.3 min, IID run
4.4 min). Holdout: training accuracy 98.3%, held-out test accuracy 0.6% (chance is 10%);
IID: test accuracy 95.1%, and 94.5% on the held-out test set. Pointer 0 with labels 1-3:
the holdout model's mean logit of classes 1-3 is -2.1 against -0.1 for the other classes;
the IID model's +1.7 against -1.8 (Figure 8's pattern). Again after the XLA block pipeline,
from a fresh clone without other load: 4.0 min in all (1.9 + 1.8 min of
training); holdout train 98.1%, held-out test 1.3%; IID 94.3% test, 93.9% on the held-out test
set (CPU training is not bit-reproducible, so the accuracies move a little between runs).
"""

import dataclasses
import json
import pathlib

from pvr_keras import cli, files
from pvr_keras.kinds.block.kind import PRESETS


@dataclasses.dataclass(frozen=True)
class Own:
    iid_run: str | None = dataclasses.field(
        default=None,
        metadata={"help": "finished block_iid run folder of the same config to reuse"},
    )
    out: str = cli.out_field("runs/block_holdout/{model}_w{width}_{values}_n{num_examples}_s{seed}")

    def validate(self, run):
        if self.iid_run is not None:
            from pvr_keras.training.evaluate import run_folder_problem

            problem = run_folder_problem(self.iid_run, "a finished block_iid run folder")
            if problem:
                raise cli.ConfigError(f"--iid-run: {problem}")
            cli.check_task(lambda: check_iid_run(run, self.iid_run))  # before any work


def check_iid_run(run, folder):
    """Checks that ``folder`` is a finished block_iid run of ``run``'s IID config; returns
    its record."""
    from pvr_keras import legacy, registry
    from pvr_keras.training import read_record

    folder = pathlib.Path(folder)
    record = read_record(folder)
    if record.get("status") != "complete":
        raise ValueError(f"iid_run {folder} is not complete (status {record.get('status')!r})")
    with registry.reading(folder):  # what its record names is not imported
        theirs = legacy.migrate(record.get("config", {}))
        ours = run.replace(holdout=False).to_dict()
    if theirs != ours:
        keys = sorted(set(theirs) | set(ours))
        diff = {k: (theirs.get(k), ours.get(k)) for k in keys if theirs.get(k) != ours.get(k)}
        raise ValueError(
            f"iid_run {folder} was trained with another configuration; differing fields "
            f"(theirs, ours): {diff}"
        )
    return record


def write_csv(analysis, path):
    rows = [["model", "subset", "count", "class", "mean_logit"]]
    for model, summary in analysis.items():
        for subset, group in summary["subsets"].items():
            for c, value in enumerate(group["mean_logits"]):
                rows.append([model, subset, group["count"], c, f"{value:.6g}"])
        for label, row in enumerate(summary["mean_logits_by_class"]):
            for c, value in enumerate(row):
                rows.append([model, f"label {label}", "", c, f"{value:.6g}"])
    files.write_csv(path, rows)


def train_and_analyse(ctx):
    from pvr_keras.training import runs

    run, own, out = ctx.run, ctx.own, ctx.out
    common = dict(input=ctx.input, verbose="auto", distribution=ctx.placement)
    title = f"{run.model} (width {run.width}), 2x2 {run.values} blocks"
    holdout = runs.run(
        run.replace(holdout=True), out / "holdout", title=f"{title}, holdout",
        callbacks=ctx.callbacks(out / "holdout"), **common,
    )  # fmt: skip
    if own.iid_run is None:
        iid = runs.run(
            run.replace(holdout=False), out / "iid", title=f"{title}, IID",
            callbacks=ctx.callbacks(out / "iid"), **common,
        )  # fmt: skip
        iid_dir = out / "iid"
    else:
        iid, iid_dir = check_iid_run(run, own.iid_run), pathlib.Path(own.iid_run)
        print(f"IID model: reusing {iid_dir}")
    if not ctx.placement.is_chief:  # in a multi-host run the chief alone writes the analysis
        return holdout

    from pvr_keras import analysis, data, figures
    from pvr_keras.training import load_run

    task = run.task
    x, y, info = data.block_arrays(
        task, run.test_examples, split="test", seed=run.seed, holdout=True,
        data_dir=run.system.data_dir,
    )  # fmt: skip
    logits = {}
    for name, folder in (("IID", iid_dir), ("holdout", out / "holdout")):
        model = load_run(folder).model  # checked against the checksum its run recorded
        logits[name] = model.predict(x, batch_size=500, verbose=0)
    result = analysis.logit_analysis(task, logits, info["cell_labels"], y)
    summary = {
        "test_set": f"{run.test_examples} held-out test examples (Figure 6), seed {run.seed}",
        "iid_run": str(iid_dir),
        "iid_test_accuracy": iid["final"]["test_accuracy"],
        "holdout_train_accuracy": holdout["final"]["train_eval_accuracy"],
        "holdout_test_accuracy": holdout["final"]["test_accuracy"],
        "failed": bool(holdout["failed"] or iid["failed"]),
        "models": result,
    }
    files.write_text(out / "logits.json", json.dumps(summary, indent=2) + "\n")
    write_csv(result, out / "logits.csv")
    held = [(1, 2, 3), *task.holdout_classes()]  # Figure 8's column, then each cell's
    figures.logits(result, held, out / "logits.png",
                   f"{run.model} (width {run.width}), {run.values}")  # fmt: skip
    print()
    for record, setting in ((iid, "IID"), (holdout, "holdout")):
        print(runs.summary_line(record, f"{run.model} width={run.width} {setting}"))
    for name, found in result.items():
        group = found["subsets"]["pointer 0, label 1-3"]
        print(
            f"model trained {name}: held-out test accuracy {found['accuracy']:.4f}; pointer 0, "
            f"label 1-3: mean logit of classes 1-3 "
            f"{sum(group['mean_logits'][1:4]) / 3:.2f} vs others "
            f"{(group['mean_logits'][0] + sum(group['mean_logits'][4:])) / 7:.2f}"
        )
    print(f"logit analysis: {out}/logits.json, logits.csv, logits.png")
    return summary


COMMAND = cli.Command(
    kind="block",
    presets=PRESETS,
    body=train_and_analyse,
    own=Own,
    description=__doc__,
    exclude=("holdout", "population"),  # two runs of one configuration, never a grid
    subruns=("holdout", "iid"),  # its own run folders inside --out
)
main = COMMAND.main

if __name__ == "__main__":
    cli.main(main)
