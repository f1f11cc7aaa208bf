"""Stopping on a signal: Ctrl-C (SIGINT) and SIGTERM (what CI cancellation, ``timeout`` and
``docker stop`` send) unwind the command, so that every ``finally`` runs: an audit's workers
and cluster are stopped, its output folder released, a half-built report withdrawn.

Within :func:`stopping_on_signals`, SIGINT raises :class:`KeyboardInterrupt` and SIGTERM (and
SIGHUP, a closed terminal) raise :class:`Terminated`, in the main thread, and each signal is
recorded, so that one a library swallowed still ends the command with the signal's exit code
(:func:`exit_code`): 130 for an interrupt, 143 for SIGTERM (128 + the signal's number, as shells
report). A signal this process was started ignoring (``nohup``, a background job) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


class Terminated(BaseException):
    """The process was asked to end (SIGTERM, SIGHUP): unwind, then exit 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"terminated by {signal.Signals(self.signum).name}"


#: the signals this module turns into exceptions
HANDLED = (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []))


def exit_code(signum: int) -> int:
    """The exit code a shell gives a command ended by ``signum``.

    Examples
    --------
    >>> exit_code(signal.SIGINT), exit_code(signal.SIGTERM)
    (130, 143)
    """
    return 128 + int(signum)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[list[int]]:
    """Within the block, :data:`HANDLED` signals raise (see the module); yields the list of the
    signals received, in order. The previous handlers are restored after."""
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    previous = {}
    for signum in HANDLED:
        try:
            if signal.getsignal(signum) == signal.SIG_IGN:
                continue
            previous[signum] = signal.signal(signum, handle)
        except ValueError:  # not the main thread: leave the handlers alone
            break
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
