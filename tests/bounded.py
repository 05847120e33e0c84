"""A call that must end quickly: ``with within(5): read(fifo)`` raises ``Hung`` in the test
instead of hanging it when the code under test waits (for a FIFO's writer, say)."""

import contextlib
import signal


class Hung(Exception):  # not an OSError: no ``except OSError`` of the code under test takes it
    """The code under test was still running when its time was up."""


@contextlib.contextmanager
def within(seconds):
    def expire(signum, frame):
        raise Hung(f"still running after {seconds} s (waiting on a FIFO?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
