"""An audit's secret seed: the root of every cell's party secrets.

A cell of seed ``s`` runs with the secret seed ``base + s`` (:func:`cell_secret`), so cells
of one seed share their secrets across configurations (their comparisons are paired, as they
share the data split). ``base`` is the scenario's ``secret_seed`` when it pins one (to
reproduce numbers exactly; then anyone who reads the scenario can regenerate the parties'
secrets, which attacks never do, but a real adversary could), and otherwise a random 128-bit
number drawn when the audit first runs and kept in ``OUT/secret_seed`` (owner-only), so a
resumed audit or a rerun cell uses the same one.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from fedsec.errors import ValidationError
from fedsec.seeding import new_secret_seed

SECRET_FILE = "secret_seed"  # noqa: S105 - a file name, not a password
"""The file in an audit's output folder that keeps its drawn secret seed."""


def cell_secret(base: int, seed: int) -> int:
    """The secret seed of a cell of ``seed`` in an audit whose secret seed is ``base``.

    Examples
    --------
    >>> cell_secret(0, 3)
    3
    """
    return int(base) + int(seed)


def audit_secret(out: Path, pinned: int | None) -> tuple[int, str]:
    """The audit's secret seed and where it came from (``"scenario"`` or ``"drawn"``): the
    scenario's ``pinned`` one, else the one kept in ``out``, else a fresh one, kept there."""
    if pinned is not None:
        return int(pinned), "scenario"
    path = out / SECRET_FILE
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    value = new_secret_seed()
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return _read(path), "drawn"
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValidationError(f"{path} is a symbolic link; fedsec keeps the audit's secret "
                                  "seed only in a file of its own: remove the link.") from None
        raise
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{value}\n")
    return value, "drawn"


def _read(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd) as handle:
            text = handle.read(200).strip()
        value = int(text)
    except (OSError, ValueError):
        raise ValidationError(
            f"{path} should hold this audit's secret seed (one whole number) but cannot be "
            "read as one; restore it, or remove it to draw a new one (every cell then runs "
            "again).") from None
    if value < 0:
        raise ValidationError(f"{path} holds a negative secret seed; remove it to draw a new "
                              "one (every cell then runs again).")
    return value
