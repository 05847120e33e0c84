"""Which engine trains a run when none is named, and the XLA setting of a compiled model."""

import keras
import pytest

from pvr_keras import engines, models
from pvr_keras.runconfig import Run


def test_a_named_backend_always_wins():
    assert engines.choose("jax", environ={"KERAS_BACKEND": "tensorflow"}, gpu=False)[0] == "jax"
    assert engines.choose(None, environ={"KERAS_BACKEND": "jax"}, gpu=False) == (
        "jax",
        "named by KERAS_BACKEND",
    )
    assert engines.choose(None, environ={"KERAS_BACKEND": "tensorflow"}, gpu=True)[0] == (
        "tensorflow"
    )


def test_not_measured_a_cpu_trains_on_tensorflow():
    """The fixed rule: without a run to measure, with calibrate=False, or PVR_ENGINE=fixed
    (the test suite's setting), nothing is measured."""
    run = Run.make("token", model="mixer", width=0.125)
    for kwargs in ({}, {"run": run, "calibrate": False},
                   {"run": run, "environ": {"PVR_ENGINE": "fixed"}}):  # fmt: skip
        backend, why = engines.choose(None, **{"environ": {}, **kwargs}, gpu=False,
                                      measure_fn=_never)  # fmt: skip
        assert backend == "tensorflow" and "not measured" in why and "CPU" in why, kwargs
    assert engines.choose(None, environ={"PVR_ENGINE": "jax"}, gpu=False, run=run,
                          measure_fn=_never) == ("jax", "named by PVR_ENGINE")  # fmt: skip
    with pytest.raises(ValueError, match="PVR_ENGINE"):
        engines.choose(None, environ={"PVR_ENGINE": "torch"}, gpu=False)


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    """The machine counts as quiet, so measured figures are cached (calibration.busy)."""
    from pvr_keras import calibration

    monkeypatch.setattr(calibration, "busy", lambda: None)


def _never(*args, **kwargs):
    raise AssertionError("measured")


def _measured(ms, errors=None):
    def measure(model, arguments, batch_size, metric="accuracy"):
        measure.calls.append((model, arguments, batch_size, metric))
        return dict(ms), dict(errors or {})

    measure.calls = []
    return measure


@pytest.mark.parametrize("fastest", ["jax", "tensorflow"])
def test_none_named_a_cpu_trains_on_the_backend_measured_fastest_for_the_model(tmp_path, fastest):
    run = Run.make("token", model="mixer", width=0.125)
    ms = {"tensorflow": 226.0, "jax": 786.0} if fastest == "tensorflow" else {
        "tensorflow": 112.0, "jax": 48.0}  # fmt: skip
    measure, lines = _measured(ms), []
    backend, why = engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
                                  measure_fn=measure, say=lines.append)  # fmt: skip
    assert backend == fastest
    assert measure.calls == [("mixer", run.model_arguments(), run.batch_size, "accuracy")]
    for name, value in ms.items():
        assert f"{name} {value:.0f}" in why
    assert "mixer width 0.125 batch 1024" in why and "just measured" in why
    choice = engines.choice()
    assert choice["backend"] == fastest and choice["why"] == why
    assert choice["ms_per_step"] == ms and choice["cpu"] and choice["key"]
    # The second run of the model here reads the cache.
    again = engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
                           measure_fn=_never, say=lines.append)  # fmt: skip
    assert again[0] == fastest and "cached" in again[1]


def _step(run):
    """What a training step's cost depends on, written out: the model, the arguments it is
    built with (the task's shape, the width, model_kwargs), the batch and the loss."""
    return (run.model, sorted(run.model_arguments().items()), run.batch_size, run.spec.metric)


SHAPES = [
    Run.make("token"),
    Run.make("token", seed=3, num_examples=500, window=3),  # other data, the same step
    Run.make("token", num_values=20),  # a larger vocabulary and output
    Run.make("token", model="mixer", width=0.125),
    Run.make("token", model="mixer", width=0.25),
    Run.make("token", batch_size=512),
    Run.make("chain", length=2000),  # the token MLP's model, width and batch, at L = 2,000
    Run.make("chain", length=40),
    Run.make("boolean"),
    Run.make("gotu"),
    Run.make("gotu", num_bits=11),  # the boolean run's model and input width
    Run.make("gotu", num_bits=40),
]


def test_the_engine_cache_keys_a_model_by_what_its_step_costs():
    """Two runs share an engine-cache entry exactly when their steps are the same work."""
    from pvr_keras import calibration

    for a in SHAPES:
        for b in SHAPES:
            same = calibration.run_family(a) == calibration.run_family(b)
            assert same == (_step(a) == _step(b)), (a.run_id, b.run_id)


def test_a_run_of_another_shape_is_measured_again_and_one_shape_once(tmp_path):
    token, chain = Run.make("token"), Run.make("chain", length=2000)
    assert (token.model, token.width, token.batch_size) == (chain.model, chain.width,
                                                           chain.batch_size)  # fmt: skip
    measure = _measured({"tensorflow": 2.0, "jax": 1.0})
    for run in (token, chain, token.replace(seed=5), chain.replace(num_examples=100)):
        engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
                       measure_fn=measure, say=print)  # fmt: skip
    assert [call[1] for call in measure.calls] == [token.model_arguments(),
                                                   chain.model_arguments()]  # fmt: skip


def test_a_regression_model_is_measured_as_one(tmp_path):
    run = Run.make("boolean")
    measure = _measured({"tensorflow": 2.0, "jax": 1.0})
    engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
                   measure_fn=measure, say=print)  # fmt: skip
    assert measure.calls[0][3] == run.spec.metric == "mse"


def test_a_backend_that_fails_to_measure_is_named_and_the_other_trains(tmp_path):
    run = Run.make("token")
    measure = _measured({"tensorflow": 90.0}, {"jax": "the jax worker exited (code 1)"})
    backend, why = engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e",
                                  measure_fn=measure, say=print)  # fmt: skip
    assert backend == "tensorflow" and "jax failed: the jax worker exited (code 1)" in why
    measure = _measured({}, {"jax": "x", "tensorflow": "y"})
    backend, why = engines.choose(None, environ={}, gpu=False, run=run, cache=tmp_path / "e",
                                  measure_fn=measure, say=print)  # fmt: skip
    assert backend == "tensorflow" and "no backend could be measured" in why


def test_none_named_a_gpu_trains_on_jax_where_jax_has_cuda(monkeypatch):
    found = {"jax_cuda12_plugin": object()}
    monkeypatch.setattr(engines.importlib.util, "find_spec", found.get)
    assert engines.choose(None, environ={}, gpu=True)[0] == "jax"
    monkeypatch.setattr(engines.importlib.util, "find_spec", {}.get)
    backend, why = engines.choose(None, environ={}, gpu=True)
    assert backend == "tensorflow" and "CUDA plugin" in why


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="a TensorFlow setting")
def test_on_a_tensorflow_cpu_dense_models_get_xla_and_convolutions_do_not():
    """As measured by tools/probes/bench_engines.py: XLA for the token models, graph mode with
    oneDNN for the CNNs; a layer that XLA cannot compile leaves Keras's choice."""
    assert engines.jit_compile(models.get("mlp", widths=(8,), embed_dim=2)) is True
    cnn = models.get("resnet18", input_shape=(32, 32, 1), width=4)
    assert engines.jit_compile(cnn) is False

    class NoJit(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.supports_jit = False

        def call(self, x):
            return x

    inputs = keras.Input((3,))
    assert engines.jit_compile(keras.Model(inputs, NoJit()(inputs))) is None


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="a JAX setting")
def test_on_jax_keras_keeps_its_own_choice():
    assert engines.jit_compile(models.get("mlp", widths=(8,), embed_dim=2)) is None


def _population_measure(alone, together):
    """A fake measurement: ``alone`` ({backend: ms}) for one model, ``together`` (ms per
    run's step on jax) for a population."""

    def measure(model, arguments, batch_size, metric="accuracy", backends=None, population=1):
        measure.calls.append(population)
        if population > 1:
            assert backends == ["jax"]
            return {"jax": together}, {}
        return dict(alone), {}

    measure.calls = []
    return measure


@pytest.mark.parametrize("first", [None, 2])
@pytest.mark.parametrize("together, expected", [(150.0, ("jax", 8)), (359.0, ("tensorflow", 1))])
def test_a_population_trains_where_it_measures_faster_than_the_fastest_engine_alone(
    tmp_path, together, expected, first
):
    # first=2: two seeds left of eight, so a population of 2 is what trains first and what is
    # measured (it costs more per run than 8); where it wins, later (larger) populations
    # train at the asked size.
    run = Run.make("token", model="mixer", width=0.125)
    measure = _population_measure({"tensorflow": 241.0, "jax": 530.0}, together)
    backend, why, size = engines.choose_population(
        8, None, first=first, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
        measure_fn=measure, say=print,
    )  # fmt: skip
    assert (backend, size) == expected
    assert measure.calls == [1, first or 8]
    left = " (the first still to train holds 2 runs)" if first else ""
    assert f"a population of {first or 8}{left} measured {together:.0f} ms per run's step" in why
    assert "tensorflow alone 241 ms" in why
    assert ("one run after another on tensorflow" in why) == (size == 1)
    assert engines.choice()["population"] == size
    # Cached: the next grid of the model here measures nothing.
    again = engines.choose_population(8, None, first=first, environ={}, gpu=False, run=run,
                                      cache=tmp_path / "e.json", measure_fn=_never)  # fmt: skip
    assert again[::2] == expected


@pytest.mark.parametrize("together, beside, expected", [(150.0, 100.0, ("tensorflow", 1)),
                                                        (359.0, 1000.0, ("jax", 8))])  # fmt: skip
def test_a_population_is_held_against_jax_alone_timed_beside_it(tmp_path, together, beside,
                                                                 expected):  # fmt: skip
    # The engines alone measured under one load, the population under another: the
    # population's ratio to JAX alone, timed in turns with it, decides at the engines' load
    # (150 ms raw looks faster than TensorFlow's 241, but it is 1.5x JAX alone: 795 ms).
    run = Run.make("token", model="mixer", width=0.125)

    def measure(model, arguments, batch_size, metric="accuracy", backends=None, population=1):
        if population > 1:
            return {"jax": together, "jax alone": beside}, {}
        return {"tensorflow": 241.0, "jax": 530.0}, {}

    backend, why, size = engines.choose_population(
        8, None, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
        measure_fn=measure, say=print,
    )  # fmt: skip
    assert (backend, size) == expected
    ratio = together / beside
    assert f"measured {ratio:.2f}x jax alone per run's step" in why
    assert f"{ratio * 530:.3g} ms against tensorflow alone 241 ms" in why


@pytest.mark.parametrize("alone", [{"tensorflow": 241.0, "jax": 530.0},
                                   {"tensorflow": 9.0, "jax": 4.0}])  # fmt: skip
def test_a_first_population_of_one_run_measures_no_population(tmp_path, alone):
    run = Run.make("token", model="mixer", width=0.125)
    measure = _population_measure(alone, 1.0)  # a population would win: never measured
    backend, why, size = engines.choose_population(
        8, None, first=1, environ={}, gpu=False, run=run, cache=tmp_path / "e.json",
        measure_fn=measure, say=print,
    )  # fmt: skip
    assert measure.calls == [1]
    assert (backend, size) == (min(alone, key=alone.get), 1)
    assert "--population 8 not used" in why and "populations of one" in why
    assert engines.choice()["population"] == 1


def test_a_population_named_or_unmeasured_trains_on_jax_and_another_backend_is_refused():
    run = Run.make("token")
    for kwargs in ({"backend": "jax"}, {"environ": {"KERAS_BACKEND": "jax"}},
                   {"environ": {"PVR_ENGINE": "fixed"}}, {"gpu": True}):  # fmt: skip
        kwargs = {"environ": {}, "gpu": False, **kwargs}
        assert engines.choose_population(4, run=run, measure_fn=_never, **kwargs)[::2] == (
            "jax", 4)  # fmt: skip
    with pytest.raises(ValueError, match="--backend names tensorflow"):
        engines.choose_population(4, "tensorflow", environ={}, gpu=False)
    with pytest.raises(ValueError, match="KERAS_BACKEND names tensorflow"):
        engines.choose_population(4, environ={"KERAS_BACKEND": "tensorflow"}, gpu=False)


def test_builder_arguments_given_beside_the_width_are_measured_apart(tmp_path):
    paper = Run.make("token", model="mlp", batch_size=128)
    tiny = paper.replace(model_kwargs={"widths": (64, 64), "embed_dim": 8})
    for run, ms in ((paper, {"tensorflow": 2.0, "jax": 9.0}), (tiny, {"tensorflow": 9.0,
                                                                     "jax": 2.0})):  # fmt: skip
        backend, why = engines.choose(None, environ={}, gpu=False, run=run,
                                      cache=tmp_path / "e.json", measure_fn=_measured(ms),
                                      say=print)  # fmt: skip
        assert backend == min(ms, key=ms.get)
    assert "mlp width 1 batch 128 | embed_dim=8 " in why and " widths=64,64 |" in why
