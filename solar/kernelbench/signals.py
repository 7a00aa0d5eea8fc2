"""SIGINT, SIGTERM and SIGHUP during `solar kernelbench`: each becomes an `Interrupted` exception in
the main thread, so the run unwinds like any error (workers and the fork server killed, temporary
folders removed, rows written so far kept) and the command exits 128 + the signal's number (130 for
Ctrl-C, 143 for SIGTERM) after one line. A second signal while stopping is ignored."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A stop signal arrived. A BaseException, like KeyboardInterrupt: `except Exception` misses it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Within the block, SIGNALS raise Interrupted in the main thread (elsewhere: no change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {s: signal.signal(s, stop) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
