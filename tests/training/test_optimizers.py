"""Adam's epsilon and coupled weight decay (PyTorch's ``weight_decay``): one step against the
update written out, through ``apply`` and ``stateless_apply``, and a saved model reloads."""

import keras
import numpy as np
import pytest

from pvr_keras.hyperparams import TrainRecipe
from pvr_keras.runconfig import Run
from pvr_keras.training.optimizers import make_optimizer

W0 = np.array([[0.5, -1.0], [2.0, 0.25]], "float32")
G = np.array([[0.1, 0.2], [-0.3, 0.05]], "float32")


def _adam_step(w, g, lr, eps, coupled):
    # PyTorch's Adam, first step: g' = g + decay w; m = 0.1 g', v = 0.001 g'^2, bias-corrected
    g = g + coupled * w
    m_hat, v_hat = g, g * g
    return w - lr * m_hat / (np.sqrt(v_hat) + eps)


@pytest.mark.parametrize("stateless", [False, True])
@pytest.mark.parametrize("coupled", [0.0, 0.5])
def test_adam_with_coupled_decay_takes_pytorchs_first_step(coupled, stateless):
    if stateless and keras.backend.backend() == "tensorflow":
        pytest.skip("stateless_apply is JAX's path (Keras refuses it on TensorFlow)")
    lr, eps = 0.01, 1e-8
    optimizer = make_optimizer("adam", lr, weight_decay=0, adam_epsilon=eps,
                               coupled_weight_decay=coupled)  # fmt: skip
    w = keras.Variable(W0)
    optimizer.build([w])
    if stateless:
        [new], _ = optimizer.stateless_apply(
            [v.value for v in optimizer.variables], [keras.ops.convert_to_tensor(G)], [w.value]
        )
    else:
        optimizer.apply([keras.ops.convert_to_tensor(G)], [w])
        new = w.value
    # Keras's Adam puts epsilon outside the bias correction's square root as PyTorch does
    np.testing.assert_allclose(keras.ops.convert_to_numpy(new),
                               _adam_step(W0, G, lr, eps, coupled), rtol=1e-5)  # fmt: skip


def test_sgd_with_coupled_decay_adds_it_to_the_gradient():
    optimizer = make_optimizer("sgd", 0.1, momentum=0.0, weight_decay=0,
                               coupled_weight_decay=0.01)  # fmt: skip
    w = keras.Variable(W0)
    optimizer.apply([keras.ops.convert_to_tensor(G)], [w])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(w.value), W0 - 0.1 * (G + 0.01 * W0),
                               rtol=1e-6)  # fmt: skip


def test_a_model_with_coupled_decay_saves_and_reloads(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(make_optimizer("adam", 0.01, coupled_weight_decay=0.001), "mse")
    model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert type(loaded.optimizer).__name__ == "CoupledAdam"
    assert loaded.optimizer.coupled_weight_decay == pytest.approx(0.001)


def test_the_options_enter_a_runs_identity_only_when_set():
    plain = Run.make("gotu")
    assert "adam_epsilon" not in plain.run_id and plain.run_id == Run.make(
        "gotu", adam_epsilon=1e-7, coupled_weight_decay=0).run_id  # fmt: skip
    assert Run.make("gotu", optimizer="adam", adam_epsilon=1e-8).run_id != plain.run_id
    assert Run.make("gotu", coupled_weight_decay=0.001).run_id != plain.run_id


@pytest.mark.parametrize(
    "fields, message",
    [({"adam_epsilon": 0}, "adam_epsilon must be a finite number > 0"),
     ({"coupled_weight_decay": -1}, "coupled_weight_decay must be a finite number >= 0")],
)  # fmt: skip
def test_bad_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        TrainRecipe(**fields)


def test_a_runs_recipe_reaches_its_optimizer():
    from pvr_keras.training.optimizers import optimizer_for

    recipe = TrainRecipe(optimizer="adam", adam_epsilon=1e-8, coupled_weight_decay=0.001,
                         weight_decay=0, schedule="constant", warmup_epochs=0)  # fmt: skip
    optimizer = optimizer_for(recipe, 100)
    assert type(optimizer).__name__ == "CoupledAdam"
    assert (optimizer.epsilon, optimizer.coupled_weight_decay) == (1e-8, 0.001)
    assert type(optimizer_for(TrainRecipe(), 100)).__name__ == "SGD"  # nothing set: plain
