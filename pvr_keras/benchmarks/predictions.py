"""Predictions saved with what they were made for, so that scoring them elsewhere is checked.

    benchmarks.save_predictions("preds.npy", predictions, "token/w3", "test", size="small")

writes the array as a NumPy ``.npy`` file (no pickle) and beside it ``preds.npy.json``: the
config, its version, the split and its size, and the array's shape, dtype and SHA-256.
``tools/benchmark.py --predictions preds.npy --config token/w3 --size small`` reads both and
refuses predictions made for another config, version, split or size, naming both; a ``.npy``
without that file is scored as before, unchecked. Both files are read as untrusted: the
description is bounded JSON of known fields, the array a bounded ``.npy`` of real numbers
(``files.read_npy``).
"""

import hashlib
import io
import json
import pathlib
import re

import numpy as np

from pvr_keras import files
from pvr_keras.benchmarks import catalog
from pvr_keras.checks import check_real_dtype
from pvr_keras.errors import DamagedFile, UnsafePath

FORMAT = "pvr-keras/predictions"
MAX_DESCRIPTION_BYTES = 64 << 10  # a description is a few hundred bytes
_FIELDS = ("config", "version", "split", "size")  # what the predictions were made for


def description_path(path):
    """Where the description of the predictions file ``path`` is: ``path`` + ``.json``."""
    path = pathlib.Path(path)
    return path.with_name(path.name + ".json")


def made_for(name, split="test", size="standard"):
    """``{config, version, split, size}`` of a split (the config checked, ``NAME`` or
    ``NAME:VERSION``)."""
    config = catalog.get(name)
    catalog.check_split(split)
    config.sizes(size)  # an unknown size is refused here
    return {"config": config.name, "version": config.version, "split": split, "size": size}


def describe(found):
    """``token/w3 1.0.0 test (small)``: a ``made_for`` (or a description) in words."""
    return f"{found['config']} {found['version']} {found['split']} ({found['size']})"


def array_sha256(array):
    """The SHA-256 of an array's values (its bytes in C order, in its own dtype), hex."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def save_predictions(path, predictions, name, split="test", *, size="standard"):
    """Writes ``predictions`` (one row per example of the split, in index order: what
    ``score`` takes) to the ``.npy`` file ``path`` and their description beside it
    (``description_path``), each whole (atomically); returns ``path``.

    Raises:
        ValueError: an unknown config, split or size; a path not ending in ``.npy``;
            predictions not of real numbers or not one row per example of the split.
    """
    path = pathlib.Path(path)
    if path.suffix != ".npy":
        raise ValueError(f"predictions are saved as a .npy file; received {str(path)!r}")
    found = made_for(name, split, size)
    array = check_real_dtype("predictions", np.asarray(predictions), "iuf")
    n = catalog.get(name).sizes(size)[split]
    if array.ndim not in (1, 2) or len(array) != n:
        raise ValueError(f"predictions must hold one row per example of {describe(found)}: "
                         f"({n},) or ({n}, classes); received shape {array.shape}")  # fmt: skip
    data = io.BytesIO()
    np.save(data, array, allow_pickle=False)
    description = {"format": FORMAT, **found, "shape": list(array.shape),
                   "dtype": array.dtype.str, "sha256": array_sha256(array)}  # fmt: skip
    files.write_bytes(path, data.getvalue())
    files.write_text(description_path(path), json.dumps(description, indent=1) + "\n")
    return path


def read_description(path):
    """The description beside the predictions file ``path`` (``save_predictions``), checked
    field by field; None when there is none.

    Raises:
        ValueError: the file there is a link, not a plain file, larger than
            ``MAX_DESCRIPTION_BYTES``, not JSON, or not a description.
    """
    where = description_path(path)
    try:
        found = files.read_json(where, MAX_DESCRIPTION_BYTES)
    except FileNotFoundError:
        return None
    except (DamagedFile, UnsafePath, OSError) as error:
        raise ValueError(f"{where} cannot be read as the description of {path}: "
                         f"{error}") from None  # fmt: skip
    strings = (*_FIELDS, "dtype", "sha256")
    if not (isinstance(found, dict) and found.get("format") == FORMAT
            and all(isinstance(found.get(k), str) and len(found[k]) <= 200 for k in strings)
            and re.fullmatch(r"[0-9a-f]{64}", found["sha256"])
            and isinstance(found.get("shape"), list) and len(found["shape"]) <= 8
            and all(type(s) is int and s >= 0 for s in found["shape"])):  # fmt: skip
        raise ValueError(f"{where} is not a description of predictions (format {FORMAT}: "
                         f"{', '.join(_FIELDS)}, shape, dtype, sha256); delete it to score "
                         f"{path} unchecked")  # fmt: skip
    return {k: found[k] for k in (*_FIELDS, "shape", "dtype", "sha256")}


def check_made_for(description, expected, path):
    """Refuses (``ValueError``, naming both) predictions whose description says they were
    made for another config, version, split or size than ``expected`` (``made_for``)."""
    if all(description[k] == expected[k] for k in _FIELDS):
        return
    differ = [k for k in _FIELDS if description[k] != expected[k]]
    raise ValueError(
        f"{path} holds predictions made for {describe(description)} "
        f"({description_path(path).name}); asked to score them on {describe(expected)} "
        f"(its {', '.join(differ)} differ{'s' * (len(differ) == 1)})"
    )


def check_array(description, array, path):
    """Refuses (``ValueError``) an array that is not the one its description was written
    for (its shape, dtype or values differ: the ``.npy`` was written again since)."""
    if (list(array.shape) == description["shape"] and array.dtype.str == description["dtype"]
            and array_sha256(array) == description["sha256"]):  # fmt: skip
        return
    raise ValueError(
        f"{description_path(path)} describes another array than {path} holds (shape "
        f"{tuple(description['shape'])}, dtype {description['dtype']} and its SHA-256 there; "
        f"shape {array.shape}, dtype {array.dtype.str} here): save the predictions again with "
        f"benchmarks.save_predictions, or delete it to score {path} unchecked"
    )


__all__ = ["FORMAT", "description_path", "read_description", "save_predictions"]
