"""The errors a recipe reports as a one-line message instead of a traceback."""


class ConfigError(ValueError):
    """A config that cannot run, found before any work starts."""


class DataNotPrepared(FileNotFoundError):
    """An image dataset is not prepared in the TFDS data dir and cannot be downloaded here
    (no network, or downloads turned off); the message says how to prepare it."""
