"""The errors a recipe reports as a one-line message instead of a traceback."""


class ConfigError(ValueError):
    """A config that cannot run, found before any work starts (exit status 2)."""


class DataNotPrepared(FileNotFoundError):
    """An image dataset is not prepared in the TFDS data dir and cannot be downloaded here
    (no network, or downloads turned off); the message says how to prepare it."""


class DiskFull(OSError):
    """No space left while writing a file: the temporary file is removed and the last
    complete file kept (exit status 1, one line)."""


class UnsafePath(OSError):
    """A symbolic link where the library writes (a lock, a claim, an appended file): it
    writes through no link (exit status 1, one line)."""


class RunBusy(RuntimeError):
    """Another process trains into the same run folder (exit status 1, one line)."""


class DamagedFile(ValueError):
    """A record, checkpoint or saved model that is not whole: the message names the file
    and says what is wrong (exit status 1, one line)."""


class UntrustedCode(ConfigError):
    """A record read from disk names code (a builder or task kind reference) that reading it
    would import; nothing was imported. The user opts in with ``--trust-code`` /
    ``trust_code=True`` (exit status 2, one line)."""


class RunMismatch(ConfigError):
    """A run folder holds another run's files (its checkpoint, its record): nothing of it is
    continued as this run (exit status 2, one line)."""
