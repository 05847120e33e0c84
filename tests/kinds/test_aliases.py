"""The old module paths of the kinds that moved into their folders (``pvr_keras/kinds/<name>/``)
keep importing: each is an alias re-exporting the moved module's objects themselves."""

import importlib

import pytest

# old path -> the module of the kind's folder it re-exports
ALIASES = {
    "pvr_keras.tasks.boolean": "pvr_keras.kinds.boolean.task",
    "pvr_keras.tasks.domains": "pvr_keras.kinds.boolean.domains",
    "pvr_keras.data.seen": "pvr_keras.kinds.boolean.keys",
}
# split in two: the task, and the targets written as text
FUNCTIONS = {
    "pvr_keras.kinds.gotu.task": ("DRAWS", "MAX_ENUMERATED_BITS", "FunctionTask"),
    "pvr_keras.kinds.gotu.targets": ("MAX_TARGET_VALUE", "canonical_target", "expansion_of",
                                     "parse_target"),
}  # fmt: skip


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_an_old_path_re_exports_the_moved_objects(old):
    alias, moved = importlib.import_module(old), importlib.import_module(ALIASES[old])
    assert alias.__all__
    for name in alias.__all__:
        assert getattr(alias, name) is getattr(moved, name), (old, name)


def test_the_numpy_examples_keep_the_boolean_ones():
    from pvr_keras.data import numpy_examples
    from pvr_keras.kinds.boolean import numpy_data

    assert numpy_examples.boolean_examples is numpy_data.boolean_examples
    assert numpy_examples.boolean_points is numpy_data.boolean_points


def test_the_functions_path_keeps_the_gotu_task_and_its_targets():
    from pvr_keras.tasks import functions

    for module, names in FUNCTIONS.items():
        moved = importlib.import_module(module)
        for name in names:
            assert getattr(functions, name) is getattr(moved, name), name
    assert set(functions.__all__) <= {n for names in FUNCTIONS.values() for n in names}
