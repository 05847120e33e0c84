import pytest

from pvr_keras import models, registry
from tests.models.helpers import count_at_width


def test_the_registry_lists_every_builder():
    assert models.TOKEN_MODELS == ("mlp", "mlp2x", "transformer", "mixer")
    assert models.IMAGE_MODELS == ("resnet18", "vgg11_bn")
    assert models.SEQUENCE_MODELS == ("image_sequence",)
    for name in registry.model_names():
        assert registry.builder(name) is getattr(models, name)


def test_get_builds_by_name():
    assert models.get("mixer", dim=8, depth=2, token_dim=6, channel_dim=16).name == "mixer"
    model = models.get("vgg11_bn", input_shape=(32, 32, 1), num_classes=3, width=1)
    assert model.output.shape == (None, 3)


def test_unknown_name_lists_the_names():
    with pytest.raises(
        ValueError,
        match="model must be one of mlp, mlp2x, transformer, mixer, resnet18, vgg11_bn, "
        "image_sequence, bits_mlp, bits_transformer, bits_mixer, gotu_mlp, random_features, "
        "mean_field, gotu_transformer or a builder reference .* "
        "received 'resnet50'",
    ):
        models.get("resnet50")


@pytest.mark.parametrize("name", ["mlp", "mlp2x", "transformer", "mixer", "resnet18", "vgg11_bn"])
def test_registered_parameter_counts_are_the_models(name):
    """The parameter count each builder registers is what it builds (Table 1; torchvision's
    trainable counts for the CNNs, 3 channels and 10 classes, from narrow builds)."""
    spec = registry.model_spec(name)
    builder = registry.builder(name)
    if spec.kind == "image":
        assert count_at_width(builder, {"input_shape": (32, 32, 3)}, 64) == spec.params
    else:
        assert builder().count_params() == spec.params


def test_width_scaling_uses_the_registered_widths():
    assert registry.width_kwargs("mixer", 0.25) == {"dim": 128, "token_dim": 192,
                                                    "channel_dim": 512}  # fmt: skip
    assert registry.width_kwargs("mlp", 0.5) == {"embed_dim": 32, "widths": (256, 512, 256, 32)}
    assert registry.width_kwargs("transformer", 0.1)["dim"] % 4 == 0  # a multiple of the heads
    assert registry.width_kwargs("mlp", 1) == {}
    with pytest.raises(ValueError, match="defined for models that register widths"):
        registry.width_kwargs("resnet18", 0.5)
    with pytest.raises(ValueError, match="width scale must be a number > 0"):
        registry.width_kwargs("mlp", 0)
