"""One builder per architecture of the paper; ``get(name, **kwargs)`` picks one by name.

Token models take int tokens (batch, seq_len); image models take float images
(batch, height, width, channels) in [0, 1]; ``image_sequence`` takes float image sequences
(batch, seq_len, height, width, channels). Every model outputs raw logits and names its
blocks ``block0``, ``block1``, ... and the features before the classifier ``pre_logits``.

Note: the submodules ``mlp``, ``transformer`` and ``mixer`` share their names with their
builders; the package attributes are the builder functions (imported last, below).
"""

# A saved model's optimizer holds the recipes' schedule: registered with the layers, so that
# loading a .keras file needs only ``import pvr_keras.models``.
import pvr_keras.training.schedules  # noqa: F401, I001
from pvr_keras.models.mixer import mixer
from pvr_keras.models.mlp import mlp, mlp2x
from pvr_keras.models.resnet import resnet18
from pvr_keras.models.sequence import image_sequence
from pvr_keras.models.transformer import transformer
from pvr_keras.models.vgg import vgg11_bn

BUILDERS = {
    "mlp": mlp,
    "mlp2x": mlp2x,
    "transformer": transformer,
    "mixer": mixer,
    "resnet18": resnet18,
    "vgg11_bn": vgg11_bn,
    "image_sequence": image_sequence,
}
TOKEN_MODELS = ("mlp", "mlp2x", "transformer", "mixer")
IMAGE_MODELS = ("resnet18", "vgg11_bn")
SEQUENCE_MODELS = ("image_sequence",)


def get(name, **kwargs):
    """Builds the model called ``name`` with ``kwargs``.

    Args:
        name: one of ``TOKEN_MODELS``, ``IMAGE_MODELS`` or ``SEQUENCE_MODELS``.
        **kwargs: passed to the builder; image models need ``input_shape``.

    Example:
        >>> get("mlp").count_params()
        1445194
        >>> get("resnet18", input_shape=(32, 32, 1), width=8).output.shape
        (None, 10)
    """
    if name not in BUILDERS:
        raise ValueError(f"model must be one of {', '.join(BUILDERS)}; received {name!r}")
    return BUILDERS[name](**kwargs)


__all__ = [
    "BUILDERS",
    "IMAGE_MODELS",
    "SEQUENCE_MODELS",
    "TOKEN_MODELS",
    "get",
    "image_sequence",
    "mixer",
    "mlp",
    "mlp2x",
    "resnet18",
    "transformer",
    "vgg11_bn",
]
