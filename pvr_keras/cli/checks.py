"""Checks of a recipe's flags, before any framework loads: each failure is a ``ConfigError``
that names the flag and the value received."""

import re

from pvr_keras import checks
from pvr_keras.errors import ConfigError


def flag(name):
    return "--" + name.replace("_", "-")


def _flagged(check, name, *args, **kwargs):
    """``check`` (one of ``pvr_keras.checks``) of a flag's value: its ValueError, naming the
    flag, as a ConfigError."""
    try:
        return check(flag(name), *args, **kwargs)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def check_ints(cfg, names, minimum):
    """Each of ``names`` must be an integer >= ``minimum`` (None allowed where optional)."""
    for name in names:
        if getattr(cfg, name) is not None:
            _flagged(checks.check_int, name, getattr(cfg, name), minimum)


def check_positive(cfg, names):
    """Each of ``names`` must be a number > 0 (finite; None allowed where optional)."""
    for name in names:
        if getattr(cfg, name) is not None:
            _flagged(checks.check_number, name, getattr(cfg, name), 0, above=True)


def check_range(cfg, name, low, high, *, low_open=False):
    """``low <= value <= high`` (``low < value`` with ``low_open``)."""
    _flagged(checks.check_number, name, getattr(cfg, name), low, maximum=high, above=low_open)


def check_stem(value, flag="--name"):
    """A file-name stem (letters, digits, '_', '.', '-'; not a path), else a ConfigError."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
        raise ConfigError(
            f"{flag} must be letters, digits, '_', '.' or '-' (a file name stem); received "
            f"{value!r}"
        )
    return value


def check_task(build):
    """Runs ``build()`` and turns its ValueError into a ConfigError."""
    try:
        return build()
    except ValueError as err:
        raise ConfigError(str(err)) from None


def check_finite(values):
    """Every float of ``{name: value}`` (tuples too) finite, every tuple non-empty."""
    for name, value in values.items():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, float) and not checks.is_finite(v):
                raise ConfigError(f"{flag(name)} must be a finite number; received {v}")
        if isinstance(value, tuple) and not value:
            raise ConfigError(f"{flag(name)} needs at least one value")


def study_seeds(parsed, what):
    """The seeds of a study whose grid is ``what`` and the seeds (``--seed 0 1 2``): distinct;
    any other run field given several values is refused."""
    seeds = parsed.axes.get("seed", (parsed.run.seed,))
    others = sorted(set(parsed.axes) - {"seed"})
    if others:
        raise ValueError(f"the {what} and seeds are this study's grid; received several values "
                         f"of {', '.join(others)}")  # fmt: skip
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct; received {list(seeds)}")
    return tuple(seeds)


def check_tensorboard(enabled):
    """``--tensorboard`` needs the tensorboard package: a ConfigError naming the extra if not."""
    import importlib.util

    if enabled and importlib.util.find_spec("tensorboard") is None:
        raise ConfigError(
            '--tensorboard needs the tensorboard package: pip install -e ".[tensorboard]"'
        )
