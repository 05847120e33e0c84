"""Runs of a sweep: grids of ``runconfig.Run`` of any task kind, unique runs, shards.

A run's id is a readable prefix plus a hash of its identity (``pvr_keras.identity``), so the
same configuration gets the same id on every machine, every run and every Python version,
and any change (one more epoch) gives a new id.
"""

import itertools

from pvr_keras.runconfig import Run, section_fields

__all__ = ["Run", "expand", "fields_of", "parse_shard", "shard", "unique"]


def fields_of(kind="token"):
    """The flat field names of a kind's runs but its system fields (grid axes, figures)."""
    from pvr_keras import kinds

    owner = section_fields(kinds.kind(kind))
    return tuple(name for name, section in owner.items() if section not in ("kind", "system"))


def expand(axes, base=None):
    """All runs of a grid: the product of ``axes`` over a ``base`` run, in ``axes`` order.

    Args:
        axes: ``{field: values}``, e.g. ``{"seed": [0, 1], "window": [1, 2]}``; the first
            axis varies slowest, so listing ``seed`` first finishes a whole seed early.
        base: a ``Run`` (any kind), or a dict of token-run fields (default: the token kind's
            default run).

    Returns:
        A list of ``Run``; every one is checked before any work starts.

    Example:
        >>> runs = expand({"window": [1, 2], "num_examples": [1000, 3000]})
        >>> [(r.window, r.num_examples) for r in runs][:2]
        [(1, 1000), (1, 3000)]
    """
    if base is None:
        base = Run.make("token")
    elif isinstance(base, dict):
        base = Run.make("token", **base)
    elif not isinstance(base, Run):
        raise ValueError(f"base must be a Run or a dict of fields; received {base!r}")
    if not isinstance(axes, dict) or not axes:
        raise ValueError(f"axes must be a non-empty dict of field -> values; received {axes!r}")
    known = fields_of(base.kind)
    unknown = [name for name in axes if name not in known]
    if unknown:
        raise ValueError(
            f"grid axes must be fields of a {base.kind} run ({', '.join(known)}); "
            f"received {unknown}"
        )
    for name, values in axes.items():
        if isinstance(values, str | bytes) or not hasattr(values, "__iter__") or not values:
            raise ValueError(
                f"axis {name!r} must be a non-empty list of values; received {values!r}"
            )
    names = list(axes)
    return [
        base.replace(**dict(zip(names, combo, strict=True)))
        for combo in itertools.product(*(list(axes[n]) for n in names))
    ]


def unique(runs):
    """``runs`` without repeated configurations (first occurrence kept, order kept)."""
    seen, out = set(), []
    for run in runs:
        if not isinstance(run, Run):
            raise ValueError(f"runs must be Run instances; received {type(run).__name__}")
        if run.run_id not in seen:
            seen.add(run.run_id)
            out.append(run)
    return out


def parse_shard(text):
    """``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``.

    Example:
        >>> parse_shard("1/4")
        (1, 4)
    """
    try:
        index, count = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise ValueError(f'shard must look like "i/n" (e.g. "0/4"); received {text!r}') from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard i/n needs n >= 1 and 0 <= i < n; received {text!r}")
    return index, count


def shard(runs, index, count):
    """The runs of shard ``index`` of ``count``: every ``count``-th run of the grid order.

    Deterministic (the grid order is), disjoint across shards, and their union is the grid;
    round-robin spreads cheap and expensive runs over the shards alike.
    """
    parse_shard(f"{index}/{count}")
    return list(runs)[index::count]
