"""The committed records of docs/results, read safely: one ``Study`` per folder."""

import pathlib

from pvr_keras.files import read_json


class Study:
    """The committed records of one study folder of docs/results.

    Every file is read inside ``results`` (``files.read_plain``): a study named ``../x`` or
    reached through a link, or a file that is a link, a FIFO or a device, is refused, so a
    value marker reads nothing outside docs/results."""

    def __init__(self, results, name):
        from results_tables import _records

        self.name = name
        self.root = pathlib.Path(results)
        self.path = self.root / name
        if not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: no such study (run tools/export_results.py)")
        self.lines = _records(self.path, inside=self.root)
        self._files = {}

    def runs(self, **where):
        """The records whose fields equal ``where`` (at least one, else LookupError)."""
        found = [r for r in self.lines if all(r.get(k) == v for k, v in where.items())]
        if not found:
            raise LookupError(f"{self.name}: no record with {where}")
        return found

    def one(self, **where):
        found = self.runs(**where)
        if len(found) != 1:
            raise LookupError(f"{self.name}: {len(found)} records with {where}, expected 1")
        return found[0]

    def json(self, name):
        """The JSON file ``name`` of the study, read once (the tables and markers ask for the
        same summaries many times; nothing here changes what it gets)."""
        if name not in self._files:
            self._files[name] = read_json(self.path / name, inside=self.root)
        return self._files[name]

    def sweep(self, name):
        """The records of one sweep of the study, in its order."""
        ids = self.json(f"sweeps/{name}.json")["run_ids"]
        by_id = {r["id"]: r for r in self.lines}
        return [by_id[i] for i in ids]


class _Lazy(dict):
    def __init__(self, results):
        super().__init__()
        self.results = pathlib.Path(results)

    def __missing__(self, name):
        self[name] = Study(self.results, name)
        return self[name]

    def json(self, relative):
        """The JSON file ``relative`` of docs/results, read inside it (see ``Study``)."""
        return read_json(self.results / relative, inside=self.results)


def studies(results):
    """The studies of ``results`` (docs/results), each read when first used."""
    return _Lazy(results)
