"""Dataclass fields that carry the help (and choices) of their command-line flag.

Every config section (a task, the train section, the run's sections, a recipe's own fields)
declares its fields with ``field``; ``pvr_keras.cli`` makes one flag of each::

    window: int = field("window size (complexity + 1)", default=1)
"""

import dataclasses


def field(help="", choices=None, **more):
    """``dataclasses.field(**more)`` with the ``help`` (and ``choices``) of its flag."""
    if choices and not isinstance(choices, tuple):
        choices = tuple(choices)  # a tuple subclass (``tasks.aggregations.Names``) is kept
    metadata = {"help": help, **({"choices": choices} if choices else {})}
    return dataclasses.field(metadata=metadata, **more)
