"""Predictions saved with what they were made for (``benchmarks.save_predictions``), and
``tools/benchmark.py --predictions`` checking it: another config, version, split or size
is refused naming both; a stale or hostile description is one line; a plain .npy is scored
unchecked, and says so."""

import json
import os

import numpy as np
import pytest

from pvr_keras import benchmarks
from pvr_keras.benchmarks import predictions as saved
from pvr_keras.errors import ConfigError
from tests import scripts
from tests.bounded import within


@pytest.fixture(scope="module")
def recipe():
    return scripts.load("tools/benchmark.py")


def _labels(name, split="test"):
    return benchmarks.source(name, split, size="small")[:]["label"]


def _score(recipe, path, config, *more):
    return recipe.main(["--predictions", str(path), "--config", config, "--size", "small", *more])


def test_saved_predictions_are_checked_and_scored(recipe, tmp_path, capsys):
    path = benchmarks.save_predictions(tmp_path / "p.npy", _labels("token/w1"), "token/w1",
                                       "test", size="small")  # fmt: skip
    described = json.loads((tmp_path / "p.npy.json").read_text())
    assert {k: described[k] for k in ("config", "version", "split", "size", "shape")} == {
        "config": "token/w1", "version": "1.0.0", "split": "test", "size": "small",
        "shape": [2000],
    }  # fmt: skip
    assert np.array_equal(np.load(path, allow_pickle=False), _labels("token/w1"))
    assert _score(recipe, path, "token/w1")["accuracy"] == 1.0
    shown = capsys.readouterr().out
    assert (
        "checked: p.npy.json says the predictions were made for token/w1 1.0.0 test (small)"
        in shown
    )
    assert "not checked" not in shown
    assert _score(recipe, path, "token/w1:1.0.0")["accuracy"] == 1.0  # the same version


@pytest.mark.parametrize(
    "flags, differ",
    [
        (["--config", "token/w2"], "on token/w2 1.0.0 test (small) (its config differs)"),
        (["--split", "validation"], "on token/w1 1.0.0 validation (small) (its split differs)"),
        (["--size", "standard"], "on token/w1 1.0.0 test (standard) (its size differs)"),
    ],
)
def test_predictions_made_for_another_split_are_refused_naming_both(recipe, tmp_path, flags,
                                                                     differ):  # fmt: skip
    # Scored on token/w2 (the same 2,000 rows), these gave an accuracy of about 0.1, silently.
    path = benchmarks.save_predictions(tmp_path / "p.npy", _labels("token/w1"), "token/w1",
                                       "test", size="small")  # fmt: skip
    argv = {"--config": "token/w1", "--size": "small", "--split": "test"}
    argv.update(zip(flags[::2], flags[1::2], strict=True))
    with pytest.raises(ConfigError) as raised:
        recipe.main(["--predictions", str(path), *[x for kv in argv.items() for x in kv]])
    shown = str(raised.value)
    assert f"{path} holds predictions made for token/w1 1.0.0 test (small) (p.npy.json); " \
           f"asked to score them {differ}" == shown  # fmt: skip


def test_another_version_is_refused(recipe, tmp_path):
    path = benchmarks.save_predictions(tmp_path / "p.npy", _labels("token/w1"), "token/w1",
                                       "test", size="small")  # fmt: skip
    described = json.loads((tmp_path / "p.npy.json").read_text())
    (tmp_path / "p.npy.json").write_text(json.dumps({**described, "version": "0.9.0"}))
    with pytest.raises(
        ConfigError,
        match=r"made for token/w1 0\.9\.0 test \(small\).*asked to "
        r"score them on token/w1 1\.0\.0 test \(small\) \(its version differs\)",
    ):
        _score(recipe, path, "token/w1")


def test_a_description_of_another_array_is_refused(recipe, tmp_path):
    # The .npy written again (np.save) after save_predictions: its description is stale.
    path = benchmarks.save_predictions(tmp_path / "p.npy", _labels("token/w1"), "token/w1",
                                       "test", size="small")  # fmt: skip
    np.save(path, (_labels("token/w1") + 1) % 10)
    with pytest.raises(ConfigError, match="p.npy.json describes another array than .*p.npy "
                       "holds .*save the predictions again"):  # fmt: skip
        _score(recipe, path, "token/w1")
    np.save(path, _labels("token/w1").astype(np.int64))  # the same values, another dtype
    with pytest.raises(ConfigError, match="describes another array"):
        _score(recipe, path, "token/w1")


def test_a_plain_npy_is_scored_unchecked_and_says_so(recipe, tmp_path, capsys):
    np.save(tmp_path / "p.npy", _labels("token/w1"))
    assert _score(recipe, tmp_path / "p.npy", "token/w1")["accuracy"] == 1.0
    assert "not checked: no p.npy.json beside the predictions" in capsys.readouterr().out


def _described(path, text):
    np.save(path, _labels("token/w1"))
    (path.parent / (path.name + ".json")).write_text(text)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: _described(p, "{not json"), "cannot be read as the description"),
        (lambda p: _described(p, "[1, 2]"), "is not a description of predictions"),
        (lambda p: _described(p, json.dumps({"format": "other"})), "is not a description"),
        (lambda p: _described(p, " " * (saved.MAX_DESCRIPTION_BYTES + 1)),
         "cannot be read as the description .*larger than"),
        (lambda p: _described(p, "[" * 10_000 + "]" * 10_000), "cannot be read"),
        (lambda p: (_described(p, "{}"), os.remove(f"{p}.json"), os.symlink("/etc/passwd",
                                                                            f"{p}.json")),
         "cannot be read as the description .*symbolic link"),
        (lambda p: (_described(p, "{}"), os.remove(f"{p}.json"), os.mkfifo(f"{p}.json")),
         "cannot be read as the description .*not a plain file"),
    ],
    ids=["not-json", "a-list", "other-format", "too-large", "deep", "link", "fifo"],
)  # fmt: skip
def test_a_bad_description_is_one_line(recipe, tmp_path, make, message):
    path = tmp_path / "p.npy"
    make(path)
    with within(30), pytest.raises(ConfigError, match=message) as raised:  # a FIFO: no wait
        _score(recipe, path, "token/w1")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "field, value",
    [("sha256", "x" * 64), ("shape", [-1]), ("shape", [1.5]), ("shape", [1] * 9),
     ("config", 3), ("size", None), ("dtype", "<i8" * 100)],
)  # fmt: skip
def test_a_description_of_wrong_fields_is_refused(recipe, tmp_path, field, value):
    path = benchmarks.save_predictions(tmp_path / "p.npy", _labels("token/w1"), "token/w1",
                                       "test", size="small")  # fmt: skip
    described = json.loads((tmp_path / "p.npy.json").read_text())
    (tmp_path / "p.npy.json").write_text(json.dumps({**described, field: value}))
    with pytest.raises(ConfigError, match="is not a description of predictions"):
        _score(recipe, path, "token/w1")


@pytest.mark.parametrize(
    "args, message",
    [
        (("p.txt", np.zeros(2000, np.int32), "token/w1"), "saved as a .npy file"),
        (("p.npy", np.zeros(1999, np.int32), "token/w1"), r"one row per example of token/w1 "
         r"1\.0\.0 test \(small\): \(2000,\) or \(2000, classes\); received shape \(1999,\)"),
        (("p.npy", np.zeros(2000, complex), "token/w1"), "real numbers"),
        (("p.npy", np.zeros(2000, np.int32), "token/nope"), "unknown benchmark config"),
        (("p.npy", np.zeros(2000, np.int32), "token/w1", "tests"), "split must be one of"),
    ],
)  # fmt: skip
def test_save_predictions_refuses_what_it_cannot_describe(tmp_path, args, message):
    path, *rest = args
    with pytest.raises(ValueError, match=message):
        benchmarks.save_predictions(tmp_path / path, *rest, size="small")
    assert list(tmp_path.iterdir()) == []
