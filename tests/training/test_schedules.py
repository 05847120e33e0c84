import math

import keras
import numpy as np
import pytest

from pvr_keras import training
from pvr_keras.training import WarmupCosine


def test_warmup_then_cosine():
    schedule = WarmupCosine(0.05, warmup_steps=10, total_steps=110)
    lr = [float(keras.ops.convert_to_numpy(schedule(s))) for s in range(111)]
    np.testing.assert_allclose(lr[:11], 0.005 * np.arange(11), atol=1e-7)  # linear warm-up
    expected = [0.025 * (1 + math.cos(math.pi * (s - 10) / 100)) for s in range(10, 111)]
    np.testing.assert_allclose(lr[10:], expected, atol=1e-6)
    assert lr[-1] == pytest.approx(0.0, abs=1e-7)


def test_every_searched_optimizer_trains_with_the_schedule():
    """The optimizers of the tuning space are recipe optimizers too (a best trial can be
    trained by a recipe), each with the warm-up cosine schedule."""
    from pvr_keras.hyperparams import OPTIMIZERS
    from pvr_keras.training.optimizers import optimizer_for
    from pvr_keras.tuning.hypermodels import OPTIMIZERS as SEARCHED

    assert set(SEARCHED) <= set(OPTIMIZERS)
    for name in SEARCHED:
        recipe = training.TrainRecipe(optimizer=name, epochs=2, min_steps=0)
        optimizer = optimizer_for(recipe, 2048)
        assert type(optimizer).__name__.lower() == name
        schedule = optimizer._learning_rate  # Keras keeps the schedule here  # noqa: SLF001
        assert isinstance(schedule, WarmupCosine) and schedule.total_steps == 4  # 2 x 2 steps


def test_schedule_serialises():
    schedule = WarmupCosine(0.1, warmup_steps=3, total_steps=9)
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert clone.get_config() == schedule.get_config()


def test_bad_schedule():
    with pytest.raises(ValueError, match="warmup_steps <= total_steps"):
        WarmupCosine(0.1, warmup_steps=10, total_steps=5)


def test_paper_recipes():
    token, visual = training.TOKEN, training.VISUAL
    assert (token.optimizer, token.learning_rate, token.momentum, token.weight_decay) == (
        "sgd",
        0.05,
        0.9,
        1e-5,
    )
    assert (token.batch_size, token.epochs, token.warmup_epochs) == (1024, 200, 10)
    assert (visual.optimizer, visual.learning_rate, visual.batch_size, visual.epochs) == (
        "adam",
        1e-4,
        50,
        10,
    )
    # Tiny training sets train for at least 800 iterations.
    assert token.num_epochs(64) == 800
    assert token.num_epochs(100_000) == 200
    assert token.steps_per_epoch(100_000) * token.num_epochs(3000) >= 800


def test_bad_recipe():
    with pytest.raises(
        ValueError, match="optimizer must be one of sgd, adam, adagrad, lamb; received 'rmsprop'"
    ):
        training.TrainRecipe(optimizer="rmsprop")
    with pytest.raises(ValueError, match="learning_rate must be a finite number > 0; received nan"):
        training.TrainRecipe(learning_rate=float("nan"))
    with pytest.raises(ValueError, match="batch_size must be a positive integer; received 0"):
        training.TrainRecipe(batch_size=0)
