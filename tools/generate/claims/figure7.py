"""Figures 7, 8 and 15 (Appendix B): the CNNs on 2x2 MNIST blocks, IID and under holdout,
and the logits of the held-out classes (the ``figure7`` study)."""

from .formats import minutes, pct
from .records import as_cell, markdown_table, study_json


def _figure7(r, study):
    out = {}
    for model in ("resnet18", "vgg11_bn"):
        path = r[study].path / model
        if not path.is_dir():
            continue
        logits = r[study].json(f"{model}/logits.json")
        runs = {s: r[study].json(f"{model}/{s}/record.json") for s in ("iid", "holdout")}
        config = r[study].json(f"{model}/config.json")
        out[model] = dict(logits=logits, runs=runs, config=config.get("run", config))
    return out


def fig7(r):
    medium, quick = _figure7(r, "figure7"), _figure7(r, "block_holdout_quick")

    def cells(found):
        logits = found["logits"]
        return (pct(logits["iid_test_accuracy"]), pct(logits["holdout_train_accuracy"]),
                pct(logits["holdout_test_accuracy"]))  # fmt: skip

    res, vgg = cells(medium["resnet18"]), cells(medium["vgg11_bn"])
    q = quick["resnet18"]
    qc = cells(q)
    ours = (f"ResNet18 IID test {res[0]}, holdout train {res[1]} / held-out test {res[2]}; "
            f"VGG11-BN {vgg[0]}, {vgg[1]} / {vgg[2]}. Quick (ResNet18 width "
            f"{q['config']['width']}, {q['config']['num_examples'] // 1000}k): {qc[0]}, "
            f"{qc[1]} / {qc[2]}")  # fmt: skip

    def both(found):
        return sum(found["runs"][s]["wall_time_s"] for s in ("iid", "holdout"))

    time = (f"[`figure7`](figure7.md) medium study, "
            f"{minutes(both(medium['resnet18']))} (ResNet18) and "
            f"{minutes(both(medium['vgg11_bn']))} (VGG11-BN); quick "
            f"`python recipes/block_holdout.py`, {minutes(both(q))}")  # fmt: skip
    return ours, time


def fig8(r):
    medium = _figure7(r, "figure7")

    def pair(found, model):
        cell = found["logits"]["models"][model]["subsets"]["pointer to top right"]
        return f"{cell['mean_logit_held_out']:+.2f} vs {cell['mean_logit_other']:+.2f}"

    res, vgg = medium["resnet18"], medium["vgg11_bn"]
    ours = ("pointer to the top-right cell, digit 1-3: mean logit of classes 1-3 vs the others: "
            f"holdout ResNet18 {pair(res, 'holdout')}, VGG11-BN {pair(vgg, 'holdout')}; IID "
            f"models {pair(res, 'IID')}, {pair(vgg, 'IID')}")  # fmt: skip
    time = "`figure7` medium study (`logits.json`, `logits.png`); quick: " \
           "`python recipes/block_holdout.py`"  # fmt: skip
    return ours, time


FURTHER = ("pointer to bottom left", "pointer to bottom right")  # Figure 15: the other cells


def fig15(r):
    medium = _figure7(r, "figure7")
    res, vgg = medium["resnet18"], medium["vgg11_bn"]

    def pair(found, model, subset):
        cell = found["logits"]["models"][model]["subsets"][subset]
        return f"{cell['mean_logit_held_out']:+.2f} vs {cell['mean_logit_other']:+.2f}"

    def cell(subset):
        classes = res["logits"]["models"]["holdout"]["subsets"][subset]["held_out_classes"]
        return (f"{subset[len('pointer to '):]} (classes {', '.join(map(str, classes))}): "
                f"holdout ResNet18 {pair(res, 'holdout', subset)}, VGG11-BN "
                f"{pair(vgg, 'holdout', subset)}; IID {pair(res, 'IID', subset)}, "
                f"{pair(vgg, 'IID', subset)}")  # fmt: skip

    ours = ("the further pointer positions, mean logit of the cell's held-out classes vs the "
            f"others: {'; '.join(cell(s) for s in FURTHER)}")  # fmt: skip
    time = "`figure7` medium study (`logits.json`, its subsets for every pointed cell)"
    return ours, time


def fig15_verdict(r):
    """Reproduced when, at every further pointer position, both holdout models give the held-
    out classes a lower mean logit than the others and both IID models a higher one."""
    medium = _figure7(r, "figure7")
    low = high = True
    for found in medium.values():
        for subset in FURTHER:
            for model, wanted in (("holdout", "low"), ("IID", "high")):
                cell = found["logits"]["models"][model]["subsets"][subset]
                below = cell["mean_logit_held_out"] < cell["mean_logit_other"]
                low = low and (below if wanted == "low" else True)
                high = high and (not below if wanted == "high" else True)
    if low and high:
        return "partly: reproduced at width 16 (paper 64), 5 epochs (paper 10), 1 seed"
    if not low:
        return ("not reproduced: the holdout models do not give every further cell's held-out "
                "classes lower logits")  # fmt: skip
    return "not reproduced: the IID models give held-out classes lower logits too"


def table(study):
    rows = []
    for run in sorted(p for p in study.glob("*") if (p / "logits.json").is_file()):
        logits = study_json(study, run.name, "logits.json")
        records = {}
        for sub in ("iid", "holdout"):
            path = run / sub / "record.json"
            records[sub] = study_json(study, run.name, sub, "record.json") if path.is_file() else {}
        minutes = [records[s].get("wall_time_s") for s in ("iid", "holdout")]
        held = logits["models"]["holdout"]["subsets"]["pointer to top right"]
        iid = logits["models"]["IID"]["subsets"]["pointer to top right"]
        config = study_json(study, run.name, "config.json")
        config = config.get("run", config)  # the run's identity (flat before the run config)
        rows.append([
            f"{config['model']}, width {config['width']}",
            f"{as_cell(records['iid'].get('final', {}).get('train_eval_accuracy'))} / "
            f"{as_cell(logits['iid_test_accuracy'])}",
            f"{as_cell(logits['holdout_train_accuracy'])} / "
            f"{as_cell(logits['holdout_test_accuracy'])}",
            f"{as_cell(held['mean_logit_held_out'], 2)} / {as_cell(held['mean_logit_other'], 2)}",
            f"{as_cell(iid['mean_logit_held_out'], 2)} / {as_cell(iid['mean_logit_other'], 2)}",
            " + ".join("-" if m is None else f"{m / 60:.1f}" for m in minutes),
        ])  # fmt: skip
    if not rows:
        return None
    header = ["model", "IID train / test", "holdout train / held-out test",
              "holdout model: logit 1-3 / others", "IID model: logit 1-3 / others",
              "min (IID + holdout)"]  # fmt: skip
    return markdown_table(header, rows)
