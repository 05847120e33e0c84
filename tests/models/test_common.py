import keras
import numpy as np
import pytest

from pvr_keras.models import mlp
from pvr_keras.models.common import CheckedModel, check_positive, image_input

from .test_mlp import tokens

TINY = {"embed_dim": 4, "widths": (8,)}


@pytest.mark.filterwarnings("ignore:The structure of `inputs`")  # Keras warns on [x]
def test_accepts_every_form_keras_accepts_for_one_input():
    model = mlp(**TINY)
    x = tokens()
    expected = keras.ops.convert_to_numpy(model(x))
    for form in ([x], {"tokens": x}):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(model(form)), expected)


def test_symbolic_calls_are_checked():
    model = mlp(**TINY)
    assert model(keras.Input((11,), dtype="int64")).shape == (None, 10)
    with pytest.raises(ValueError, match="received dtype float32"):
        model(keras.Input((11,), dtype="float32"))


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_training_and_inference_loops_are_checked(method):
    model = mlp(**TINY)
    model.compile(
        optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    x, y = tokens().astype("float32"), np.zeros(4, "int32")
    args = (x,) if method == "predict" else (x, y)
    with pytest.raises(ValueError, match="integer inputs .* received dtype float32"):
        getattr(model, method)(*args, verbose=0)


def test_clone_keeps_the_check():
    clone = keras.models.clone_model(mlp(**TINY))
    assert isinstance(clone, CheckedModel)
    with pytest.raises(ValueError, match="received dtype float32"):
        clone(tokens().astype("float32"))


def test_check_positive_rejects_bools_and_floats():
    check_positive(a=1, b=np.int64(3))
    for bad in (True, 1.0, 0, -3, "2", None):
        with pytest.raises(ValueError, match=f"a must be a positive integer; received {bad!r}"):
            check_positive(a=bad)


@pytest.mark.parametrize(
    "shape", [(32, 32), (32, 32, 3, 1), "32x32", (32.0, 32, 3), (32, 32, True)]
)
def test_image_input_needs_three_integers(shape):
    with pytest.raises(ValueError, match=r"input_shape must be \(height, width, channels\)"):
        image_input(shape)


def test_token_values_are_checked_on_host_arrays_and_sequences_need_a_value():
    import numpy as np

    from pvr_keras import models

    model = models.mlp(embed_dim=2, widths=(4,))
    for value, shown in ((-1, "-1..0"), (10, "0..10")):
        x = np.zeros((2, 11), "int32")
        x[0, 3] = value
        with pytest.raises(ValueError, match=f"takes tokens in 0..9; received values in {shown}"):
            model(x)
    for builder in (models.mlp, models.transformer, models.mixer):
        with pytest.raises(ValueError, match="seq_len must be an integer >= 2"):
            builder(seq_len=1)
