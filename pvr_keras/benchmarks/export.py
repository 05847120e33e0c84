"""Files of a benchmark config for any tool: Parquet (pyarrow), TFRecord (tf.train.Example)
or text (JSON lines of ``{question, answer, metadata}``), with a dataset card.

    python tools/export_dataset.py token/w3 DIR --format parquet [--size small]

writes ``DIR/train.parquet``, ``validation.parquet``, ``test.parquet`` and ``DIR/README.md``:
a dataset card whose YAML header names the files in the Hugging Face ``configs:`` form, so
``datasets.load_dataset("parquet", data_files={...})`` (or ``load_dataset(DIR)``) and
``pandas.read_parquet`` read them. Each row is ``Source(name, split)[i]`` in index order. The
folder is written whole: built beside ``DIR`` (in ``.DIR.export.tmp*``) and renamed into
place, so a failure leaves nothing half-written. Before any work, ``DIR`` must be absent or an
empty folder (not a link), under a folder that can be written, and no other export may be
writing it (``.DIR.export.lock`` beside it; a second export fails at once). An export killed
outright (kill -9) leaves its partial folder; the next export of ``DIR`` removes it.
"""

import contextlib
import json
import os
import pathlib
import stat

import numpy as np

from pvr_keras import files
from pvr_keras.benchmarks import catalog
from pvr_keras.benchmarks.sources import Source
from pvr_keras.errors import DiskFull, UnsafePath

FORMATS = {"parquet": ".parquet", "tfrecord": ".tfrecord", "text": ".jsonl"}
CHUNK = 16_384


def check_target(out):
    """The export folder: absent or an empty folder (not a link), under a folder that can be
    written (not a file).

    Raises:
        ValueError: any of these is not so (one line).
    """
    out = pathlib.Path(os.path.abspath(out))  # "." and ".." named; no link resolved
    if not out.name:
        raise ValueError(f"cannot export into {out}; name a new folder")
    try:
        info = os.lstat(out)
    except FileNotFoundError:
        info = None
    except OSError as error:  # a path under a file (ENOTDIR), a name too long, ...
        raise ValueError(f"cannot export into {out} ({error.strerror})") from None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise ValueError(f"{out} is a symbolic link; export into a new folder (an "
                             "export is written through no link)")  # fmt: skip
        try:
            empty = stat.S_ISDIR(info.st_mode) and not any(os.scandir(out))
        except OSError as error:
            raise ValueError(f"cannot read {out} ({error.strerror})") from None
        if not empty:
            raise ValueError(f"{out} exists and is not an empty folder; export into a new one")
    parent = out.parent
    while not os.path.lexists(parent):
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise ValueError(f"cannot write under {parent}")
    return out


class ExportLock(files.Lock):
    """Held while an export writes ``out``: the file ``.<name>.export.lock`` beside it."""

    def __init__(self, out):
        self.out = pathlib.Path(out)
        super().__init__(self.out.parent / f".{self.out.name}.export.lock")

    def busy(self, holder):
        return (f"{self.out} is being exported by {holder}: one export per folder at a time "
                "(wait for it, or export into another folder)")  # fmt: skip


def building_prefix(out):
    """The name of the folders an export of ``out`` is built in, beside it, up to their
    random part (``.<name>.export.tmp``)."""
    return f".{pathlib.Path(out).name}.export{files.TEMP_PREFIX}"


@contextlib.contextmanager
def _claim(out, log):
    """The target locked and checked again, what killed exports of it left removed, and a
    new folder to build in beside it; ``ValueError`` when that cannot be written there."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(ExportLock(out))
            check_target(out)  # again, now that no other export writes it
            for name in files.clean_temporaries(out.parent, building_prefix(out)):
                log(f"removed {out.parent / name}: the partial export of a killed run")
            building = stack.enter_context(files.temp_folder(out.parent, building_prefix(out)))
        except (UnsafePath, DiskFull):
            raise
        except OSError as error:  # /proc, /sys, a read-only folder
            raise ValueError(
                f"cannot write under {out.parent} ({error.strerror or error})"
            ) from None
        yield building


def _place(building, out):
    """Renames the built folder to ``out`` (an empty folder there is replaced)."""
    try:
        os.rename(building, out)
    except OSError as error:
        raise ValueError(f"{out} was changed during the export ({error.strerror}); nothing "
                         "was written there") from None  # fmt: skip


def _chunks(source):
    n = len(source)
    for start in range(0, n, CHUNK):
        yield source.rows(np.arange(start, min(start + CHUNK, n), dtype=np.int64))


def _parquet(source, path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for rows in _chunks(source):
            columns = {}
            for key, value in rows.items():
                if value.ndim == 1:
                    columns[key] = pa.array(value)
                else:
                    flat = pa.array(value.reshape(len(value), -1).ravel())
                    columns[key] = pa.FixedSizeListArray.from_arrays(flat, value[0].size)
            table = pa.table(columns)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def _tfrecord(source, path):
    import tensorflow as tf

    def feature(value):
        value = np.asarray(value).ravel()
        if np.issubdtype(value.dtype, np.floating):
            return tf.train.Feature(float_list=tf.train.FloatList(value=value.tolist()))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=value.astype(np.int64)))

    with tf.io.TFRecordWriter(str(path)) as writer:
        for rows in _chunks(source):
            for i in range(len(rows["label"])):
                example = tf.train.Example(features=tf.train.Features(
                    feature={k: feature(v[i]) for k, v in rows.items()}))  # fmt: skip
                writer.write(example.SerializeToString())


def _text(source, path):
    from pvr_keras.benchmarks.text import TextSource

    text = TextSource(source.config.name, source.split, size=source.size)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, len(text), CHUNK):
            for entry in text[start : start + CHUNK]:
                f.write(json.dumps(entry) + "\n")


WRITERS = {"parquet": _parquet, "tfrecord": _tfrecord, "text": _text}


def card(config, size, fmt, sizes, hashes):
    """The dataset card (README.md) of an export."""
    suffix = FORMATS[fmt]
    files_yaml = "\n".join(f"  - split: {s}\n    path: {s}{suffix}" for s in catalog.SPLITS)
    rows = "\n".join(
        f"| {s} | {sizes[s]:,} | {hashes.get(s) or '(image config: no hash)'} |"
        for s in catalog.SPLITS
    )
    loader = {"parquet": "parquet", "text": "json", "tfrecord": None}[fmt]
    usage = (
        f'    import pandas\n    test = pandas.read_{"parquet" if fmt == "parquet" else "json"}'
        f'("test{suffix}"{", lines=True" if fmt == "text" else ""})\n\n'
        f"    import datasets\n    ds = datasets.load_dataset(\"{loader}\", data_files="
        f"{{\"train\": \"train{suffix}\", \"test\": \"test{suffix}\"}})\n"
        if loader
        else "    import tensorflow as tf\n    ds = tf.data.TFRecordDataset(\"test.tfrecord\")  "
        "# tf.train.Example records\n"
    )  # fmt: skip
    return f"""---
configs:
- config_name: {config.tfds_name}
  data_files:
{files_yaml}
license: apache-2.0
tags:
- pointer-value-retrieval
- pvr-keras
---
# PVR {config.name} {config.version} ({size})

{config.description}. Pointer Value Retrieval (Zhang, Raghu, Kleinberg, Bengio 2021); Boolean
configs follow Abbe et al. (2022). Written by pvr-keras (`tools/export_dataset.py`), in index
order: row i of a split is `pvr_keras.benchmarks.source("{config.name}", split,
size="{size}")[i]`. Release notes of {config.version}: {catalog.RELEASE_NOTES[config.version]}

| split | examples | SHA-256 of the canonical bytes (pvr_keras.benchmarks.split_hash) |
| --- | --- | --- |
{rows}

Task: `{json.dumps(config.task)}`, holdout `{config.holdout}`, seed `{config.seed}` (the
validation split: seed {config.seed + 1} of the training stream).

{usage}"""


def export(name, out, *, fmt="parquet", size="standard", data_dir=None, log=print):
    """Writes the three splits of config ``name`` into the new folder ``out``; returns it."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; received {fmt!r}")
    config = catalog.get(name)
    if fmt == "text":
        from pvr_keras.benchmarks.text import check_text

        check_text(config)  # a kind with a text form
    sizes = config.sizes(size)  # checks the size
    out = check_target(out)
    if fmt == "parquet":
        import pyarrow  # noqa: F401  (a clear ImportError before any work)
    from pvr_keras.benchmarks import hashes

    recorded = {s: hashes.recorded(config.name, s, size) for s in catalog.SPLITS}
    with _claim(out, log) as building:
        for split in catalog.SPLITS:
            source = Source(config.name, split, size=size, data_dir=data_dir)
            path = building / f"{split}{FORMATS[fmt]}"
            WRITERS[fmt](source, path)
            log(f"{config.name} {split}: {len(source):,} examples -> {out / path.name}")
        files.write_text(building / "README.md", card(config, size, fmt, sizes, recorded))
        building.chmod(0o755)  # a plain folder (the temporary one is private)
        _place(building, out)
    return out
