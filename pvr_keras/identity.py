"""A run's identity: what its record stores as its config, and what its id is a hash of.

The identity of a ``runconfig.Run`` is every field but the ``system`` section, where

- the fields the kind lists in ``TaskKind.identity`` are always there (for the token kind,
  the fields runs have been recorded with from the start);
- every other field is there only when it differs from the kind's default (so that a field
  added later, such as ``optimizer`` or ``width``, leaves the ids of earlier runs as they were);
- ``kind`` is there unless it is ``token``, the paper's first kind.

A run id is a readable prefix and a hash of the identity (``mlp-w2-mod_sum-n30000-s0-<hash>``):
the same configuration gets the same id on every machine, run and Python version, and any
change (one more epoch) gives another.

``migrate(config)`` turns the config of a record written before runs had one config (a
``token_pvr.py``, ``block_iid.py`` / ``block_holdout.py`` or ``image_sequence.py`` run: they
also stored the backend, data dir or ``--out``) into today's identity; ``tools/migrate_runs.py``
applies it to run folders.
"""

import hashlib
import json

from pvr_keras import kinds, registry
from pvr_keras.runconfig import Run, default_run, section_fields

ID_HASH_CHARS = 10
FIRST_KIND = "token"


def identity(run):
    """The run's identity as a JSON-ready dict (see the module docstring)."""
    spec = run.spec
    fields = run.flat(system=False)
    default = default_run(run.kind).flat(system=False)
    always = spec.identity if spec.identity is not None else tuple(fields)
    out = {} if run.kind == FIRST_KIND else {"kind": run.kind}
    for name in [*always, *(f for f in fields if f not in always)]:
        if name != "kind" and (name in always or fields[name] != default[name]):
            out[name] = fields[name]
    return json.loads(json.dumps(out))  # tuples become lists, as records read back


def _slug(model):
    """A model's name in a run id: the builder's name for a reference."""
    return model.rpartition(":")[2] if registry.is_reference(model) else model


def run_id(run):
    """Readable prefix + hash of the identity: stable across machines and versions."""
    canonical = json.dumps(identity(run), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:ID_HASH_CHARS]
    spec, model = run.spec, run.architecture
    parts = [] if run.kind == FIRST_KIND else [spec.name]
    parts.append(_slug(model.model))
    parts += spec.id_parts(run) if spec.id_parts else []
    width_arg = registry.model_spec(model.model).width_arg
    if width_arg is not None:
        parts.append(f"{width_arg}{model.width}")
    elif model.width != 1:
        parts.append(f"x{model.width:g}")
    if run.train.optimizer != spec.recipe.optimizer:
        parts.append(run.train.optimizer)
    parts += [f"n{run.data.num_examples}", f"s{run.data.seed}", digest]
    return "-".join(parts)


# Record configs of the recipes before one run config: the fields they stored that are not
# run fields (how the run executed, or the recipe's output folder).
_LEGACY_ONLY = ("backend", "data_dir", "out", "devices", "input", "download", "tensorboard")
_SEQUENCE_MODEL = ("head", "encoder", "conv_widths", "dim", "widths", "depth")


def legacy_kind(config):
    """The kind of a record config written before runs had one config."""
    if "kind" in config:
        return config["kind"]
    if "head" in config and "encoder" in config:
        return "sequence"
    if config.get("model") in registry.model_names("image"):
        return "block"
    return "token"


def from_config(config):
    """The ``Run`` a record's config describes (today's identity, or a legacy config).

    Raises:
        ValueError: fields that are not run fields, or values a run refuses.
    """
    if not isinstance(config, dict):
        raise ValueError(f"a run config is a dict; received {type(config).__name__}")
    kind = legacy_kind(config)
    fields = {k: v for k, v in config.items() if k not in ("kind", *_LEGACY_ONLY)}
    if kind == "sequence" and "head" in fields:  # image_sequence.py's model fields
        model = {k: fields.pop(k) for k in _SEQUENCE_MODEL if k in fields}
        encoder = model.pop("encoder", "conv")
        if encoder != "conv":
            model["conv_widths"] = []
        fields["model_kwargs"] = {k: tuple(v) if isinstance(v, list) else v
                                  for k, v in model.items()}  # fmt: skip
    owner = section_fields(kinds.kind(kind))
    unknown = sorted(set(fields) - set(owner))
    if unknown:
        raise ValueError(f"not fields of a {kind} run: {', '.join(unknown)}")
    for name, value in fields.items():
        if isinstance(value, list) and owner[name] == "task":
            fields[name] = tuple(value)
    return Run.make(kind, **fields)


def migrate(config):
    """Today's identity of a record config (unchanged if it is current)."""
    return identity(from_config(config))


def from_line(line):
    """The ``Run`` of a sweep's results line (its identity fields; its results left out)."""
    owner = section_fields(kinds.kind(line.get("kind", FIRST_KIND)))
    return from_config({k: v for k, v in line.items() if k in owner})
