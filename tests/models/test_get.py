import pytest

from pvr_keras import models


def test_registry_lists_all_models():
    kinds = models.TOKEN_MODELS + models.IMAGE_MODELS + models.SEQUENCE_MODELS
    assert set(models.BUILDERS) == set(kinds)
    assert models.TOKEN_MODELS == ("mlp", "mlp2x", "transformer", "mixer")
    assert models.IMAGE_MODELS == ("resnet18", "vgg11_bn")
    for name in models.BUILDERS:
        assert callable(getattr(models, name))


def test_get_builds_by_name():
    assert models.get("mixer", dim=8, depth=2, token_dim=6, channel_dim=16).name == "mixer"
    model = models.get("vgg11_bn", input_shape=(32, 32, 1), num_classes=3, width=1)
    assert model.output.shape == (None, 3)


def test_unknown_name_lists_the_names():
    with pytest.raises(
        ValueError,
        match="model must be one of mlp, mlp2x, transformer, mixer, resnet18, vgg11_bn, "
        "image_sequence; received 'resnet50'",
    ):
        models.get("resnet50")
