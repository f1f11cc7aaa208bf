"""Party names: what a valid name is and the error for an unknown one.

Party names travel inside spec strings (``names=a+b``, ``owners=a+b/c+d``,
``roles=a:hospital``), so they must not contain the characters that separate
the parts of a spec string, and they must not start or end with whitespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fedsec.errors import PartitionError, UnknownNameError

#: Characters that separate the parts of a spec string; refused in names and roles.
RESERVED_CHARACTERS = ",+/:="


class UnknownPartyError(UnknownNameError, PartitionError):
    """One or more party names (in ``labels``, ``roles``, ...) are not parties of the grid.

    It is both an :class:`~fedsec.errors.UnknownNameError` (a ``KeyError``) and a
    :class:`~fedsec.errors.PartitionError` (a ``ValueError``), and its message lists
    every unknown name together with the valid ones.
    """

    def __init__(self, where: str, names: Sequence[str], valid: Iterable[str]) -> None:
        self.kind = "party"
        self.names = tuple(names)
        self.name = self.names[0] if self.names else ""
        self.valid = tuple(sorted(valid))
        self.where = where
        unknown = ", ".join(map(repr, self.names))
        choices = ", ".join(self.valid) if self.valid else "(none)"
        Exception.__init__(
            self,
            f"Unknown party name(s) {unknown} in {where}. Valid party names: {choices}.",
        )


def name_problem(name: object, *, what: str) -> str | None:
    """Say what is wrong with a party name or role, or return ``None`` if it is fine.

    Examples
    --------
    >>> name_problem("hospital1", what="party name") is None
    True
    >>> name_problem("a+b", what="party name")
    "party name 'a+b' contains one of the reserved characters ,+/:="
    """
    if not isinstance(name, str):
        return f"{what} {name!r} is not a string"
    if not name.strip():
        return f"{what} must be a non-empty string, got {name!r}"
    if name != name.strip():
        return f"{what} {name!r} starts or ends with whitespace"
    if any(ch in name for ch in RESERVED_CHARACTERS):
        return f"{what} {name!r} contains one of the reserved characters {RESERVED_CHARACTERS}"
    return None


def duplicates(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, in first-seen order.

    Examples
    --------
    >>> duplicates(["a", "b", "a", "c", "b", "a"])
    ['a', 'b']
    """
    seen: set[str] = set()
    repeated: list[str] = []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    return repeated
