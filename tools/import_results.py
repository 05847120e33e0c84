"""Takes committed study records back into a results folder, to go on with a study elsewhere.

    python tools/import_results.py docs/results/holdout_paper RESULTS/token
    python tools/import_results.py docs/results/holdout_paper docs/results/fast_slow_paper \\
        RESULTS/token

tools/export_results.py copies a study's small records (``results.jsonl``, ``sweeps/``) into
``docs/results/<study>`` and leaves models and checkpoints behind. On a fresh machine, or
another one, this puts those records into the results folder a recipe writes to
(``ResultsDir.merge``): the study's finished runs count as recorded, so the sweep skips them
instead of training them again, and the next export keeps them beside the new ones (an export
writes a study from the results folder alone). Records already there are left as they are.
The study's other files (recipe configs ``config_NAME.json``, a recipe's summaries such as
boolean_holdout's ``NAME.{json,csv,png}``) are copied where the results folder has none.

    python tools/import_results.py docs/results/boolean RESULTS/boolean
A recipe step that needs a finished run's model (fast_slow.py's CKA) still needs that run's
folder; the message then names the missing ``model.keras``.
"""

import argparse
import pathlib

# the results folder's own files (ResultsDir.merge takes in the records and sweeps)
OWN = {"sweep.json", "results.jsonl", "results.corrupt", ".results.lock"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="+", help="exported study folders (docs/results/NAME)")
    parser.add_argument("results", help="the results folder to take them into (created)")
    args = parser.parse_args(argv)
    from pvr_keras import files
    from pvr_keras.sweeps import ResultsDir

    for study in args.studies:
        if not (pathlib.Path(study) / "sweep.json").is_file():
            parser.error(f"{study} is not an exported study (no sweep.json there)")
    target = ResultsDir(args.results, create=True)
    for study in args.studies:
        added, names = target.merge(study)
        for file in sorted(pathlib.Path(study).iterdir()):
            if file.is_file() and file.name not in OWN and not (target.path / file.name).exists():
                files.write_bytes(target.path / file.name, file.read_bytes())
        print(f"{study}: {added} record(s) added, sweeps {', '.join(names) or 'none'} -> "
              f"{target.path}")  # fmt: skip


if __name__ == "__main__":
    main()
