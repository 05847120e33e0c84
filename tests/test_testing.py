"""pvr_keras.testing: the shared model test passes a good builder of a user's file and fails a
broken one with a message that names the builder, the step and the fix."""

import keras
import numpy as np
import pytest

from pvr_keras import testing

TOKENS = np.random.default_rng(0).integers(0, 10, size=(4, 11), dtype="int32")


class Unregistered(keras.layers.Layer):
    """A custom layer without ``register_keras_serializable``: saved, it does not reload."""

    def call(self, x):
        return 2.0 * x


def _net(*, hidden=16, block=keras.layers.Identity, head="logits", activation=None):
    tokens = keras.Input((11,), dtype="int32", name="tokens")
    x = keras.layers.Flatten()(keras.layers.Embedding(10, 4, name="embedding")(tokens))
    x = block(name="block0")(x)
    x = keras.layers.Dense(hidden, activation="relu", name="pre_logits")(x)
    return keras.Model(tokens, keras.layers.Dense(10, activation=activation, name=head)(x))


def test_a_good_builder_passes_by_function_or_by_reference(tmp_path):
    model = testing.run_model_test(_net, {}, TOKENS, tmp_path=tmp_path)
    assert isinstance(model, keras.Model) and (tmp_path / f"{model.name}.keras").is_file()
    source = tmp_path / "nets.py"
    source.write_text(
        "import keras\n\n\ndef net(*, hidden=8):\n"
        "    tokens = keras.Input((11,), dtype='int32')\n"
        "    x = keras.layers.Flatten(name='block0')(keras.layers.Embedding(10, 4)(tokens))\n"
        "    x = keras.layers.Dense(hidden, name='pre_logits')(x)\n"
        "    return keras.Model(tokens, keras.layers.Dense(10, name='logits')(x))\n"
    )
    testing.run_model_test(f"{source}:net", {"hidden": 4}, TOKENS)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"block": Unregistered},
            r"_net\(\*\*\{'block': .*\}\): does not reload from .keras with safe_mode=True "
            r"\(TypeError: Could not locate class 'Unregistered'\.\); decorate each custom layer "
            r"with @keras.saving.register_keras_serializable",
        ),
        ({"head": "classifier"}, "needs its classifier named 'logits', with no activation"),
        ({"activation": "softmax"}, "needs its classifier named 'logits', with no activation"),
    ],
)
def test_a_broken_builder_fails_saying_what_to_change(kwargs, message, tmp_path):
    with pytest.raises(testing.ModelTestError, match=message):
        testing.run_model_test(_net, kwargs, TOKENS, tmp_path=tmp_path)


def test_missing_taps_and_wrong_shapes_are_named(tmp_path):
    def no_taps():
        tokens = keras.Input((11,), dtype="int32")
        x = keras.layers.Flatten()(keras.layers.Embedding(10, 4)(tokens))
        return keras.Model(tokens, keras.layers.Dense(10, name="logits")(x))

    with pytest.raises(AssertionError, match=r"no layer named \['block0', 'pre_logits'\]"):
        testing.run_model_test(no_taps, {}, TOKENS, tmp_path=tmp_path)
    with pytest.raises(AssertionError, match=r"outputs shape \(4, 10\).*\(4, 3\)"):
        testing.run_model_test(_net, {}, TOKENS, tmp_path=tmp_path, num_classes=3)
