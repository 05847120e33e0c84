"""Benchmark any model on a fixed, named suite of PVR tasks, beside the paper's models.

    python tools/benchmark.py --model mixer --width 0.125             # the quick suite
    python tools/benchmark.py --model my_nets.py:tiny_net              # a builder of yours
    python tools/benchmark.py --model my_pkg.nets:tiny_net --suite standard
    python tools/benchmark.py --model resnet18                         # image models: blocks
    python tools/benchmark.py --predictions preds.npy --config token/w3   # made anywhere

The suite (``pvr_keras.sweeps.suites``) is a fixed list of tasks trained with one fixed
budget. Token models: windows 1-4 of mod_sum, window 2 with median, holdout-1 (tested on the
held-out windows, and on IID data) and without the pointer. Image models (builders registered
with ``kind="image"``): 2x2 MNIST blocks, IID and under Figure 6's holdout. ``quick``: 20,000
token examples, 12 epochs at batch 128 (about 5 min for the paper's MLP on a 2-core CPU);
``standard``: 300,000 examples, 30 epochs at batch 1024.

``--predictions FILE --config NAME`` trains nothing: it scores a NumPy array of predictions
for a split of a benchmark config (``pvr_keras.benchmarks``; ``--split``, default test, and
``--size``), made by a model trained in any framework on that config's canonical splits, and
prints the report of ``benchmarks.score`` (accuracy overall, per pointer value, on held-out
windows and the rest; Boolean: MSE and half MSE on the cube, the frozen bit's influence).
Predictions saved with ``benchmarks.save_predictions`` have a description beside them
(``FILE.json``: the config, version, split and size they were made for): scoring them on
another is refused, naming both. A .npy without one is scored unchecked (and says so).

Resumable (a sweep results directory: started again, it trains only what is missing). Writes
into ``--out``: results.jsonl and runs/ (every run's record and model), and the table:
benchmark.json (per entry: test accuracy, training accuracy, IID accuracy of the holdout
entry, failed, minutes), benchmark.md and benchmark.png, each beside the committed numbers of
the paper's models for the same suite (``--reference``: docs/results/benchmark/<suite>/*.json;
a model's own benchmark.json, copied there, becomes a reference too).
"""

import dataclasses
import functools
import json
import os
import pathlib

from pvr_keras import cli, files
from pvr_keras.runconfig import DataSection, ModelSection
from pvr_keras.sweeps.suites import SUITES

REFERENCE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "results" / "benchmark"


@dataclasses.dataclass(frozen=True)
class Config:
    model: str = cli.field_of(ModelSection, "model")
    width: float | None = cli.field_of(
        ModelSection, "width", default=None,
        help="scale of every model width (none: 1); a CNN's base channels (none: the suite's)",
    )  # fmt: skip
    suite: str = dataclasses.field(
        default="quick", metadata={"choices": tuple(SUITES), "help": "which suite"}
    )
    seed: int = cli.field_of(DataSection, "seed")
    reference: str = dataclasses.field(
        default=str(REFERENCE),
        metadata={"help": "folder of the committed numbers of other models (<suite>/*.json)"},
    )
    out: str = dataclasses.field(
        default="runs/benchmark/{suite}/{model}",
        metadata={"help": "results directory ({suite}, {model}: the model's name)"},
    )
    backend: str | None = cli.system_field("backend")
    input: str | None = cli.system_field("input")
    predictions: str | None = dataclasses.field(
        default=None,
        metadata={"help": "score a .npy of predictions made anywhere (no training): class ids "
                  "(N,) or logits (N, 10); Boolean configs: real values (N,); checked against "
                  "the description beside it where there is one (preds.npy.json: "
                  "benchmarks.save_predictions)"},
    )  # fmt: skip
    config: str | None = dataclasses.field(
        default=None, metadata={"help": "the benchmark config of --predictions (token/w3)"}
    )
    split: str = dataclasses.field(
        default="test", metadata={"choices": ("train", "validation", "test"),
                                  "help": "the split of --predictions"},
    )  # fmt: skip
    size: str = dataclasses.field(
        default="standard", metadata={"choices": ("standard", "small"),
                                      "help": "the size preset of --predictions' split"},
    )  # fmt: skip

    def validate(self):
        cli.check_ints(self, ("seed",), 0)
        if self.predictions is not None or self.config is not None:
            cli.check_task(lambda: load_predictions(self))
            return
        cli.check_task(lambda: suite_runs(self))
        cli.check_task(lambda: out_folder(self))


PRESETS = {"quick": lambda given: {}, "standard": lambda given: dict(suite="standard")}


_LOADED = {}  # (file, config, split, size, stats) -> what validate read: scored, not read again


def _stats(path):
    info = os.stat(path, follow_symlinks=False)
    return info.st_ino, info.st_mtime_ns, info.st_size


def load_predictions(cfg):
    """``(array, description)``: the ``--predictions`` array, checked against ``--config``'s
    split, and the description saved beside it (``benchmarks.save_predictions``; None when
    there is none: not checked). The array is a .npy file of real numbers
    (``files.read_npy``: no pickle, no link), its header (shape, dtype) checked before its
    data is read; the description, when there is one, says which config, version, split and
    size the predictions were made for, and another than asked is refused before the array
    is read. Read once: the array checked is the array scored."""
    from pvr_keras.benchmarks import predictions

    try:  # the same files, unchanged since validate read them
        info = _stats(cfg.predictions)
        beside = predictions.description_path(cfg.predictions)
        described = _stats(beside) if os.path.lexists(beside) else None
    except (OSError, TypeError, ValueError):
        return _read_predictions(cfg)  # says what is wrong
    key = (cfg.predictions, cfg.config, cfg.split, cfg.size, info, described)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = _read_predictions(cfg)
    return _LOADED[key]


def _rows_hint(config, split, size, rows):
    """``; token/w1 test (small) has 2,000: pass --size small``: a split of ``config`` with
    ``rows`` examples (the same split at another size first, then the other splits), else
    nothing."""
    from pvr_keras.benchmarks import SPLITS

    for other in (split, *(s for s in SPLITS if s != split)):
        for preset in config.hooks.sizes:
            if (other, preset) != (split, size) and config.sizes(preset)[other] == rows:
                flags = f"--split {other} " if other != split else ""
                flags += f"--size {preset}" if preset != size else ""
                return f"; {config.name} {other} ({preset}) has {rows:,}: pass {flags.strip()}"
    return ""


def _read_predictions(cfg):
    from pvr_keras import benchmarks
    from pvr_keras.benchmarks import predictions
    from pvr_keras.errors import DamagedFile

    if cfg.predictions is None or cfg.config is None:
        raise ValueError("--predictions and --config go together (a .npy file and the "
                         "benchmark config it predicts, e.g. token/w3)")  # fmt: skip
    config = benchmarks.get(cfg.config)
    path = pathlib.Path(cfg.predictions)
    n = config.sizes(cfg.size)[cfg.split]
    asked = predictions.made_for(cfg.config, cfg.split, cfg.size)
    description = predictions.read_description(path)
    if description is not None:  # made for another split: refused before the array is read
        predictions.check_made_for(description, asked, path)

    def check(shape, dtype):
        if len(shape) not in (1, 2):
            raise ValueError(f"--predictions {path} holds an array of shape {shape}; expected "
                             f"one row per example: ({n},) or ({n}, classes)")  # fmt: skip
        if shape[0] != n:
            raise ValueError(f"--predictions {path} holds {shape[0]:,} rows; {config.name} "
                             f"{cfg.split} ({cfg.size}) has {n:,} examples"
                             f"{_rows_hint(config, cfg.split, cfg.size, shape[0])}")  # fmt: skip

    try:
        array = files.read_npy(path, check=check)
    except FileNotFoundError:
        raise ValueError(f"--predictions {path}: no such file") from None
    except (DamagedFile, OSError) as error:  # not an array, a link, a FIFO, ...
        raise ValueError(f"--predictions: {error}") from None
    if description is not None:
        predictions.check_array(description, array, path)
    return array, description


def score_predictions(cfg):
    """``--predictions``: scores the file on the config's split and prints the report, and
    whether the file's description said it was made for that split (checked) or there was
    none (not checked)."""
    from pvr_keras import benchmarks
    from pvr_keras.benchmarks import predictions

    array, description = load_predictions(cfg)
    report = cli.check_task(lambda: benchmarks.score(cfg.config, array, cfg.split,
                                                     size=cfg.size))  # fmt: skip
    print(json.dumps(report, indent=1))
    headline = report.get("accuracy", report.get("half_mse"))
    metric = "accuracy" if "accuracy" in report else "half MSE"
    print(f"\n{report['config']} {report['version']} {cfg.split} ({cfg.size}, "
          f"{report['examples']:,} examples): {metric} {headline:.4f}")  # fmt: skip
    beside = predictions.description_path(cfg.predictions).name
    if description is not None:
        print(f"checked: {beside} says the predictions were made for "
              f"{predictions.describe(description)}")  # fmt: skip
    else:
        print(
            f"not checked: no {beside} beside the predictions says which config, version, "
            f"split and size they were made for (benchmarks.save_predictions writes it)"
        )
    return report


def suite_runs(cfg):
    """``[(entry, Run)]`` of the benchmark (every run checked, no framework imported)."""
    from pvr_keras.sweeps import suites

    found = suites.runs(cfg.suite, cfg.model, width=cfg.width, seed=cfg.seed)
    return [(name, run.replace(input=cfg.input)) for name, run in found]


def label(cfg, runs):
    """The model's column name: its name (or reference) and width unless the default."""
    run = runs[0][1]
    width = run.width
    default = 1.0 if not run.model_spec.width_arg else SUITES[cfg.suite].image_width
    return run.model if width == default else f"{run.model} (width {width:g})"


def out_folder(cfg):
    slug = cfg.model.rpartition(":")[2]
    return pathlib.Path(cli.format_out(cfg.out, {**dataclasses.asdict(cfg), "model": slug}))


def entry_results(runs, lines):
    """``{entry: results}`` from the results lines of the suite's runs."""
    out = {}
    for name, run in runs:
        line = lines.get(run.run_id)
        if line is None:
            continue
        out[name] = {
            "test_accuracy": line["test_accuracy"],
            "train_accuracy": line["train_accuracy"],
            "iid_test_accuracy": line.get("iid_test_accuracy"),
            "failed": line["failed"],
            "minutes": round(line["wall_time_s"] / 60, 2),
            "id": line["id"],
        }
    return out


MAX_REFERENCE_BYTES = 4 << 20  # a committed table is a few kB


def _reference_table(path):
    """A committed benchmark table, read as untrusted (a plain file, bounded, JSON of the
    shape ``main`` writes); ``ValueError`` naming the file otherwise."""
    table = files.read_json(path, MAX_REFERENCE_BYTES)
    if not isinstance(table, dict) or not all(
        isinstance(table.get(k), str) for k in ("suite", "kind", "label")
    ):
        raise ValueError(f"{path} is not a benchmark table (an object with suite, kind, label)")
    entries = table.get("entries")
    if not isinstance(entries, dict) or not all(
        isinstance(e, dict) and _accuracy(e.get("test_accuracy"))
        and _accuracy(e.get("iid_test_accuracy"), missing=True)
        for e in entries.values()
    ):  # fmt: skip
        raise ValueError(
            f"{path} is not a benchmark table: its entries must each give a test_accuracy in [0, 1]"
        )
    return table


def _accuracy(value, missing=False):
    if value is None:
        return missing
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def references(folder, suite, kind, own):
    """``{label: {entry: results}}`` of the committed benchmark tables of other models, each
    read as untrusted: a file that is not a plain one (a link, a FIFO) or not a table is a
    one-line ``ValueError`` (``check_references`` finds it before any training)."""
    found = {}
    for path in sorted((pathlib.Path(folder) / suite).glob("*.json")):
        try:
            table = _reference_table(path)
        except OSError as error:
            raise ValueError(f"{path} cannot be read ({error})") from None
        if table["suite"] == suite and table["kind"] == kind and table["label"] != own:
            found[table["label"]] = table["entries"]
    return found


def markdown(suite, entries, columns):
    """The table as Markdown: one row per entry, one column per model."""
    header = ["entry", *columns]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name in entries:
        cells = []
        for results in columns.values():
            found = results.get(name)
            if found is None:
                cells.append("-")
                continue
            cell = f"{found['test_accuracy']:.3f}"
            if found.get("iid_test_accuracy") is not None:
                cell += f" (IID {found['iid_test_accuracy']:.3f})"
            cells.append(cell + (" failed" if found.get("failed") else ""))
        lines.append("| " + " | ".join([name, *cells]) + " |")
    note = f"Test accuracy on the {suite} suite (holdout entries: the held-out test set)."
    return note + "\n\n" + "\n".join(lines) + "\n"


def main(argv=None):
    cfg = cli.parse(Config, PRESETS, argv, description=__doc__)
    if cfg.predictions is not None:
        return score_predictions(cfg)
    runs = suite_runs(cfg)
    out = out_folder(cfg)
    cli.check_out_folder(out, sweep=True)
    cli.check_task(lambda: cli.sweeps_manifest_compatible(out))
    from pvr_keras.sweeps.suites import model_kind

    kind, own = model_kind(cfg.model), label(cfg, runs)
    # The reference tables, read before any training: a bad one is one line, not a hang.
    cli.check_task(lambda: references(cfg.reference, cfg.suite, kind, own))
    cli.start(cfg.backend)
    from pvr_keras import figures, sweeps

    name = f"benchmark_{cfg.suite}"
    sweeps.run_sweep(
        [run for _, run in runs], out, name=name,
        trainer=functools.partial(sweeps.train_run, save_model=True),
    )  # fmt: skip
    lines = {r["id"]: r for r in sweeps.ResultsDir(out).read()[0]}
    mine = entry_results(runs, lines)
    table = {
        "suite": cfg.suite,
        "description": SUITES[cfg.suite].description,
        "kind": kind,
        "model": cfg.model,
        "label": own,
        "entries": mine,
        "references": references(cfg.reference, cfg.suite, kind, own),
    }
    files.write_text(out / "benchmark.json", json.dumps(table, indent=1) + "\n")
    entries = [name for name, _ in runs]
    columns = {own: mine, **table["references"]}
    files.write_text(out / "benchmark.md", markdown(cfg.suite, entries, columns))
    figures.benchmark(
        entries,
        {k: [v.get(e, {}).get("test_accuracy") for e in entries] for k, v in columns.items()},
        out / "benchmark.png",
        f"{cfg.suite} suite: test accuracy ({own} outlined)",
    )
    print()
    print(markdown(cfg.suite, entries, columns))
    print(f"wrote {out}/benchmark.json, benchmark.md, benchmark.png")
    return table


if __name__ == "__main__":
    cli.main(main)
