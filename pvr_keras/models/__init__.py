"""One builder per architecture of the paper; ``get(name, **kwargs)`` picks one by name.

Token models take int tokens (batch, seq_len); image models take float images
(batch, height, width, channels) in [0, 1]; ``image_sequence`` takes float image sequences
(batch, seq_len, height, width, channels); the Boolean models take int8 bits +1 / -1
(batch, num_bits) and output one number (batch, 1). Every model outputs raw logits and names
its blocks ``block0``, ``block1``, ... and the features before the classifier ``pre_logits``.

Each model file registers its builder (``registry.register_model``); ``get`` also takes a
reference to a builder of your own, ``"my_pkg.nets:tiny_net"`` or ``"path/nets.py:tiny_net"``.
``pvr_keras.registry.model_names()`` lists the models without importing Keras.

Note: the submodules ``mlp``, ``transformer`` and ``mixer`` share their names with their
builders; the package attributes are the builder functions (imported last, below).
"""

from pvr_keras import registry
from pvr_keras.models.bits import bits_mixer, bits_mlp, bits_transformer
from pvr_keras.models.gotu import gotu_mlp, gotu_transformer, mean_field, random_features
from pvr_keras.models.mixer import mixer
from pvr_keras.models.mlp import mlp, mlp2x
from pvr_keras.models.resnet import resnet18
from pvr_keras.models.sequence import image_sequence
from pvr_keras.models.transformer import transformer
from pvr_keras.models.vgg import vgg11_bn

TOKEN_MODELS = registry.model_names("token")
IMAGE_MODELS = registry.model_names("image")
SEQUENCE_MODELS = registry.model_names("sequence")
BITS_MODELS = registry.model_names("bits")


def get(name, **kwargs):
    """Builds the model called ``name`` (or a builder reference) with ``kwargs``.

    Args:
        name: a registered name (``registry.model_names()``) or a builder reference,
            ``"my_pkg.nets:tiny_net"`` / ``"path/to/nets.py:tiny_net"``.
        **kwargs: passed to the builder; image models need ``input_shape``.

    Example:
        >>> get("mlp").count_params()
        1445194
        >>> get("resnet18", input_shape=(32, 32, 1), width=8).output.shape
        (None, 10)
    """
    return registry.builder(name)(**kwargs)


__all__ = [
    "BITS_MODELS",
    "IMAGE_MODELS",
    "SEQUENCE_MODELS",
    "TOKEN_MODELS",
    "bits_mixer",
    "bits_mlp",
    "bits_transformer",
    "get",
    "gotu_mlp",
    "gotu_transformer",
    "image_sequence",
    "mean_field",
    "mixer",
    "mlp",
    "mlp2x",
    "random_features",
    "resnet18",
    "transformer",
    "vgg11_bn",
]
