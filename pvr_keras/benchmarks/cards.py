"""The dataset card (``README.md``) of an exported folder: a YAML header in the Hugging Face
form (``configs:`` with each config's files, the first the default; ``dataset_info:`` with
its features and split sizes, for Parquet; the licence), then per config its version,
description and split hashes, how to read the files, and the paper's citation.

Hugging Face ``datasets`` reads the folder with ``load_dataset(DIR, "token_w3")`` (or
``load_dataset(DIR)`` for the default config), offline: the header names every file.
"""

import json

from pvr_keras.benchmarks import catalog

LICENSE = "apache-2.0"


def _dtype(kind):
    """The Hugging Face name of a pyarrow primitive type (``int32``, ``float32``, ``bool``,
    ``string``), as ``datasets`` writes it in a card."""
    import pyarrow as pa

    if pa.types.is_floating(kind):
        return f"float{kind.bit_width}"  # pyarrow says "float" and "double"
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind) or pa.types.is_string(kind):
        return str(kind)
    raise ValueError(f"no dataset card type for the Arrow type {kind}")


def _feature(name, kind, indent):
    """YAML lines of one feature (``- name: ...``) at ``indent`` spaces."""
    import pyarrow as pa

    pad = " " * indent
    lines = [f"{pad}- name: {name}"]
    if pa.types.is_fixed_size_list(kind):
        lines += [f"{pad}  list: {_dtype(kind.value_type)}", f"{pad}  length: {kind.list_size}"]
    elif pa.types.is_list(kind):
        lines.append(f"{pad}  list: {_dtype(kind.value_type)}")
    elif pa.types.is_struct(kind):
        lines.append(f"{pad}  struct:")
        for field in kind:
            lines += _feature(field.name, field.type, indent + 2)
    else:
        lines.append(f"{pad}  dtype: {_dtype(kind)}")
    return lines


def features(schema):
    """The ``features:`` YAML lines of a pyarrow schema, as ``datasets`` writes them
    (``datasets.Features.from_arrow_schema(schema)`` read back from the card is the same)."""
    lines = []
    for field in schema:
        lines += _feature(field.name, field.type, 2)
    return lines


def _header(entries, suffix):
    lines = ["---", "configs:"]
    for i, entry in enumerate(entries):
        lines.append(f"- config_name: {entry['config'].tfds_name}")
        if i == 0:
            lines.append("  default: true")
        lines.append("  data_files:")
        for split in catalog.SPLITS:
            lines += [f"  - split: {split}", f"    path: {entry['folder']}{split}{suffix}"]
    if all(entry["schema"] is not None for entry in entries):
        lines.append("dataset_info:")
        for entry in entries:
            lines += [f"- config_name: {entry['config'].tfds_name}", "  features:"]
            lines += features(entry["schema"])
            lines.append("  splits:")
            for split in catalog.SPLITS:
                n = entry["sizes"][split]
                lines += [f"  - name: {split}", f"    num_bytes: {n * entry['row_bytes']}",
                          f"    num_examples: {n}"]  # fmt: skip
    lines += [f"license: {LICENSE}", "pretty_name: Pointer Value Retrieval (PVR)", "tags:",
              "- pointer-value-retrieval", "- pvr-keras", "---"]  # fmt: skip
    return "\n".join(lines)


def _section(entry, size, suffix):
    config, hashes, sizes = entry["config"], entry["hashes"], entry["sizes"]
    rows = "\n".join(
        f"| {s} | `{entry['folder']}{s}{suffix}` | {sizes[s]:,} | "
        f"{hashes.get(s) or '(image config: no hash)'} |"
        for s in catalog.SPLITS
    )
    return f"""## {config.tfds_name}: PVR {config.name} {config.version}

{config.description}. Row i of a split is `pvr_keras.benchmarks.source("{config.name}",
split, size="{size}")[i]`. Task: `{json.dumps(config.task)}`, holdout `{config.holdout}`, seed
`{config.seed}` (the validation split: seed {config.seed + 1} of the training stream). Release
notes of {config.version}: {catalog.RELEASE_NOTES[config.version]}

| split | file | examples | SHA-256 of the canonical bytes (pvr_keras.benchmarks.split_hash) |
| --- | --- | --- | --- |
{rows}
"""


def _usage(entries, fmt, suffix):
    first = entries[0]
    test = f"{first['folder']}test{suffix}"
    if fmt == "tfrecord":
        return (f'    import tensorflow as tf\n    ds = tf.data.TFRecordDataset("{test}")'
                "  # tf.train.Example records\n")  # fmt: skip
    read = (f'pandas.read_parquet("{test}")' if fmt == "parquet"
            else f'pandas.read_json("{test}", lines=True)')  # fmt: skip
    return (f"    import datasets\n    ds = datasets.load_dataset(DIR, "
            f'"{first["config"].tfds_name}")  # DIR: this folder; '
            "each config by its config_name\n\n"
            f"    import pandas\n    test = {read}\n")  # fmt: skip


def card(entries, *, size, fmt, suffix):
    """The dataset card of an export.

    Args:
        entries: one dict per exported config, in order (the first is the default config):
            ``config`` (``catalog.Config``), ``folder`` (its files' folder in the export,
            ``""`` or ``"token_w3/"``), ``sizes`` and ``hashes`` (``{split: ...}``; a hash of
            None for image configs), ``schema`` (the pyarrow schema of its Parquet files, or
            None: no ``dataset_info``) and ``row_bytes`` (the Arrow bytes of one row: every
            column has a fixed width).
        size: the size preset exported.
        fmt: ``parquet``, ``text`` or ``tfrecord``.
        suffix: the data files' (``.parquet``).
    """
    names = ", ".join(e["config"].name for e in entries)
    sections = "\n".join(_section(e, size, suffix) for e in entries)
    return f"""{_header(entries, suffix)}
# Pointer Value Retrieval (PVR): {names} ({size})

Pointer Value Retrieval (Zhang, Raghu, Kleinberg, Bengio 2021, {catalog.HOMEPAGE}); Boolean
configs follow Abbe et al. (2022). Written by pvr-keras (`tools/export_dataset.py`), in index
order, one config per `config_name` below; the split hashes let anyone check that their copy
holds the canonical examples.

{sections}
## Reading the files

{_usage(entries, fmt, suffix)}
## Citation

```bibtex
{catalog.CITATION}
```
"""
