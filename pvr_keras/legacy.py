"""A ``Run`` from what a record stores, of today's layout or an old one: the one module that
reads the layouts written before runs had one config.

``from_config(config)`` is the ``Run`` a record's ``config`` describes; ``from_line(line)`` the
one of a sweep's results line. ``migrate(config)`` turns the config of a record written
before one run config (a ``token_pvr.py``, ``block_iid.py`` / ``block_holdout.py`` or
``image_sequence.py`` run: they also stored the backend, data dir or ``--out``) into today's
identity (``runconfig.identity``); ``tools/migrate_runs.py`` applies it to run folders.
``config_identity`` reads a recipe's ``config.json`` (any layout) for comparison.
Reading imports no user code: a builder reference in a record is a name until trusted.
"""

import dataclasses

from pvr_keras import kinds, registry
from pvr_keras.runconfig import FIRST_KIND, SECTIONS, Run, identity, section_fields

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
    """The ``Run`` a record's config describes (today's identity, or a legacy config). Read
    as untrusted (``registry.reading``): a builder, kind or aggregation it names is checked,
    never trusted, so nothing it names is imported later unless the user names it too
    (``registry.trust``, ``--trust-code``).

    Raises:
        ValueError: fields that are not run fields, or values a run refuses.
    """
    with registry.reading("a run's config"):
        return _from_config(config)


def _from_config(config):
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
    """The ``Run`` of a sweep's results line (its identity fields; its results left out),
    read as untrusted as ``from_config`` reads a config."""
    with registry.reading("a results line"):
        owner = section_fields(kinds.kind(line.get("kind", FIRST_KIND)))
        return from_config({k: v for k, v in line.items() if k in owner})


def config_identity(config):
    """What a recipe's ``config.json`` says about the run(s) it holds: the run identity, the
    grid (``grid.FIELD``: the values of each axis) and the recipe's own fields, without how
    it ran (system fields, ``out``). Read as untrusted (``registry.reading``): a kind, builder
    or aggregation it names is never imported unless the user named it too."""
    if not isinstance(config, dict):
        raise ValueError(f"a recipe's config is a JSON object; received {type(config).__name__}")
    with registry.reading("a recipe's config.json"):
        return _config_identity(config)


def _config_identity(config):
    system = {f.name for f in dataclasses.fields(SECTIONS["system"])}
    own = {k: v for k, v in config.get("recipe", {}).items() if k != "out"}
    grid = {f"grid.{k}": v for k, v in config.get("grid", {}).items()}
    if "run" in config:
        run, own, grid = _own_fields_now_run_fields(config["run"], own, grid)
        return {**run, **grid, **own}
    # Written before runs had one config: every field flat; the recipe's own ones are kept.
    flat = {k: v for k, v in config.items() if k not in system}
    run_keys = set(section_fields(kinds.kind(legacy_kind(flat))))
    run = {k: v for k, v in flat.items() if k in run_keys or k in ("head", "encoder")}
    extra = {k: v for k, v in flat.items() if k not in run and k not in ("out", "conv_widths")}
    try:
        return {**migrate(run), **extra}
    except ValueError:
        return flat


def _own_fields_now_run_fields(run, own, grid):
    """A config of ``fast_slow.py`` / ``boolean_holdout.py`` written when their seeds and the
    MLP's widths were their own fields (``seeds``, ``widths``), as today's: the first seed
    the run's, all of them the grid's ``seed`` axis, the widths the builder's argument."""
    if "seeds" not in own:
        return run, own, grid
    own = dict(own)
    seeds, widths = own.pop("seeds"), own.pop("widths", None)
    fields = {"seed": seeds[0]} if seeds else {}
    if len(seeds) > 1:
        grid = {**grid, "grid.seed": list(seeds)}
    if widths is not None:
        fields["model_kwargs"] = {"widths": tuple(widths)}
    try:
        return identity(from_config(run).replace(**fields)), own, grid
    except ValueError:
        return run, own, grid
