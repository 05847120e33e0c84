import hashlib
import json

import pytest

from pvr_keras.runconfig import Run
from pvr_keras.sweeps import expand, parse_shard, shard, unique


def test_expand_is_the_product_in_axes_order():
    runs = expand({"seed": [0, 1], "window": [1, 2, 3], "num_examples": [100, 1000]})
    assert len(runs) == 12
    assert [(r.seed, r.window, r.num_examples) for r in runs[:3]] == [
        (0, 1, 100),
        (0, 1, 1000),
        (0, 2, 100),
    ]
    combos = {(r.seed, r.window, r.num_examples) for r in runs}
    assert len(combos) == 12
    assert all(r.model == "mlp" and r.aggregation == "mod_sum" for r in runs)


def test_expand_keeps_the_base_fields():
    runs = expand({"seed": [3]}, dict(model="mlp2x", epochs=7, min_steps=0))
    assert (runs[0].model, runs[0].epochs, runs[0].min_steps, runs[0].seed) == ("mlp2x", 7, 0, 3)


def test_run_id_is_a_hash_of_the_whole_config():
    run = Run.make("token", window=3, num_examples=300, seed=2, pointer=False, holdout=4)
    canonical = json.dumps(run.to_dict(), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
    assert run.run_id == f"mlp-w3-mod_sum-nopointer-h4-n300-s2-{digest}"
    # Pinned: fields added later (holdout_values) keep the ids of recorded results.
    assert run.run_id == "mlp-w3-mod_sum-nopointer-h4-n300-s2-47a2b0cb8f"
    appendix_e = Run.make("token", window=3, holdout=6, holdout_values=[1, 2, 3])
    assert appendix_e.holdout_values == (1, 2, 3)
    assert appendix_e.task.holdout_tuples(1).tolist() == [[1, 2, 3]]
    assert "-h6-of123-" in appendix_e.run_id
    assert Run.make("token", window=3, holdout=6, holdout_values=(0, 1, 2)).run_id == (
        Run.make("token", window=3, holdout=6).run_id
    )
    assert (
        Run.make("token", width=1).run_id
        == Run.make(
            "token",
        ).run_id
    )  # the default width: the old id
    narrow = Run.make("token", model="mixer", width=0.125)
    assert "-x0.125-" in narrow.run_id and narrow.model_arguments()["dim"] == 64
    with pytest.raises(ValueError, match="in model_kwargs, not both"):
        Run.make("token", width=0.5, model_kwargs={"widths": [8, 8, 8, 8]})
    with pytest.raises(ValueError, match="width must be a number > 0"):
        Run.make("token", width=float("nan"))


def test_ids_are_stable_and_change_with_any_field():
    assert Run.make("token", window=3).run_id == Run.make("token", window=3).run_id  # stable
    assert (
        Run.make("token", epochs=5).run_id != Run.make("token", epochs=6).run_id
    )  # any change, a new id
    assert Run.make("token", learning_rate=1).run_id == Run.make("token", learning_rate=1.0).run_id


def test_unique_drops_repeated_configurations():
    runs = expand({"seed": [0, 1]}) + expand({"seed": [1, 2]})
    assert [r.seed for r in unique(runs)] == [0, 1, 2]
    with pytest.raises(ValueError, match="runs must be Run instances; received dict"):
        unique([{"seed": 0}])


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7, 13])
def test_shards_cover_the_grid_exactly_once(count):
    runs = expand({"seed": [0, 1], "window": [1, 2, 3], "num_examples": [100, 1000]})
    parts = [shard(runs, i, count) for i in range(count)]
    ids = [r.run_id for part in parts for r in part]
    assert sorted(ids) == sorted(r.run_id for r in runs)  # union is the grid, no repeats
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1  # balanced
    again = [shard(runs, i, count) for i in range(count)]
    assert [[r.run_id for r in p] for p in again] == [[r.run_id for r in p] for p in parts]


@pytest.mark.parametrize("text", ["1", "a/b", "2/2", "-1/3", "0/0", "1/2/3", ""])
def test_bad_shard(text):
    with pytest.raises(ValueError, match="shard"):
        parse_shard(text)


def test_parse_shard():
    assert parse_shard("0/1") == (0, 1) and parse_shard("3/8") == (3, 8)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"model": "resnet18"}, "model must be one of mlp, mlp2x, transformer, mixer"),
        ({"window": 0}, "window"),
        ({"window": 2, "holdout": 3}, r"holdout must be in 0..window! = 0..2"),
        ({"aggregation": "sum"}, "aggregation must be one of"),
        ({"num_examples": 0}, "num_examples"),
        ({"seed": -1}, "seed"),
        ({"epochs": 0}, "epochs"),
        ({"batch_size": 1.5}, "batch_size"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"min_steps": -1}, "min_steps"),
        ({"model_kwargs": [1]}, "model_kwargs"),
    ],
)
def test_bad_run(fields, match):
    with pytest.raises(ValueError, match=match):
        Run.make("token", **fields)


def test_bad_axes():
    with pytest.raises(ValueError, match="fields of a token run .* received .'windows'.$"):
        expand({"windows": [1]})
    with pytest.raises(ValueError, match="received .'backend'."):
        expand({"backend": ["jax"]})  # how a run executes is no axis
    with pytest.raises(ValueError, match="non-empty list"):
        expand({"window": []})
    with pytest.raises(ValueError, match="non-empty list"):
        expand({"aggregation": "mod_sum"})
    with pytest.raises(ValueError, match="non-empty dict"):
        expand({})
    with pytest.raises(ValueError, match="holdout must be in"):
        expand({"holdout": [0, 1, 2, 3]}, dict(window=2))  # validated before any work
