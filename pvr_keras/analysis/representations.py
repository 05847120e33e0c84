"""How alike the representations of several trained models are, layer by layer (Figure 13).

``cka_by_layer`` taps every model at each named layer (``block0``, ``block1``, ...,
``pre_logits``: every builder of ``pvr_keras.models`` names them) on the same inputs and
computes linear CKA between the pairs asked for and between every two models; one layer at a
time, since a Mixer's flattened block outputs are large.
"""

import itertools
import re

from pvr_keras.analysis.activations import activations
from pvr_keras.analysis.cka import linear_cka


def block_layers(model):
    """The names of ``model``'s ``block<i>`` layers, in order, then ``pre_logits``."""
    blocks = [layer.name for layer in model.layers if re.fullmatch(r"block\d+", layer.name)]
    return [*blocks, "pre_logits"]


def cka_by_layer(models, x, pairs=None, layers=None, *, order=None):
    """Linear CKA between models at each layer, on inputs ``x``.

    Args:
        models: ``{name: keras.Model}``, all with the named layers.
        x: the inputs (N examples) every model is tapped on.
        pairs: ``{key: (name_a, name_b)}`` to report by key (e.g. ``fast1_fast2``).
        layers: layer names (default: ``block_layers`` of the first model).
        order: sort key of the model names in ``all_pairs`` (default: as given).

    Returns:
        ``{layer: {key: cka, ..., "all_pairs": {"a-b": cka}}}``.

    Example::

        by_layer = cka_by_layer({"0": model0, "1": model1}, x, {"pair": ("0", "1")})
        by_layer["pre_logits"]["pair"]     # CKA of the two models' pre_logits
    """
    pairs = dict(pairs or {})
    names = sorted(models, key=order) if order else list(models)
    layers = list(layers or block_layers(models[names[0]]))
    result = {}
    for layer in layers:
        tapped = {name: activations(model, layer, x) for name, model in models.items()}
        values = {key: linear_cka(tapped[a], tapped[b]) for key, (a, b) in pairs.items()}
        values["all_pairs"] = {
            f"{a}-{b}": linear_cka(tapped[a], tapped[b])
            for a, b in itertools.combinations(names, 2)
        }
        result[layer] = values
    return result


def mean_by_kind(all_pairs, kind_of):
    """Mean CKA over the pairs of each kind: ``{"fast_fast": m, "fast_slow": m, ...}`` from
    ``all_pairs`` (``{"a-b": cka}``) and ``kind_of`` (``{name: "fast" | "slow" | ...}``)."""
    by_kind = {}
    for pair, value in all_pairs.items():
        a, b = pair.split("-")
        by_kind.setdefault("_".join(sorted((kind_of[a], kind_of[b]))), []).append(value)
    return {k: sum(v) / len(v) for k, v in sorted(by_kind.items())}
