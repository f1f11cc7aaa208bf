"""The finished record of one run and its integrity check."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fedsec.transcript.chain_check import IntegrityReport, chain_check
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.message import CHAIN_FORMAT, Message

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class Transcript:
    """The append-only record of one run.

    Attributes
    ----------
    header : Mapping
        Run facts recorded before the first message (protocol, parameters,
        parties and roles, public parameters, seed, versions).
    messages : sequence of Message
        Every message in order: for a run recorded in memory a
        :class:`~fedsec.transcript.rows.RecordedMessages` that builds each from the writer's
        rows as it is read, for a run streamed to a file a
        :class:`~fedsec.transcript.log.MessageLog` that reads them back from it lazily, for a
        file read back a :class:`~fedsec.transcript.columnar.ColumnMessages` that builds each
        from the file's record batches, or a tuple.
    footer : Mapping or None
        How the run ended (``status``, ``n_messages``, final ``head``);
        ``None`` when the file was cut before the end record.
    read_problems : tuple of str
        Problems met while reading the file (unreadable parts).
    damaged_at : int or None
        Where a damaged batch or message stopped the reading (the position of the first
        message not read); None when the file was read to its end or merely cut off.
    format_version : str
        The transcript format, which fixes the chain's hash function.
    checkpoints : tuple of (int, bytes)
        Chain values recorded along the way, as ``(messages so far, chain value)``: where a
        format-4 transcript checked in memory locates an altered message (to the batch
        between two checkpoints). Empty for older formats, whose messages carry their own.
    """

    header: Mapping[str, Any]
    messages: Sequence[Message]
    footer: Mapping[str, Any] | None
    read_problems: tuple[str, ...] = field(default=())
    format_version: str = CHAIN_FORMAT
    damaged_at: int | None = None
    checkpoints: tuple[tuple[int, bytes], ...] = field(default=())

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    @property
    def parties(self) -> dict[str, str]:
        """Party name to role, as the header records them."""
        return dict(self.header.get("parties", {}))

    def verify(self) -> IntegrityReport:
        """Check order, the hash chain and completeness.

        Detects reordered, inserted, removed or altered messages, a missing
        end record (truncation) and an aborted run. The chain is an integrity
        check, not a signature: someone who rewrites every later message and
        the end record can forge a consistent file. Messages read from a file
        (:class:`~fedsec.transcript.columnar.ColumnMessages`) are checked from its record
        batches, with the verdict checking each message would give.
        """
        chain = chain_check(self.header, self.format_version)
        fed = (self.messages.chain_into(chain, self.checkpoints)
               if isinstance(self.messages, ColumnMessages) else None)
        if fed is None:
            chain.add_messages(self.messages, checkpoints=self.checkpoints)
        return chain.finish(self.footer, self.read_problems, self.damaged_at,
                            n_read=len(self.messages))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write to ``path`` (Arrow IPC) atomically."""
        from fedsec.transcript.save import write_transcript

        write_transcript(self, path)

    def to_pandas(self) -> pd.DataFrame:
        """One row per message; payloads stay as arrays or bytes."""
        import pandas as pd

        rows = [
            {"seq": m.seq, "round": m.round, "phase": m.phase, "sender": m.sender,
             "receiver": m.receiver, "tag": m.tag, "kind": m.kind, "protection": m.protection,
             "key_id": m.key_id, "payload_dtype": m.dtype, "payload_shape": m.shape,
             "wire_bytes": m.size,
             "payload": m.payload, "meta": m.meta_json, "elapsed": m.elapsed,
             "crypto_seconds": m.crypto_seconds, "digest": m.digest}
            for m in self.messages
        ]
        return pd.DataFrame(rows)

    def select(self, **where: Any) -> list[Message]:
        """Messages whose fields equal the given values, e.g. ``select(tag="x")``."""
        if isinstance(self.messages, ColumnMessages):
            return self.messages.select(**where)
        return [m for m in self.messages if all(getattr(m, k) == v for k, v in where.items())]


