"""Structured progress of long work: how much of what is done, out of how much.

Long loops (a protocol's rounds or epochs, an attack's iterations, an audit's cells) hand a
:class:`Progress` to a hook the caller set; the command line draws it as a bar with the time
left (:mod:`fedsec.cli.progress`). Progress is the caller's business only: nothing of it enters
a transcript or a result, and without a hook it costs one test per update.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fedsec.errors import ValidationError


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` (counted in ``unit``) of the work named ``label``.

    ``resumed`` of the ``done`` were finished before this process started (a resumed audit's
    cells): they count towards the bar, not towards the rate the time left is estimated from.
    ``final`` marks the last update of the work (a loop that stops early, such as a converged
    conjugate gradient, ends with ``done < total``). ``note`` is a line worth keeping (an
    audit cell's status), shown as it is.

    Examples
    --------
    >>> update = Progress("fedcg-secure CG", 3, 500, "epoch")
    >>> update.done, update.total, update.final
    (3, 500, False)
    """

    label: str
    done: int
    total: int
    unit: str
    resumed: int = 0
    final: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.resumed <= self.done or self.total < 0:
            raise ValidationError(
                f"Progress of {self.label!r} needs 0 <= resumed <= done and total >= 0. Got "
                f"done={self.done}, total={self.total}, resumed={self.resumed} instead.")


ProgressHook = Callable[[Progress], None]
"""Where progress goes: a callable taking a :class:`Progress`."""
