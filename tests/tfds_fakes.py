"""A TFDS data dir that looks prepared on disk, for ``tfds.testing.mock_data`` to serve (or
for the loader's download path to find after a mocked download)."""

import pathlib

import tensorflow_datasets as tfds


def fake_prepared(root, names=("mnist", "cifar10")):
    """Writes ``NAME/VERSION/dataset_info.json`` for each dataset under ``root``; returns it."""
    root = pathlib.Path(root)
    for name in names:
        version = root / name / str(tfds.builder_cls(name).VERSION)
        version.mkdir(parents=True, exist_ok=True)
        (version / "dataset_info.json").write_text("{}")
    return root
