"""The exception tree every fedsec module raises from.

Each error sits under the matching built-in so callers that already catch
``ValueError`` or ``TypeError`` keep working, while ``except FedsecError``
catches everything the toolkit itself refuses.
"""

from __future__ import annotations

from collections.abc import Iterable


class FedsecError(Exception):
    """Base class of every error fedsec raises on purpose."""


class ValidationError(FedsecError, ValueError):
    """A parameter, spec string or data value is not acceptable."""


class UnknownNameError(FedsecError, KeyError):
    """A name (dataset, party, protocol, backend, ...) is not known.

    The message lists the valid names so the user can correct the call, after
    the ``close`` ones (likely misspellings) when the caller gives them.
    """

    def __init__(self, kind: str, name: str, valid: Iterable[str], *,
                 close: Iterable[str] = ()) -> None:
        self.kind = kind
        self.name = name
        self.valid = tuple(sorted(valid))
        choices = ", ".join(self.valid) if self.valid else "(none registered)"
        near = " or ".join(map(repr, close))
        hint = f" Did you mean {near}?" if near else ""
        super().__init__(f"Unknown {kind} {name!r}.{hint} Valid {kind} names: {choices}.")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class DataError(ValidationError):
    """Data values are unusable (NaN, inf, wrong shape, failed checksum)."""


class CapabilityError(FedsecError, TypeError):
    """A component lacks an operation or knowledge another component needs."""


class TranscriptError(FedsecError, ValueError):
    """A transcript is corrupt, truncated, tampered with or misused."""


class MissingInputError(ValidationError, TranscriptError):
    """An input file or folder that does not exist: a usage error wherever it is named."""


class PartitionError(ValidationError):
    """A partition spec or grid is invalid."""


class TransportError(FedsecError, ConnectionError):
    """A party's process died, hung or broke a message in transit (``--transport tcp``)."""
