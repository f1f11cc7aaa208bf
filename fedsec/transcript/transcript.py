"""The finished record of one run and its integrity check."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fedsec.transcript.message import (
    CHAIN_FORMAT,
    SEALED_FORMATS,
    Message,
    canonical_json,
    genesis,
    link,
    seal,
)
from fedsec.transcript.payload import encode

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class IntegrityReport:
    """The verdict of :meth:`Transcript.verify`.

    Attributes
    ----------
    ok : bool
        True when every message is chained correctly and the run finished.
    status : str
        ``complete``, ``aborted`` (the run raised; the record is intact),
        ``truncated`` (messages or the end record are missing) or
        ``tampered`` (a message does not match the chain or is out of order).
    n_messages : int
        Messages read.
    first_bad : int or None
        Position of the first message that breaks the chain.
    problems : tuple of str
        One readable line per problem, in the order found.
    """

    ok: bool
    status: str
    n_messages: int
    first_bad: int | None = None
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form."""
        return {"ok": self.ok, "status": self.status, "n_messages": self.n_messages,
                "first_bad": self.first_bad, "problems": list(self.problems)}

    def summary(self) -> str:
        """One line for a terminal."""
        if self.ok:
            return f"intact: {self.n_messages} messages, chain verified, run complete"
        return f"{self.status}: " + "; ".join(self.problems)


#: The message fields the chain covers, besides metadata and payload.
_CHAINED = ("seq", "round", "phase", "sender", "receiver", "tag", "kind", "protection",
            "key_id", "dtype", "shape", "size", "digest")


class ChainCheck:
    """The integrity chain checked one message at a time (memory independent of the count).

    Feed messages in order with :meth:`add_messages` or, from a file, :meth:`add_columns`
    (False once one breaks the chain: stop there), then :meth:`finish` with the end record and
    what the reader met.
    """

    def __init__(self, header: Mapping[str, Any], version: str = CHAIN_FORMAT) -> None:
        self.version = version
        self.head = genesis(canonical_json(dict(header)), version)
        self.n = 0
        self.first_bad: int | None = None
        self.problems: list[str] = []

    def add_messages(self, messages: Iterable[Message], chunk: int = 8192) -> bool:
        """Check the next messages, as columns of ``chunk`` at a time (:meth:`add_columns`);
        False (with a problem) at the first that breaks the chain. Read in one pass: a
        transcript read back lazily from its file is read once."""
        stream = iter(messages)
        while part := list(itertools.islice(stream, chunk)):
            cols: dict[str, list[Any]] = {field: [getattr(m, field) for m in part]
                                          for field in _CHAINED}
            cols["meta"] = [m.meta_json for m in part]
            cols["payload"] = [encode(m.payload)[3] for m in part]
            if not self.add_columns(cols):
                return False
        return True

    def add_columns(self, cols: Mapping[str, Sequence[Any]]) -> bool:
        """Check a batch's messages from the file's own columns (the stored metadata JSON and
        payload bytes, as they were chained), without building messages; False (with a
        problem) at the first that breaks the chain."""
        head, n, version = self.head, self.n, self.version
        rows = zip(cols["seq"], cols["round"], cols["phase"], cols["sender"], cols["receiver"],
                   cols["tag"], cols["kind"], cols["protection"], cols["key_id"], cols["dtype"],
                   cols["shape"], cols["size"], cols["meta"], cols["payload"], cols["digest"],
                   strict=True)
        for (seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape,
             size, meta_json, raw, digest) in rows:
            if seq != n:
                self.head, self.n, self.first_bad = head, n, n
                self.problems.append(f"message at position {n} has sequence number {seq}: "
                                     "messages were reordered, inserted or removed")
                return False
            expected = link(head, seq, round_, phase, sender, receiver, tag, kind, protection,
                            key_id, dtype, tuple(shape), size, meta_json, raw, version)
            if expected != digest:
                self.head, self.n, self.first_bad = head, n, n
                self.problems.append(f"message {n} ({tag}, {sender}->{receiver}) does not "
                                     "match the integrity chain: it or an earlier message was "
                                     "altered")
                return False
            head, n = expected, n + 1
        self.head, self.n = head, n
        return True

    def finish(self, footer: Mapping[str, Any] | None, read_problems: Sequence[str] = (),
               damaged_at: int | None = None, n_read: int | None = None) -> IntegrityReport:
        """The verdict, given the end record and the reader's problems (``n_read``: messages
        read, when more were read than checked)."""
        problems = list(read_problems)
        n = self.n if n_read is None else n_read
        if self.first_bad is not None:
            return IntegrityReport(ok=False, status="tampered", n_messages=n,
                                   first_bad=self.first_bad,
                                   problems=tuple(problems + self.problems))
        if damaged_at is not None:
            return IntegrityReport(ok=False, status="tampered", n_messages=n,
                                   first_bad=damaged_at, problems=tuple(problems))
        status = self._footer_status(footer, problems,
                                     "truncated" if read_problems else "complete")
        return IntegrityReport(ok=not problems, status=status, n_messages=n,
                               problems=tuple(problems))

    def _footer_status(self, footer: Mapping[str, Any] | None, problems: list[str],
                       status: str) -> str:
        n = self.n
        if footer is None:
            problems.append(
                f"no end record: the run stopped or the file was cut after {n} readable messages"
            )
            return "truncated"
        expected_n = footer.get("n_messages")
        if expected_n != n:
            problems.append(f"the end record counts {expected_n} messages but {n} were read")
            return "truncated" if isinstance(expected_n, int) and expected_n > n else "tampered"
        if footer.get("head") != self.head.hex():
            problems.append("the final chain value does not match the end record")
            return "tampered"
        if (self.version in SEALED_FORMATS
                and footer.get("end") != seal(self.head, footer, self.version).hex()):
            problems.append("the end record does not match the chain: its status, message "
                            "count or error was edited")
            return "tampered"
        if footer.get("status") != "complete":
            problems.append(f"the run aborted: {footer.get('error', 'no reason recorded')}")
            return "aborted"
        return status


@dataclass(frozen=True)
class Transcript:
    """The append-only record of one run.

    Attributes
    ----------
    header : Mapping
        Run facts recorded before the first message (protocol, parameters,
        parties and roles, public parameters, seed, versions).
    messages : sequence of Message
        Every message in order: a tuple, or for a run streamed to a file a
        :class:`~fedsec.transcript.log.MessageLog` that reads them back from it lazily.
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
    """

    header: Mapping[str, Any]
    messages: Sequence[Message]
    footer: Mapping[str, Any] | None
    read_problems: tuple[str, ...] = field(default=())
    format_version: str = CHAIN_FORMAT
    damaged_at: int | None = None

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
        the end record can forge a consistent file.
        """
        chain = ChainCheck(self.header, self.format_version)
        chain.add_messages(self.messages)
        return chain.finish(self.footer, self.read_problems, self.damaged_at,
                            n_read=len(self.messages))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write to ``path`` (Arrow IPC) atomically."""
        from fedsec.transcript.writer import write_transcript

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
        return [m for m in self.messages if all(getattr(m, k) == v for k, v in where.items())]


