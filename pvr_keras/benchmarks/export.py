"""Files of benchmark configs for any tool: Parquet (pyarrow), TFRecord (tf.train.Example)
or text (JSON lines of ``{question, answer, metadata}``), with a dataset card; or an
lm-evaluation-harness task folder (``lm_eval_export``).

    python tools/export_dataset.py token/w3 DIR --format parquet [--size small]
    python tools/export_dataset.py token/w3 boolean/f3 DIR --format parquet
    python tools/export_dataset.py token/w3 boolean/f3 DIR --format lm-eval

One config writes ``DIR/train.parquet``, ``validation.parquet``, ``test.parquet``; several
write each config's files in its folder, ``DIR/token_w3/train.parquet``, .... ``DIR/README.md``
is a dataset card (``cards``) whose YAML header names the files of each config in the Hugging
Face ``configs:`` form, with their features, so ``datasets.load_dataset(DIR, "token_w3")``
and ``pandas.read_parquet`` read them. Each row is ``Source(name, split)[i]`` in index order.
The folder is written whole: built beside ``DIR`` (in ``.DIR.export.tmp*``) and renamed into
place, so a failure leaves nothing half-written. Before any work, every config is checked
(known, named once, with a text form for ``text`` and ``lm-eval``) and ``DIR`` must be absent
or an empty folder (not a link), under a folder that can be written, and no other export may
be writing it (``.DIR.export.lock`` beside it; a second export fails at once). An export
killed outright (kill -9) leaves its partial folder; the next export of ``DIR`` removes it.
"""

import contextlib
import errno
import json
import os
import pathlib
import stat

import numpy as np

from pvr_keras import files
from pvr_keras.benchmarks import cards, catalog, lm_eval_export, text
from pvr_keras.benchmarks.sources import Source
from pvr_keras.errors import DiskFull, UnsafePath

# The data files of each format; lm-eval's are the text form in Parquet.
FORMATS = {"parquet": ".parquet", "tfrecord": ".tfrecord", "text": ".jsonl", "lm-eval": ".parquet"}
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
            if error.errno == errno.ENOSPC:
                raise DiskFull(f"no space left on the device under {out.parent} "
                               f"({error.strerror}); nothing was written") from None  # fmt: skip
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


def _table(rows):
    """A pyarrow table of a batch of a source's rows: an array of several axes a fixed-size
    list of its values (C order)."""
    import pyarrow as pa

    columns = {}
    for key, value in rows.items():
        if value.ndim == 1:
            columns[key] = pa.array(value)
        else:
            flat = pa.array(value.reshape(len(value), -1).ravel())
            columns[key] = pa.FixedSizeListArray.from_arrays(flat, value[0].size)
    return pa.table(columns)


def _write_parquet(tables, path):
    """Writes an iterable of tables of one schema (the first's) as one Parquet file."""
    import pyarrow.parquet as pq

    writer = None
    try:
        for table in tables:
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table.cast(writer.schema))
    finally:
        if writer is not None:
            writer.close()


def _parquet(source, path):
    _write_parquet((_table(rows) for rows in _chunks(source)), path)


def _text_parquet(source, path):
    """The text form (``question``, ``answer``, ``metadata`` columns) as Parquet."""
    import pyarrow as pa

    entries = text.TextSource(source.config.name, source.split, size=source.size)
    chunks = (entries[start : start + CHUNK] for start in range(0, len(entries), CHUNK))
    _write_parquet((pa.Table.from_pylist(chunk) for chunk in chunks), path)


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
    entries = text.TextSource(source.config.name, source.split, size=source.size)
    with files.create(path) as f:  # in the export's own temporary folder
        for start in range(0, len(entries), CHUNK):
            f.write("".join(json.dumps(e) + "\n" for e in entries[start : start + CHUNK]).encode())


WRITERS = {"parquet": _parquet, "tfrecord": _tfrecord, "text": _text, "lm-eval": _text_parquet}


def _configs(names, fmt):
    """The configs of ``names`` (one name or several), each checked: known, named once, with
    a text form (and an answer set) for ``text`` and ``lm-eval``."""
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise ValueError("name at least one benchmark config")
    configs, seen = [], {}
    for name in names:
        config = catalog.get(name)
        if config.tfds_name in seen:
            raise ValueError(f"{name} is named twice (as {seen[config.tfds_name]} before); "
                             "name each config once")  # fmt: skip
        seen[config.tfds_name] = name
        if fmt == "text":
            text.check_text(config)
        elif fmt == "lm-eval":
            text.answers(config.name)  # a text form and the choices of its _mc task
        configs.append(config)
    return configs


def _folder(configs, config, fmt):
    """A config's folder in the export: the export itself (one config), its ``tfds_name``
    (several), ``data/<tfds_name>`` (lm-eval)."""
    if fmt == "lm-eval":
        return str(lm_eval_export.data_folder(config))
    return "" if len(configs) == 1 else config.tfds_name


def export(names, out, *, fmt="parquet", size="standard", data_dir=None, log=print):
    """Writes the splits of the configs ``names`` (a name, or several) into the new folder
    ``out``, with a dataset card (or, ``fmt="lm-eval"``, an lm-evaluation-harness task
    folder); returns it.

    Raises:
        ValueError: a format, config, size or target that cannot be exported (one line,
            before any work).
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; received {fmt!r}")
    configs = _configs(names, fmt)
    sizes = {config.name: config.sizes(size) for config in configs}  # checks the size
    out = check_target(out)
    if fmt in ("parquet", "lm-eval"):
        import pyarrow  # noqa: F401  (a clear ImportError before any work)
    from pvr_keras.benchmarks import hashes

    recorded = {c.name: {s: hashes.recorded(c.name, s, size) for s in catalog.SPLITS}
                for c in configs}  # fmt: skip
    with _claim(out, log) as building:
        for config in configs:
            folder = building / _folder(configs, config, fmt)
            folder.mkdir(parents=True, exist_ok=True)
            for split in lm_eval_export.SPLITS if fmt == "lm-eval" else catalog.SPLITS:
                source = Source(config.name, split, size=size, data_dir=data_dir)
                path = folder / f"{split}{FORMATS[fmt]}"
                with files.room(path, what=f"the export of {out}"):  # one line, no part left
                    WRITERS[fmt](source, path)
                log(f"{config.name} {split}: {len(source):,} examples -> "
                    f"{out / path.relative_to(building)}")  # fmt: skip
        if fmt == "lm-eval":
            written = lm_eval_export.task_files(configs, size=size, hashes=recorded)
        else:
            written = {"README.md": cards.card(
                [_entry(configs, c, fmt, size, sizes, recorded, data_dir) for c in configs],
                size=size, fmt=fmt, suffix=FORMATS[fmt])}  # fmt: skip
        for relative, content in written.items():
            files.write_text(building / relative, content)
        building.chmod(0o755)  # a plain folder (the temporary one is private)
        _place(building, out)
    return out


def _entry(configs, config, fmt, size, sizes, recorded, data_dir):
    """What the dataset card says of one config (``cards.card``); for Parquet, the schema of
    its files, from the rows as the writer turns them into a table."""
    folder = _folder(configs, config, fmt)
    entry = {"config": config, "folder": f"{folder}/" if folder else "", "schema": None,
             "sizes": sizes[config.name], "hashes": recorded[config.name]}  # fmt: skip
    if fmt == "parquet":
        table = _table(Source(config.name, "test", size=size, data_dir=data_dir)[:1])
        entry.update(schema=table.schema, row_bytes=table.nbytes)
    return entry
