"""The committed manifest of split hashes: the NumPy source regenerates every token and
Boolean split to the same bytes, and the tf.data streams and the JAX device twins every split
of ``REGENERATED`` (all but 8 of f3's frozen-bit configs); a changed rule is refused until the
config's version is bumped."""

import json

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import catalog, hashes
from tests import scripts

# The configs of examples (the counterfactual-pair configs, token/w3-cf-p, ..., are pairs of the
# same streams: tests/benchmarks/test_pair_configs.py).
HASHED = [n for n in benchmarks.names("token") + benchmarks.names("boolean")
          if not benchmarks.get(n).interchange]  # fmt: skip
# What the streams and twins regenerate: every token config; of the Boolean ones, all but 8 of
# f3's eleven frozen-bit configs, which repeat one rule with the bit as its parameter (kept:
# the first, a byte's sign bit, the last). Every config's bytes are the NumPy sources' (below).
FROZEN_KEPT = ("boolean/f3-frozen0", "boolean/f3-frozen7", "boolean/f3-frozen10")
REGENERATED = [n for n in HASHED if not n.startswith("boolean/f3-frozen") or n in FROZEN_KEPT]


def _rows(config, split, arrays):
    """The split at its standard size, made by ``arrays(task, n, split=, seed=, holdout=)``
    (the Boolean test split: the cube, no stream)."""
    task = benchmarks.task_of(config.name)
    n = config.sizes("standard")[split]
    if config.family == "boolean" and split == "test":
        x = benchmarks.cube(task.num_bits, np.arange(n))
        return {"bits": x, "label": task.label(x).astype(np.float32)}
    seed, stream = config.stream(split)
    x, y = arrays(task, n, split=stream, seed=seed, holdout=config.holdout)
    inputs = "tokens" if config.family == "token" else "bits"
    return {inputs: np.asarray(x), "label": np.asarray(y)}


def check_every_split(arrays):
    """Every split of every ``REGENERATED`` config, made once at the standard size by
    ``arrays``, hashed at each size (a smaller size is a prefix) against the manifest."""
    committed = hashes.manifest()
    assert set(FROZEN_KEPT) < set(REGENERATED) and len(REGENERATED) == len(HASHED) - 8
    for name in REGENERATED:
        config = benchmarks.get(name)
        for split in benchmarks.SPLITS:
            rows = _rows(config, split, arrays)
            for size, splits in committed[name]["sizes"].items():
                n = splits[split]["examples"]
                prefix = {k: v[:n] for k, v in rows.items()}
                made = hashes.hash_rows(config.family, [prefix])
                assert made == splits[split]["sha256"], (name, size, split)


def test_the_committed_manifest_is_the_numpy_sources():
    tool = scripts.load("tools/generate/benchmark_manifest.py")
    assert tool.main(["--check"]) == 0
    committed = hashes.manifest()
    # Every config whose kind hashes its splits (the chain configs' are checked in
    # test_chain_configs.py).
    assert set(committed) == {n for n in benchmarks.names() if benchmarks.get(n).hooks.hashed}
    assert set(HASHED) < set(committed)
    for name in committed:
        assert committed[name]["version"] == benchmarks.get(name).version


@pytest.mark.slow  # every REGENERATED split at both sizes through tf.data (about a minute)
def test_tfdata_regenerates_every_split_to_the_manifest():
    from pvr_keras.data import boolean_arrays, token_arrays

    def arrays(task, n, **where):
        maker = boolean_arrays if hasattr(task, "num_bits") else token_arrays
        return maker(task, n, **where)

    check_every_split(arrays)


def test_a_changed_rule_needs_a_new_version(monkeypatch, capsys):
    tool = scripts.load("tools/generate/benchmark_manifest.py")
    before = hashes.PATH.read_bytes()
    # The other configs hash as committed (the test above computes them all): only token/w2,
    # the config changed here, is computed from its source.
    committed, split_hash = hashes.manifest(), hashes.split_hash
    monkeypatch.setattr(hashes, "split_hash", lambda name, split, size="standard": (
        split_hash(name, split, size) if name == "token/w2"
        else committed[name]["sizes"][size][split]["sha256"]))  # fmt: skip
    changed = catalog.Config("token/w2", "token", dict(window=2), seed=5)
    monkeypatch.setitem(catalog.CONFIGS, "token/w2", changed)
    assert tool.main(["--check"]) == 1
    assert "changed: token/w2 (same version: bump it)" in capsys.readouterr().err
    assert tool.main([]) == 1  # refuses to write
    assert hashes.PATH.read_bytes() == before
    with pytest.raises(ValueError, match="manifest is of version 1.0.0, the catalog's is 1.1.0"):
        monkeypatch.setitem(
            catalog.CONFIGS,
            "token/w2",
            catalog.Config("token/w2", "token", dict(window=2), version="1.1.0"),
        )
        hashes.recorded("token/w2", "test")


def test_canonical_bytes_do_not_depend_on_the_chunking():
    src = benchmarks.source("token/w3", "test", size="small")
    whole = hashes.hash_rows("token", [src[:]])
    pieces = hashes.hash_rows("token", [src[:700], src[700:701], src[701:]])
    assert whole == pieces == hashes.split_hash("token/w3", "test", "small")
    assert (
        json.loads(hashes.PATH.read_text())["token/w3"]["sizes"]["small"]["test"]["sha256"] == whole
    )


def test_rows_read_back_are_checked_against_the_manifest():
    from pvr_keras.errors import DamagedFile

    rows = benchmarks.source("token/w1", "test", size="small")[:]
    rows = {"tokens": rows["tokens"], "label": rows["label"].astype(np.int64)}  # as TFDS
    sha = hashes.check_rows("token/w1", "test", "small", [rows], "here")
    assert sha == hashes.recorded("token/w1", "test", "small")
    halves = [{k: v[:1000] for k, v in rows.items()}, {k: v[1000:] for k, v in rows.items()}]
    assert hashes.check_rows("token/w1", "test", "small", halves, "here") == sha
    rewritten = dict(rows, label=rows["label"].copy())
    rewritten["label"][7] = (rewritten["label"][7] + 1) % 10  # one label rewritten
    wrapped = dict(rows, label=rows["label"] + 2**32)  # the same int32 bytes, not the labels
    for bad in ([rewritten], [halves[0]], [rows, halves[1]], [wrapped]):
        with pytest.raises(DamagedFile, match="^here: the test split does not match the "
                           "manifest .*the manifest's are 2,000 of"):  # fmt: skip
            hashes.check_rows("token/w1", "test", "small", bad, "here")
    with pytest.raises(ValueError, match="block configs have no manifest entry"):
        hashes.check_rows("block/mnist-2x2", "test", "small", [], "here")
