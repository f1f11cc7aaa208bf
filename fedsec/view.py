"""The View: what one adversary observed, plus what it already knew.

Built by :func:`fedsec.views.build_view`. An attack receives a :class:`View` and
nothing else. The view holds the
messages on links the adversary observes, the run's public header, and the
private holdings (shards, keys, values) of the coalition's own members. A
protected payload whose key the coalition does not hold stays opaque: its
size and metadata are visible, its content is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.backends.api import backends
from fedsec.errors import CapabilityError
from fedsec.threat import ThreatModel
from fedsec.transcript import Message
from fedsec.transcript.columnar import ColumnMessages

#: Protections whose payload anyone on the link can read.
READABLE_WITHOUT_KEY = frozenset({"plain"})


@dataclass(frozen=True)
class View:
    """What one threat model observed in one run.

    Attributes
    ----------
    threat : ThreatModel
        The adversary.
    header : Mapping
        The run's public facts (protocol, parameters, parties and roles).
    messages : sequence of Message
        Messages on observed links, in transcript order: a tuple, or, for a transcript read
        from a file, a :class:`~fedsec.transcript.columnar.ColumnMessages` that builds each
        message from the file's record batches when it is read.
    knowledge : Mapping
        Each coalition member's private holdings, ``{party: {name: value}}``.
    run_seed : int or None
        The run's public seed, as its scenario or ``result.json`` names it (an attack's own
        random stream derives from it: :meth:`~fedsec.interfaces.Attack.seed_for`); None when
        only a transcript is at hand (its header holds only a commitment to the seed).
    """

    threat: ThreatModel
    header: Mapping[str, Any]
    messages: Sequence[Message]
    knowledge: Mapping[str, Mapping[str, np.ndarray | bytes]]
    run_seed: int | None = None

    @property
    def keys(self) -> dict[str, bytes]:
        """Key material the coalition holds, by key id."""
        out: dict[str, bytes] = {}
        for held in self.knowledge.values():
            for name, value in held.items():
                if name.startswith("key/") and isinstance(value, bytes):
                    out[name[len("key/"):]] = value
        return out

    @property
    def parties(self) -> dict[str, str]:
        """Every party of the run and its role (public)."""
        return dict(self.header.get("parties", {}))

    def select(self, **where: Any) -> list[Message]:
        """Observed messages whose fields equal the given values, e.g. ``select(tag="x")``."""
        if isinstance(self.messages, ColumnMessages):  # compared in the columns
            return self.messages.select(**where)
        return [m for m in self.messages if all(getattr(m, k) == v for k, v in where.items())]

    def tags(self) -> frozenset[str]:
        """Tags of every observed message."""
        if isinstance(self.messages, ColumnMessages):
            return self.messages.tags()
        return frozenset(m.tag for m in self.messages)

    def can_open(self, message: Message) -> bool:
        """Whether the coalition can recover the values behind ``message``'s payload.

        Plain payloads are open to anyone who observes them; protected ones
        need every key listed in the message's key id.
        """
        if message.protection in READABLE_WITHOUT_KEY:
            return True
        if message.protection == "secret":  # key material, shown by fingerprint only
            return False
        held = self.keys
        return all(k in held for k in message.key_id.split(",") if k)

    def open(self, message: Message) -> np.ndarray | bytes:
        """The values behind ``message``; refused when it is opaque to this adversary.

        What was literally observed (masked words, ciphertext bytes) is
        always ``message.payload``.
        """
        if message.protection in READABLE_WITHOUT_KEY:
            return message.payload
        if not self.can_open(message):
            raise CapabilityError(
                f"Message {message.seq} ({message.tag}) is protected by {message.protection} "
                f"under {message.key_id or 'a key'}, which {self.threat} does not hold."
            )
        backend = backends.get(message.protection)
        held = self.keys
        needed = {k: held[k] for k in message.key_id.split(",") if k}
        return backend.open_payload(message.payload, message.meta, needed)

    def own(self, name: str) -> dict[str, np.ndarray | bytes]:
        """A coalition member's private holdings."""
        if name not in self.knowledge:
            raise CapabilityError(f"{name!r} is not a member of the coalition {self.threat}.")
        return dict(self.knowledge[name])
