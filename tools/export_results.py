"""Copies the small records of the medium studies into docs/results/, one folder per study.

    python tools/export_results.py RESULTS docs/results

(RESULTS: the folder of ``tools/studies/medium_studies.sh``.)

Each token study becomes a sweep results directory of its own (manifest, the study's lines of
``results.jsonl`` with their learning curves, ``sweeps/<name>.json``), so that
``python tools/make_figures.py docs/results/<study>`` redraws its figures from the committed
records; models and checkpoints are left behind. Studies:

- ``holdout``: token_sweep ``holdout_medium`` (Figure 14, Appendix E), with
  ``holdout_analysis.{json,csv,png}`` (tools/holdout_analysis.py) for its runs;
- ``thresholds``: token_sweep ``size_window_medium`` (Figures 9-10);
- ``figure11``: token_sweep ``size_window_paper`` (tools/studies/figure11_reduced.sh, or the
  paper grid);
- ``fast_slow``: fast_slow medium (Figures 12-13 in Appendix E's setting) and
  ``fast_slow_main``: fast_slow medium_main (Figure 12's own setting): ``NAME.{json,csv}``,
  ``NAME_learning_curves.png``, ``NAME_cka.png``;
- ``figure7``: block_holdout medium per CNN: ``logits.{json,csv,png}``, ``config.json`` and
  each run's ``record.json``, ``history.csv``, ``learning_curve.png``;
- the quick presets the docs quote (``tools/studies/quick_records.sh``): ``size_window_quick``
  (token_sweep ``size_window``), ``holdout_quick`` (token_sweep ``holdout``),
  ``fast_slow_quick``, ``block_holdout_quick`` (as figure7), ``token_pvr_quick`` (one run's
  ``record.json``, ``history.csv``, ``learning_curve.png`` and ``config.json``) and
  ``noise_sensitivity`` (Figure 5 on the paper preset: its CSV, ``noise_sensitivity.json``
  and figures);
- ``boolean``: every boolean_holdout setting in ``RESULTS/boolean`` (Abbe et al. 2022): its
  lines of ``results.jsonl``, ``sweeps/NAME.json``, ``config_NAME.json`` and the recipe's
  ``NAME.{json,csv,png}`` (per bit and seed: influence, errors, learned coefficients; the
  per-epoch ``fourier.json`` of each run stays behind);
- ``gotu``: every recipes/gotu.py task folder ``RESULTS/<task>`` with its ``gotu.json``
  (tools/studies/gotu_study.sh: RESULTS is runs/gotu_medium), into ``gotu/<task>``: its lines of
  ``results.jsonl``, ``sweeps/gotu.json``, ``gotu.{json,csv,png}`` and ``config_gotu.json``;
- ``chain_quick``, ``chain_medium``: recipes/chain.py's quick and medium presets
  (``RESULTS/chain_quick``, ``RESULTS/chain_medium``; multi-hop PVR): its lines of
  ``results.jsonl``, ``sweeps/chain.json``, ``chain.{json,csv,png}`` (every run's counts by
  hop count) and ``config_chain.json``;
- ``interventions``: recipes/interventions.py's folder ``RESULTS/interventions``
  (tools/studies/interventions_study.sh): every setting's ``NAME.{json,csv}``,
  ``config_NAME.json`` and heatmaps ``NAME_*.png``, and the lines and sweeps of its runs.

A study not run yet (or with no finished run) is skipped with a note. Exporting again adds
what is new and keeps what is committed: a study folder keeps its manifest, a run already in
it keeps its line (a run trained again under the same id, which ends with other wall times,
does not replace it; the export says so), and a JSON file whose content is unchanged keeps its
bytes, so a second export of the same records changes no byte. Delete a study's folder to
export it afresh. An export killed at any moment leaves a complete copy of each study, in
its folder or beside it (``.NAME.building``, ``.NAME.old``), which the next export takes up
before it reads the study. Paths under RESULTS in the copied JSON files are written as
``RESULTS/...``, so that the records do not carry the folder of the machine that ran them.

Nothing is read through a link inside a study folder (at a file or a sub-folder; the study
folder itself may be one, as tools/studies/medium_studies.sh makes ``RESULTS/boolean``) or from a
FIFO or a device, and JSON nested deeper than any record is refused: one line, exit status 2, the
committed study left as it was (``files.read_plain``).
"""

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import sys

from pvr_keras.files import read_json

# recipes/fast_slow.py --name: sweep and folder
FAST_SLOW = ("fast_slow", "fast_slow_main", "fast_slow_paper", "fast_slow_quick")
# sweep name in RESULTS/token -> study folder
TOKEN_STUDIES = {"holdout_medium": "holdout", "size_window_medium": "thresholds",
                 "holdout_paper": "holdout_paper", "aggregations": "aggregations_quick",
                 "pointer": "pointer_quick", "size_window_paper": "figure11",
                 "size_window": "size_window_quick", "holdout": "holdout_quick",
                 **{name: name for name in FAST_SLOW}}  # fmt: skip
# block_holdout studies: RESULTS/<name>/<run> (one folder per CNN) -> docs/results/<name>/<run>
IMAGE_STUDIES = ("figure7", "block_holdout_quick")
# single runs (recipes/token_pvr.py): RESULTS/<name> -> docs/results/<name>
RUN_STUDIES = ("token_pvr_quick",)
NOISE_FILES = (
    "config.json",
    "noise_sensitivity.csv",
    "noise_sensitivity.json",
    "noise_sensitivity_mod_sum.png",
    "noise_sensitivity_aggregations.png",
)
FAST_SLOW_FILES = ("{}.json", "{}.csv", "{}_learning_curves.png", "{}_cka.png")
RUN_FILES = ("record.json", "history.csv", "learning_curve.png")


def _holdout_tool():
    """tools/holdout_analysis.py (its writer of the JSON, CSV and figure)."""
    import holdout_analysis  # beside this file (a script's folder is on its import path)

    return holdout_analysis


def _copy(source, target, results, folder=None, committed=None, *, inside):
    """Copies one file of the study folder ``inside`` (which may itself be a link, the layout
    of tools/studies/medium_studies.sh): a link at the file or on the way down from ``inside``, a
    FIFO or a device is refused (``files.read_plain``), and a JSON file must be whole JSON.
    In a JSON file, the absolute path of ``results`` becomes RESULTS (and that of
    ``folder``, a study folder, ``RESULTS/<its name>``). A JSON file equal in content to
    ``committed`` (its previous export) is written with the committed bytes, so that a
    rewrite in another key order is not a change."""
    target = pathlib.Path(target)
    if target.is_dir():
        target = target / pathlib.Path(source).name
    from pvr_keras import files

    data = files.read_plain(source, inside=inside)
    if pathlib.Path(source).suffix != ".json":
        files.write_bytes(target, data)
        return
    files.parse_json(data, source)  # whole, and not nested deeper than any record
    text = data.decode()
    if folder is not None:  # a study folder reached through a link: its real path too
        text = text.replace(json.dumps(str(folder.resolve()))[1:-1], f"RESULTS/{folder.name}")
    text = text.replace(json.dumps(str(results.resolve()))[1:-1], "RESULTS")
    if committed is not None and committed.is_file():
        before = files.read_plain(committed)
        if _same_json(before, text):
            files.write_bytes(target, before)
            return
    files.write_text(target, text)


def _same_json(a, b):
    from pvr_keras.errors import DamagedFile
    from pvr_keras.files import parse_json

    try:
        return parse_json(a, "committed") == parse_json(b, "exported")
    except DamagedFile:
        return False


def _start(building, dest):
    """A results directory in ``building`` with the manifest of ``dest`` (the study as
    committed) when it has one, so that its ``created`` stamp does not change."""
    from pvr_keras.sweeps import ResultsDir
    from pvr_keras.sweeps.results import MANIFEST

    if (dest / MANIFEST).is_file():
        from pvr_keras import files

        files.write_bytes(building / MANIFEST, files.read_plain(dest / MANIFEST))
    return ResultsDir(building, create=True)


def _with_committed(lines, wanted, dest, name, log):
    """``lines`` (records of this export) merged with the study's committed records: those of
    the runs in ``wanted`` (every committed run if None) first, as committed and in their
    order (also when the results folder lacks them), then the new ones."""
    from pvr_keras.sweeps import ResultsDir
    from pvr_keras.sweeps.results import MANIFEST

    if not (dest / MANIFEST).is_file():
        return list(lines)
    committed = [r for r in ResultsDir(dest).read()[0] if wanted is None or r["id"] in wanted]
    kept = {r["id"]: r for r in committed}
    differ = [r["id"] for r in lines if r["id"] in kept and r != kept[r["id"]]]
    if differ:
        log(f"{name}: {len(differ)} run(s) already in {dest} keep their committed line, not "
            f"this results folder's (trained again?): {', '.join(differ)}")  # fmt: skip
    return committed + [r for r in lines if r["id"] not in kept]


def _recovered(dest, log=print):
    """What an export of ``dest`` killed part-way left beside it, resolved so that ``dest``
    is one complete copy of the study and nothing is left beside it. An export builds the
    study in ``.NAME.building``, then renames the committed study aside to ``.NAME.old``,
    renames the new one in and removes ``.NAME.old``: at no moment is there less than one
    complete copy. So, with ``dest`` there, what is beside it is a build cut short or a
    copy already replaced (removed); with ``dest`` missing, the killed export was between
    its two renames and ``.NAME.building`` is the new study whole (renamed in), or, without
    one, ``.NAME.old`` is the committed study (renamed back). A ``.NAME.building`` left where
    no study is can also be a first export cut short: it is kept all the same (never delete
    what may be the only copy), and this export merges its lines like any committed ones."""
    building, old = _beside(dest, "building"), _beside(dest, "old")
    if not os.path.lexists(dest):
        for leftover in (building, old):
            if os.path.isdir(leftover) and not os.path.islink(leftover):
                os.rename(leftover, dest)
                log(f"{dest}: recovered from {leftover.name}, left by an export killed "
                    "part-way")  # fmt: skip
                break
    for leftover in (old, building):
        if os.path.lexists(leftover):
            shutil.rmtree(leftover)


def _recover_all(dest, log):
    """``_recovered`` for every study folder under ``dest`` (``dest/NAME``, and
    ``dest/NAME/SUB`` of figure7 and gotu) an export killed part-way left a folder beside:
    before any study is read, so that the lines of a recovered copy count as committed."""
    for what in ("building", "old"):
        for leftover in sorted([*dest.glob(f".*.{what}"), *dest.glob(f"*/.*.{what}")]):
            name = leftover.name[1 : -len(what) - 1]
            if name and leftover.is_dir():
                _recovered(leftover.with_name(name), log)


def _beside(dest, what):
    """The folder beside ``dest`` an export uses as ``what`` (``.NAME.building``, ...)."""
    return dest.with_name(f".{dest.name}.{what}")


@contextlib.contextmanager
def _swapped_in(dest, log=print):
    """Yields a folder beside ``dest`` to write a study into; on success it replaces ``dest``,
    so a failure part-way (a figure that does not draw) leaves the study as it was, not half
    deleted, and a kill at any moment leaves a complete copy that the next export takes up
    (``_recovered``). Every file of ``dest`` that this export did not write again is carried
    over as it is (an export never drops a committed file), and the results folder's append
    lock (``.results.lock``, empty) is left behind."""
    _recovered(dest, log)
    building, old = _beside(dest, "building"), _beside(dest, "old")
    try:
        yield building
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    (building / ".results.lock").unlink(missing_ok=True)
    if dest.is_dir():
        for committed in sorted(dest.rglob("*")):
            new = building / committed.relative_to(dest)
            if committed.is_file() and not committed.is_symlink() and not new.exists():
                if committed.name != ".results.lock":
                    new.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(committed, new)
    if os.path.lexists(dest):
        os.rename(dest, old)  # the committed study aside, whole, until the new one is in
    os.rename(building, dest)
    if os.path.lexists(old):
        shutil.rmtree(old)


def _token_study(results, name, dest, log):
    from pvr_keras.sweeps import ResultsDir, make_figures

    token = results / "token"
    source = ResultsDir(token)
    definition = source.read_sweeps().get(name)
    if definition is None:
        log(f"{name}: not run yet in {token}, skipped")
        return None
    wanted = set(definition["run_ids"])
    lines = [r for r in source.read()[0] if r["id"] in wanted]
    if not lines:
        log(f"{name}: started in {token}, no run finished yet, skipped")
        return None
    lines = _with_committed(lines, wanted, dest, name, log)
    with _swapped_in(dest, log) as building:
        target = _start(building, dest)
        for line in lines:
            target.append(line)
        target.write_sweep(name, {**definition, "run_ids": [r["id"] for r in lines]})
        for config in token.glob(f"config_{name}.json"):
            _copy(config, building / config.name, results, committed=dest / config.name,
                  inside=token)  # fmt: skip
        if name in FAST_SLOW:
            for file in (pattern.format(name) for pattern in FAST_SLOW_FILES):
                if (token / file).is_file():
                    _copy(token / file, building / file, results, committed=dest / file,
                          inside=token)  # fmt: skip
        if name not in FAST_SLOW:
            make_figures(building, only=[name], log=lambda *a: None)
    drawn = " and drawn" if name not in FAST_SLOW else ""
    log(f"{name}: {len(lines)} of {len(wanted)} runs recorded{drawn} -> {dest}")
    return {r["id"] for r in lines}


BOOLEAN_FILES = ("{}.json", "{}.csv", "{}.png", "config_{}.json")


def _boolean_study(results, dest, log):
    """Every boolean_holdout setting (sweep) of ``RESULTS/boolean`` that has its summary."""
    from pvr_keras.sweeps import ResultsDir

    folder = results / "boolean"
    if not folder.is_dir():
        log(f"{folder}: no Boolean study yet")
        return
    source = ResultsDir(folder)
    lines = {r["id"]: r for r in _with_committed(source.read()[0], None, dest, "boolean", log)}
    settings = {}
    for name, definition in sorted(source.read_sweeps().items()):
        if (folder / f"{name}.json").is_file():
            settings[name] = {
                **definition,
                "run_ids": [i for i in definition["run_ids"] if i in lines],
            }
        else:
            log(f"boolean/{name}: no {name}.json yet (not finished), skipped")
    if not settings:
        return
    with _swapped_in(dest, log) as building:
        target = _start(building, dest)
        for run_id in dict.fromkeys(i for s in settings.values() for i in s["run_ids"]):
            target.append(lines[run_id])  # once, though settings share runs
        for name, definition in settings.items():
            target.write_sweep(name, definition)
            for file in (pattern.format(name) for pattern in BOOLEAN_FILES):
                if (folder / file).is_file():
                    _copy(folder / file, building / file, results, folder, dest / file,
                          inside=folder)  # fmt: skip
    written = ", ".join(f"{name} ({len(s['run_ids'])} runs)" for name, s in settings.items())
    log(f"boolean: {written} -> {dest}")


GOTU_FILES = ("gotu.json", "gotu.csv", "gotu.png", "config_gotu.json")


def _gotu_study(results, dest, log):
    """Every recipes/gotu.py task folder of ``RESULTS`` (``RESULTS/<task>``) that has its
    summary: its lines of ``results.jsonl``, ``sweeps/gotu.json`` and ``gotu.*``."""

    folders = sorted(p.parent for p in results.glob("*/gotu.json"))
    for folder in folders:
        _listed_study(results, folder, "gotu.json", GOTU_FILES, dest / folder.name,
                      f"gotu/{folder.name}", log, then=_gotu_config)  # fmt: skip


def _gotu_config(building):
    """``config_gotu.json`` as the ``gotu.json`` beside it says its grid was (the invocation
    that analysed these runs), not as the folder's latest invocation left it (one started
    and stopped later, with other seeds or variants, writes its own). A summary written
    before ``gotu.json`` held the whole config keeps the file copied."""
    from pvr_keras import cli, files

    config = files.read_json(building / "gotu.json").get("config", {})
    if "kind" in config:
        kept = cli.config_sections(config)
        files.write_text(building / "config_gotu.json", json.dumps(kept, indent=2) + "\n")


def _listed_study(results, folder, summary, names, dest, label, log, then=None):
    """A study whose ``summary`` JSON (or JSONs: a tuple) lists its runs (``gotu.json``,
    ``chain.json``; by ``run_dir`` or ``id``) into ``dest``, swapped in whole: the lines of
    those runs, its sweeps and its files ``names``; ``then(folder)`` last, on the folder
    being built."""
    from pvr_keras.sweeps import ResultsDir

    source = ResultsDir(folder)
    summaries = (summary,) if isinstance(summary, str) else summary
    ids = {(r["run_dir"].rpartition("/")[2] if "run_dir" in r else r["id"])
           for name in summaries for r in read_json(folder / name)["runs"]}  # fmt: skip
    lines = _with_committed([r for r in source.read()[0] if r["id"] in ids], None, dest, label,
                            log)  # fmt: skip
    with _swapped_in(dest, log) as building:
        target = _start(building, dest)
        for line in lines:
            target.append(line)
        for name, definition in source.read_sweeps().items():
            target.write_sweep(name, definition)
        for file in names:
            if (folder / file).is_file():
                _copy(folder / file, building / file, results, folder, dest / file,
                      inside=folder)  # fmt: skip
        if then is not None:
            then(building)
    log(f"{label}: {len(lines)} runs -> {dest}")


CHAIN_STUDIES = ("chain_quick", "chain_medium")  # RESULTS/<name> -> docs/results/<name>
CHAIN_FILES = ("chain.json", "chain.csv", "chain.png", "config_chain.json")


def _chain_study(results, name, dest, log):
    """A recipes/chain.py results folder ``RESULTS/<name>`` with its ``chain.json``: the
    lines of its runs, its sweep and ``chain.*`` (the counts by hop count of every run)."""
    folder = results / name
    if not (folder / "chain.json").is_file():
        log(f"{name}: no {folder}/chain.json yet, skipped")
        return
    _listed_study(results, folder, "chain.json", CHAIN_FILES, dest, name, log)


INTERVENTION_STUDY = "interventions"  # RESULTS/interventions -> docs/results/interventions


def _interventions_study(results, dest, log):
    """recipes/interventions.py's results folder ``RESULTS/interventions``: every setting run
    there (``NAME.json``: interventions, interventions_mlp, interventions_w3, ...), with its
    runs' lines, its sweep, ``NAME.{json,csv}``, ``config_NAME.json`` and its heatmaps."""
    folder = results / INTERVENTION_STUDY
    # the settings' summaries are named after the recipe (--name: interventions, ...)
    names = sorted(p.name for p in folder.glob("interventions*.json") if p.is_file()
                   and not p.is_symlink()) if folder.is_dir() else []  # fmt: skip
    if not names:
        log(f"{INTERVENTION_STUDY}: no {folder}/NAME.json yet, skipped")
        return
    stems = [n[: -len(".json")] for n in names]
    extra = sorted(p.name for stem in stems for p in folder.glob(f"{stem}_*.png"))
    files_ = [*names, *(f"{s}.csv" for s in stems), *(f"config_{s}.json" for s in stems), *extra]
    _listed_study(results, folder, tuple(names), files_, dest, INTERVENTION_STUDY, log)


def export(results, dest, log=print):
    results, dest = pathlib.Path(results), pathlib.Path(dest)
    if dest.is_dir():
        _recover_all(dest, log)
    token = results / "token"
    if token.is_dir():
        for name, study in TOKEN_STUDIES.items():
            ids = _token_study(results, name, dest / study, log)
            if ids is None:
                continue
            if study.startswith("holdout") and (token / "holdout_analysis.json").is_file():
                # The study's runs only (the results folder may hold other holdout runs):
                # its JSON, and its CSV and figure written again from those rows. A committed
                # row of a run this results folder has no analysis of stays.
                rows = [r for r in read_json(token / "holdout_analysis.json")
                        if r["id"] in ids]  # fmt: skip
                committed = dest / study / "holdout_analysis.json"
                if committed.is_file():
                    fresh = {r["id"] for r in rows}
                    kept = [r for r in read_json(committed)
                            if r["id"] in ids and r["id"] not in fresh]  # fmt: skip
                    rows = kept + rows
                if rows:
                    _holdout_tool().write(rows, dest / study)
    else:
        log(f"{token}: no token studies yet")
    for study in IMAGE_STUDIES:
        _image_study(results, study, dest, log)
    for study in RUN_STUDIES:
        run = results / study
        if (run / "record.json").is_file():
            committed = dest / study
            with _swapped_in(committed, log) as target:
                target.mkdir(parents=True)
                for file in (*RUN_FILES, "config.json"):
                    if (run / file).is_file():
                        _copy(run / file, target / file, results, committed=committed / file,
                              inside=run)  # fmt: skip
            log(f"{study}: {sorted(p.name for p in committed.iterdir())}")
    noise = results / "noise_sensitivity"
    if (noise / "noise_sensitivity.json").is_file():
        committed = dest / "noise_sensitivity"
        with _swapped_in(committed, log) as target:
            target.mkdir(parents=True)
            for file in NOISE_FILES:
                if (noise / file).is_file():
                    _copy(noise / file, target / file, results, committed=committed / file,
                          inside=noise)  # fmt: skip
        log(f"noise_sensitivity: {sorted(p.name for p in committed.iterdir())}")
    _boolean_study(results, dest / "boolean", log)
    _gotu_study(results, dest / "gotu", log)
    for name in CHAIN_STUDIES:
        _chain_study(results, name, dest / name, log)
    _interventions_study(results, dest / INTERVENTION_STUDY, log)


def _image_study(results, study, dest, log):
    """Each CNN's folder of a block_holdout study: the logits analysis, the config and the
    IID and holdout runs' records."""
    folder = results / study
    for run in sorted(folder.glob("*")) if folder.is_dir() else []:
        committed = dest / study / run.name
        with _swapped_in(committed, log) as target:
            target.mkdir(parents=True)
            for file in ("logits.json", "logits.csv", "logits.png", "config.json"):
                if (run / file).is_file():
                    _copy(run / file, target / file, results, committed=committed / file,
                          inside=folder)  # fmt: skip
            for sub in ("holdout", "iid"):
                for file in RUN_FILES:
                    if (run / sub / file).is_file():
                        (target / sub).mkdir(exist_ok=True)
                        _copy(run / sub / file, target / sub / file, results,
                              committed=committed / sub / file, inside=folder)  # fmt: skip
        log(f"{study}/{run.name}: {sorted(p.name for p in committed.iterdir())}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="the RESULTS folder of tools/studies/medium_studies.sh")
    parser.add_argument("dest", help="where the study folders go (docs/results)")
    args = parser.parse_args(argv)
    if not pathlib.Path(args.results).is_dir():
        raise FileNotFoundError(f"{args.results} does not exist")
    export(args.results, args.dest)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a link refused (UnsafePath), a damaged file
        print(f"export_results: error: {error}", file=sys.stderr)
        sys.exit(2)
