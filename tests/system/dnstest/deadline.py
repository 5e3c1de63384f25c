"""deadline(): raise HarnessTimeout in the main thread after N seconds
(SIGALRM), however the code inside is blocked. The conftest wraps every
test's setup and body in one."""

import signal
from contextlib import contextmanager


class HarnessTimeout(Exception):
    pass


@contextmanager
def deadline(seconds, what="test"):
    def expired(signum, frame):
        raise HarnessTimeout(f"{what} took longer than {seconds:g}s")
    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
