"""The built-in kinds as folders (``pvr_keras/kinds/<name>/``): the public names are the
folders' objects, the old module paths are aliases of the folders' modules, and the rules
import in any order."""

import importlib
import subprocess
import sys

import pytest

# Old module path -> the module of a kind's folder it now names.
ALIASES = {
    "pvr_keras.tasks.token": "pvr_keras.kinds.token.task",
    "pvr_keras.tasks.block": "pvr_keras.kinds.block.task",
}


@pytest.mark.parametrize("old, new", sorted(ALIASES.items()))
def test_an_old_module_path_is_an_alias(old, new):
    alias, module = importlib.import_module(old), importlib.import_module(new)
    assert alias.__all__
    for name in alias.__all__:
        assert getattr(alias, name) is getattr(module, name), (old, name)


def test_the_public_names_are_the_folders():
    from pvr_keras import data, kinds, tasks
    from pvr_keras.data.numpy_examples import token_examples
    from pvr_keras.kinds.block import tf_data as block_data
    from pvr_keras.kinds.block.task import BlockTask
    from pvr_keras.kinds.sequence import tf_data as sequence_data
    from pvr_keras.kinds.token import numpy_data
    from pvr_keras.kinds.token import tf_data as token_data
    from pvr_keras.kinds.token.task import WINDOW_MODES, TokenTask

    assert (tasks.TokenTask, tasks.BlockTask, tasks.WINDOW_MODES) == (
        TokenTask, BlockTask, WINDOW_MODES)  # fmt: skip
    assert {"TokenTask", "BlockTask", "ChainTask"} <= set(tasks.__all__) & set(dir(tasks))
    assert data.token_arrays is token_data.token_arrays
    assert data.token_dataset is token_data.token_dataset
    assert data.block_dataset is block_data.block_dataset
    assert data.sequence_arrays is sequence_data.sequence_arrays
    assert token_examples is numpy_data.token_examples
    assert kinds.kind("token").task is kinds.kind("sequence").task is TokenTask
    assert kinds.kind("block").task is BlockTask
    for name in ("token", "block", "sequence"):
        spec = kinds.kind(name)
        for ref in (spec.dataset, spec.device, spec.arrays, spec.benchmark.rows):
            assert ref.startswith(f"pvr_keras.kinds.{name}."), ref


@pytest.mark.parametrize(
    "first",
    ["pvr_keras.tasks", "pvr_keras.kinds", "pvr_keras.tasks.aggregations",
     "pvr_keras.tasks.token", "pvr_keras.tasks.block", "pvr_keras.kinds.token.task",
     "pvr_keras.kinds.block.task", "pvr_keras.kinds.chain.task", "pvr_keras.kinds.spec"],
)  # fmt: skip
def test_the_rules_import_in_any_order(first):
    """Whichever module a process imports first, every rule and every kind is there after
    (a folder's task imports ``tasks.aggregations``; ``pvr_keras.tasks`` names the folders'
    rules without importing ``pvr_keras.kinds``)."""
    code = (
        f"import sys, {first}\n"
        "alone = 'pvr_keras.kinds' in sys.modules\n"
        "from pvr_keras.tasks import BlockTask, ChainTask, TokenTask\n"
        "from pvr_keras import kinds\n"
        "print(alone, ' '.join(kinds.kind_names()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    alone, names = done.stdout.strip().split(" ", 1)
    assert names == "token block sequence boolean gotu chain"
    if first in ("pvr_keras.tasks", "pvr_keras.tasks.aggregations"):
        assert alone == "False"  # the rules of the tasks layer alone: no kind is loaded


def test_the_kinds_docstring_lists_the_built_in_kinds():
    """``pvr_keras.kinds``'s docstring has one bullet per built-in kind, in the order they
    register (the paper's), and each built-in kind is a folder of ``pvr_keras/kinds/``."""
    import pathlib
    import re

    from pvr_keras import kinds

    folders = {p.parent.name for p in pathlib.Path(kinds.__file__).parent.glob("*/kind.py")}
    built_in = [name for name in kinds.kind_names() if name in folders]
    assert set(built_in) == folders
    assert re.findall(r"^- ``(\w+)``:", kinds.__doc__, flags=re.M) == built_in
