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

Presets as ``block_iid.py`` (``paper``: width 64, Adam 1e-4, batch 50, 10 epochs, 60k/10k;
``medium``: width 16, 60k/10k, 5 epochs of Adam 2e-3 with cosine decay; ``quick``: width 8,
25k examples, 5 epochs of Adam 2e-3 with cosine decay). Measured for
``quick`` on real MNIST, TensorFlow, a 2-core CPU shared with other jobs
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

from pvr_keras import config as configs

CELLS = ("top right", "bottom left", "bottom right")


@dataclasses.dataclass(frozen=True)
class Config(configs.BlockConfig):
    iid_run: str | None = dataclasses.field(
        default=None,
        metadata={"help": "finished block_iid run folder of the same config to reuse"},
    )
    out: str = dataclasses.field(
        default="runs/block_holdout/{model}_w{width}_{values}_n{num_examples}_s{seed}",
        metadata={"help": "output folder ({field} placeholders are filled in)"},
    )

    def validate(self):
        super().validate()
        if self.iid_run is not None:
            from pvr_keras.training.evaluate import run_folder_problem

            problem = run_folder_problem(self.iid_run, "a finished block_iid run folder")
            if problem:
                raise configs.ConfigError(f"--iid-run: {problem}")


# The presets of block_iid.py (configs.block_presets): its runs can stand in for the IID model.
PRESETS = configs.block_presets(Config)


def check_iid_run(cfg, folder):
    """Checks that ``folder`` is a finished block_iid run of ``cfg``; returns its record."""
    from pvr_keras.training import read_record

    folder = pathlib.Path(folder)
    record = read_record(folder)
    if record.get("status") != "complete":
        raise ValueError(f"iid_run {folder} is not complete (status {record.get('status')!r})")
    found = record.get("config", {})
    fields = configs.block_run_fields()
    theirs = {k: found.get(k) for k in fields} | {"holdout": found.get("holdout")}
    ours = {k: v for k, v in configs.to_dict(cfg).items() if k in fields}
    ours["holdout"] = False
    if theirs != ours:
        diff = {k: (theirs[k], ours[k]) for k in ours if theirs[k] != ours[k]}
        raise ValueError(
            f"iid_run {folder} was trained with another configuration; differing fields "
            f"(theirs, ours): {diff}"
        )
    return record


def logit_analysis(task, logits, cell_labels, labels):
    """Figure 8's numbers for each model: {model: summary}, from logits on held-out tests.

    Args:
        task: the 2x2 ``BlockTask``.
        logits: {model name: (N, 10) logits} on the same held-out test examples.
        cell_labels: (N, 4) class of every cell (cell 0 the pointer digit).
        labels: (N,) true labels.
    """
    import numpy as np

    from pvr_keras.analysis import mean_logits_by_class

    pointer = cell_labels[:, 0]
    named = task.named_cell(pointer)  # 1..3
    subsets = {"pointer 0, label 1-3": (pointer == 0) & np.isin(labels, (1, 2, 3))}
    for k, name in enumerate(CELLS):
        subsets[f"pointer to {name}"] = named == k + 1
    held = dict(zip(CELLS, task.holdout_classes(), strict=True))
    result = {}
    for model, z in logits.items():
        z = np.asarray(z, np.float64)
        predicted = z.argmax(axis=1)
        groups = {}
        for name, mask in subsets.items():
            mean = z[mask].mean(axis=0) if mask.any() else np.full(z.shape[1], np.nan)
            groups[name] = {
                "count": int(mask.sum()),
                "mean_logits": mean.tolist(),
                "accuracy": float((predicted[mask] == labels[mask]).mean()) if mask.any() else None,
            }
        for name in CELLS:  # how much the held-out classes are pushed down
            group = groups[f"pointer to {name}"]
            mask = np.zeros(z.shape[1], bool)
            mask[list(held[name])] = True
            mean = np.asarray(group["mean_logits"])
            group["held_out_classes"] = list(held[name])
            group["mean_logit_held_out"] = float(mean[mask].mean())
            group["mean_logit_other"] = float(mean[~mask].mean())
        result[model] = {
            "accuracy": float((predicted == labels).mean()),
            "subsets": groups,
            "mean_logits_by_class": mean_logits_by_class(z, labels, task.num_classes).tolist(),
        }
    return result


def write_csv(analysis, path):
    import csv

    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["model", "subset", "count", "class", "mean_logit"])
        for model, summary in analysis.items():
            for subset, group in summary["subsets"].items():
                for c, value in enumerate(group["mean_logits"]):
                    writer.writerow([model, subset, group["count"], c, f"{value:.6g}"])
            for label, row in enumerate(summary["mean_logits_by_class"]):
                for c, value in enumerate(row):
                    writer.writerow([model, f"label {label}", "", c, f"{value:.6g}"])


def plot(analysis, task, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models = list(analysis)
    subsets = list(next(iter(analysis.values()))["subsets"])
    held = [(1, 2, 3), *task.holdout_classes()]
    fig, axes = plt.subplots(
        len(models), len(subsets), figsize=(3.4 * len(subsets), 2.8 * len(models)), sharey=True
    )
    classes = np.arange(task.num_classes)
    for i, model in enumerate(models):
        for j, subset in enumerate(subsets):
            ax = axes[i, j]
            group = analysis[model]["subsets"][subset]
            colors = ["tab:red" if c in held[j] else "tab:gray" for c in classes]
            ax.bar(classes, group["mean_logits"], color=colors)
            ax.axhline(0, color="black", linewidth=0.5)
            ax.set_xticks(classes)
            ax.set_title(f"{subset} (n={group['count']})", fontsize=9)
            if j == 0:
                accuracy = analysis[model]["accuracy"]
                ax.set_ylabel(f"trained {model}\nmean logit (acc {accuracy:.0%})")
            if i == len(models) - 1:
                ax.set_xlabel("class")
    fig.suptitle(f"{title}\nheld-out test examples; red: classes held out in the named cell")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    cfg = configs.parse(Config, PRESETS, argv, description=__doc__)
    out = pathlib.Path(configs.format_out(cfg))
    configs.start(cfg)
    from pvr_keras.training import distribute
    from pvr_keras.training.inputs import check_input, default_input

    source = configs.check_task(lambda: check_input(cfg.input or default_input()))

    # First: a multi-host engine (TF_CONFIG, KERAS_DISTRIBUTION_*) must start before any op.
    placement = distribute.setup(cfg.devices)
    if cfg.iid_run is not None:
        check_iid_run(cfg, cfg.iid_run)  # before any training
    from pvr_keras.data import images

    # Data first: a machine that cannot get it fails here, before anything is written.
    images.prepare_sources(cfg.task().sources, cfg.data_dir, download=cfg.download)
    configs.write(cfg, out)  # refuses a folder of another run, untouched
    from pvr_keras.training import runs

    # The runs' config: the block fields alone, as block_iid.py records them (no iid_run).
    base = configs.BlockConfig(
        **{f.name: getattr(cfg, f.name) for f in dataclasses.fields(configs.BlockConfig)}
    )
    holdout = runs.block_run(
        base, out / "holdout", holdout=True, input=source, distribution=placement,
        callbacks=configs.callbacks(cfg, out / "holdout"),
    )  # fmt: skip
    if cfg.iid_run is None:
        iid = runs.block_run(
            base,
            out / "iid",
            input=source,
            distribution=placement,
            callbacks=configs.callbacks(cfg, out / "iid"),
        )
        iid_dir = out / "iid"
    else:
        iid, iid_dir = check_iid_run(cfg, cfg.iid_run), pathlib.Path(cfg.iid_run)
        print(f"IID model: reusing {iid_dir}")
    if not placement.is_chief:  # in a multi-host run the chief alone writes the analysis
        return holdout

    import keras

    from pvr_keras import data
    from pvr_keras.tasks import BlockTask

    task = BlockTask(values=cfg.values)
    x, y, info = data.block_arrays(
        task, cfg.test_examples, split="test", seed=cfg.seed, holdout=True, data_dir=cfg.data_dir
    )
    logits = {}
    for name, folder in (("IID", iid_dir), ("holdout", out / "holdout")):
        model = keras.saving.load_model(folder / "model.keras")
        logits[name] = model.predict(x, batch_size=500, verbose=0)
    analysis = logit_analysis(task, logits, info["cell_labels"], y)
    summary = {
        "test_set": f"{cfg.test_examples} held-out test examples (Figure 6), seed {cfg.seed}",
        "iid_run": str(iid_dir),
        "iid_test_accuracy": iid["final"]["test_accuracy"],
        "holdout_train_accuracy": holdout["final"]["train_eval_accuracy"],
        "holdout_test_accuracy": holdout["final"]["test_accuracy"],
        "failed": bool(holdout["failed"] or iid["failed"]),
        "models": analysis,
    }
    (out / "logits.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_csv(analysis, out / "logits.csv")
    plot(analysis, task, out / "logits.png", f"{cfg.model} (width {cfg.width}), {cfg.values}")
    print()
    for record, setting in ((iid, "IID"), (holdout, "holdout")):
        print(runs.summary_line(record, f"{cfg.model} width={cfg.width} {setting}"))
    for name, result in analysis.items():
        group = result["subsets"]["pointer 0, label 1-3"]
        print(
            f"model trained {name}: held-out test accuracy {result['accuracy']:.4f}; pointer 0, "
            f"label 1-3: mean logit of classes 1-3 "
            f"{sum(group['mean_logits'][1:4]) / 3:.2f} vs others "
            f"{(group['mean_logits'][0] + sum(group['mean_logits'][4:])) / 7:.2f}"
        )
    print(f"logit analysis: {out}/logits.json, logits.csv, logits.png")
    return summary


if __name__ == "__main__":
    configs.run(main)
