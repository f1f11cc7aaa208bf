"""Drawing progress on standard error: a bar redrawn in place on a terminal, lines otherwise.

:class:`Display` receives the runner's text messages (:meth:`Display.message`) and structured
updates (:meth:`Display.update`, a :class:`~fedsec.progress.Progress`). On a terminal
(``isatty``) it keeps one line at the bottom, redrawn with a carriage return, at most every
``redraw`` seconds: the label, a bar, the count, the time elapsed and the time left. Elsewhere
(a log file, a pipe, CI) it writes a plain line for the first update of a piece of work, its
last one, and at most one every ``every`` seconds between them. The text is made by pure
functions (:func:`render_bar`, :func:`render_line`) of the update and the seconds elapsed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from fedsec.progress import Progress

PREFIX = "fedsec: "


def seconds_text(seconds: float) -> str:
    """A duration as people read it.

    Examples
    --------
    >>> seconds_text(4.2), seconds_text(75), seconds_text(7260)
    ('4 s', '1 min 15 s', '2 h 1 min')
    """
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def time_left(update: Progress, elapsed: float) -> float | None:
    """Seconds left at the rate of the work done in ``elapsed`` seconds (resumed work excluded);
    None before any has been done here (or no time has passed), or when the work is over.

    Examples
    --------
    >>> time_left(Progress("audit", 6, 10, "cell", resumed=2), 8.0)
    8.0
    >>> time_left(Progress("audit", 2, 10, "cell", resumed=2), 8.0) is None
    True
    """
    fresh = update.done - update.resumed
    if fresh <= 0 or elapsed <= 0 or update.final or update.done >= update.total:
        return None
    return elapsed / fresh * (update.total - update.done)


def _timing(update: Progress, elapsed: float) -> str:
    if update.final or update.done >= update.total:
        return f"done in {seconds_text(elapsed)}"
    left = time_left(update, elapsed)
    return (f"{seconds_text(elapsed)} elapsed"
            + ("" if left is None else f", about {seconds_text(left)} left"))


def render_bar(update: Progress, elapsed: float, *, width: int = 24) -> str:
    """The one-line bar a terminal shows.

    Examples
    --------
    >>> render_bar(Progress("fedcg-secure CG", 25, 100, "epoch"), 10.0, width=8)
    'fedcg-secure CG [##------] 25/100 epochs (25%) 10 s elapsed, about 30 s left'
    """
    share = update.done / update.total if update.total else 1.0
    filled = min(width, int(share * width))
    return (f"{update.label} [{'#' * filled}{'-' * (width - filled)}] "
            f"{update.done}/{update.total} {update.unit}s ({share:.0%}) "
            + _timing(update, elapsed))


def render_line(update: Progress, elapsed: float) -> str:
    """The plain line a log gets (without the ``fedsec:`` prefix).

    Examples
    --------
    >>> render_line(Progress("fedcg-secure CG", 25, 100, "epoch"), 10.0)
    'fedcg-secure CG: epoch 25 of 100 (10 s elapsed, about 30 s left)'
    >>> render_line(Progress("fedcg-secure CG", 40, 100, "epoch", final=True), 16.0)
    'fedcg-secure CG: epoch 40 of 100 (done in 16 s)'
    """
    return f"{update.label}: {update.unit} {update.done} of {update.total} " \
           f"({_timing(update, elapsed)})"


class Display:
    """Progress on ``stream``: a redrawn bar when it is a terminal, occasional lines otherwise.

    ``tty`` overrides ``stream.isatty()``; ``clock`` (seconds, monotonic) is replaceable for
    tests.
    """

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, every: float = 5.0,
                 redraw: float = 0.1) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.tty = _isatty(self.stream) if tty is None else tty
        self.clock = clock
        self.every = every
        self.redraw = redraw
        self._started: dict[str, float] = {}
        self._last_shown: dict[str, float] = {}
        self._bar = ""  # the bar on screen (terminal only)
        self._last_bar: Progress | None = None

    def message(self, text: str) -> None:
        """A line of text (what the run is doing); on a terminal the bar is redrawn below it."""
        self._clear()
        self._write(f"{PREFIX}{text}\n")
        if self._last_bar is not None and not self._last_bar.final:
            self._draw(self._last_bar)

    def update(self, update: Progress) -> None:
        """Show ``update`` when it is due (its first and last always are)."""
        now = self.clock()
        first = update.label not in self._started
        started = self._started.setdefault(update.label, now)
        if update.note and not self.tty:  # a log keeps every note, with the count and time
            self._last_shown[update.label] = now
            self._write(f"{PREFIX}[{update.done}/{update.total}] {update.note}, "
                        f"{_timing(update, now - started)}\n")
            return
        if update.note:
            self.message(update.note)
        due = (first or update.final or update.done >= update.total
               or now - self._last_shown.get(update.label, now) >= (
                   self.redraw if self.tty else self.every))
        if not due:
            return
        self._last_shown[update.label] = now
        if self.tty:
            self._last_bar = update
            self._draw(update, now - started)
            if update.final or update.done >= update.total:
                self._write("\n")
                self._bar = ""
                self._last_bar = None
        elif not update.note:
            self._write(f"{PREFIX}{render_line(update, now - started)}\n")

    def close(self) -> None:
        """End a bar left on screen with a newline."""
        if self._bar:
            self._write("\n")
            self._bar = ""
            self._last_bar = None

    def _draw(self, update: Progress, elapsed: float | None = None) -> None:
        if elapsed is None:
            elapsed = self.clock() - self._started.get(update.label, self.clock())
        text = render_bar(update, elapsed)
        self._write("\r" + text + " " * max(0, len(self._bar) - len(text)))
        self._bar = text

    def _clear(self) -> None:
        if self._bar:
            self._write("\r" + " " * len(self._bar) + "\r")
            self._bar = ""

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or file-like stream without a terminal
        return False
