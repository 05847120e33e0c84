import importlib
import sys

import keras
import numpy as np
import pytest

from pvr_keras.models import mixer
from pvr_keras.testing import run_model_test

from .test_mlp import tokens

TINY = {"dim": 8, "depth": 2, "token_dim": 6, "channel_dim": 16}


def test_package_attribute_is_the_builder_even_after_importing_the_module():
    import pvr_keras.models

    module = importlib.import_module("pvr_keras.models.mixer")
    assert module is sys.modules["pvr_keras.models.mixer"] and module is not mixer
    assert callable(mixer) and mixer.__name__ == "mixer"
    assert pvr_keras.models.mixer is mixer
    assert pvr_keras.models.get("mixer", **TINY).name == "mixer"


def test_mixer_model(tmp_path):
    run_model_test(mixer, TINY, tokens(), tmp_path=tmp_path)


def test_parameter_count_matches_paper():
    assert mixer().count_params() == 8_495_674


def test_parameter_count_formula():
    # embedding + class token + depth * (2 LN + token MLP + channel MLP) + LN + head.
    seq_len, vocab, classes, dim, depth, token_dim, channel_dim = 5, 7, 3, 8, 3, 4, 12
    model = mixer(
        seq_len=seq_len,
        vocab=vocab,
        num_classes=classes,
        dim=dim,
        depth=depth,
        token_dim=token_dim,
        channel_dim=channel_dim,
    )
    tokens_ = seq_len + 1
    token_mlp = 2 * tokens_ * token_dim + token_dim + tokens_
    channel_mlp = 2 * dim * channel_dim + channel_dim + dim
    block = 4 * dim + token_mlp + channel_mlp
    expected = vocab * dim + dim + depth * block + 2 * dim + dim * classes + classes
    assert model.count_params() == expected


def test_output_depends_on_every_position():
    model = mixer(**TINY)
    x = tokens(1)
    base = keras.ops.convert_to_numpy(model(x))
    for position in range(11):
        changed = x.copy()
        changed[0, position] = (changed[0, position] + 1) % 10
        assert not np.allclose(keras.ops.convert_to_numpy(model(changed)), base)


def test_bad_inputs():
    model = mixer(**TINY)
    with pytest.raises(ValueError, match="integer inputs .* received dtype float64"):
        model(tokens().astype("float64"))
    with pytest.raises(ValueError, match=r"received shape \(4, 12\)"):
        model(tokens(4, 12))


@pytest.mark.parametrize("arg", ["seq_len", "vocab", "dim", "depth", "token_dim", "channel_dim"])
def test_non_positive_widths(arg):
    with pytest.raises(ValueError, match=f"{arg} must be a positive integer; received 0"):
        mixer(**{arg: 0})
