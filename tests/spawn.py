"""Child processes for tests, spawned (a fresh interpreter), never forked: a fork after JAX
or TensorFlow have started threads can deadlock (JAX warns of it)."""

import multiprocessing


def start(target, *args):
    """Starts ``target(*args)`` in a spawned process; returns the ``Process`` (``.pid``,
    ``.join()``, ``.exitcode``, ``.kill()``). ``target`` must be a module-level function."""
    process = multiprocessing.get_context("spawn").Process(target=target, args=args)
    process.start()
    return process
