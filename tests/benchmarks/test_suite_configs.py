"""The quick benchmark suite's entries are the benchmark configs' small splits: a model
trained by tools/benchmark.py and one trained anywhere on benchmarks.source(...) see the
same examples and are scored on the same test split."""

from pvr_keras import benchmarks
from pvr_keras.sweeps import suites


def test_every_quick_entry_is_a_config_at_its_small_size():
    token = suites.runs("quick", "mlp")
    image = suites.runs("quick", "resnet18")
    assert {name for name, _ in token + image} == set(suites.CONFIGS)
    for name, run in token + image:
        config = benchmarks.get(suites.CONFIGS[name])
        sizes = config.sizes("small")
        assert run.task == benchmarks.task_of(config.name), name
        assert int(run.holdout) == config.holdout, name
        assert run.seed == config.seed == config.stream("test")[0], name
        assert (run.num_examples, run.test_examples) == (sizes["train"], sizes["test"]), name
