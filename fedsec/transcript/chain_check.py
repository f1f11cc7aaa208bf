"""The verdict on a transcript's integrity, and the chain checked message by message (formats 1
to 3) or batch by batch (format 4, :mod:`fedsec.transcript.batch_chain`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from fedsec.transcript.batch_chain import BATCH_FORMATS, BatchChain, ChainDamage
from fedsec.transcript.columns import numbers
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

    def add_messages(self, messages: Iterable[Message], chunk: int = 8192,
                     checkpoints: Sequence[tuple[int, bytes]] = ()) -> bool:
        """Check the next messages, as columns of ``chunk`` at a time (:meth:`add_columns`);
        False (with a problem) at the first that breaks the chain. Read in one pass: a
        transcript read back lazily from its file is read once. (Every message carries its own
        chain value in these formats: ``checkpoints`` add nothing.)"""
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
        # formats 1 and 2 wrote no seal; one there must still be the chain's (a seal copied
        # from a signed file of a later format is refused, not ignored)
        if ((self.version in SEALED_FORMATS or "end" in footer)
                and footer.get("end") != seal(self.head, footer, self.version).hex()):
            problems.append("the end record does not match the chain: its status, message "
                            "count or error was edited"
                            + ("" if self.version in SEALED_FORMATS else
                               f", or it was copied from a file of another format (format "
                               f"{self.version} records no seal)"))
            return "tampered"
        if footer.get("status") != "complete":
            problems.append(f"the run aborted: {footer.get('error', 'no reason recorded')}")
            return "aborted"
        return status


def chain_check(header: Mapping[str, Any], version: str = CHAIN_FORMAT) -> ChainCheck:
    """The chain check of a transcript of ``version`` with ``header``."""
    if version in BATCH_FORMATS:
        return BatchChainCheck(header, version)
    return ChainCheck(header, version)


class BatchChainCheck(ChainCheck):
    """Format 4's chain, checked one record batch at a time (:mod:`~.batch_chain`): no work
    in Python per message. Feed validated batches with :meth:`add_batch` (from a file, with
    the chain value its metadata records) or messages with :meth:`add_messages`."""

    def __init__(self, header: Mapping[str, Any], version: str = CHAIN_FORMAT) -> None:
        super().__init__(header, version)
        self.chain = BatchChain(canonical_json(dict(header)), version)
        self.head = self.chain.head()

    def add_batch(self, batch: pa.RecordBatch, checkpoint: bytes | None) -> bool:
        """Check the next batch against ``checkpoint``, the chain value recorded after it
        (None: nothing recorded, as between a transcript's checkpoints in memory); False (with
        a problem) when it breaks the chain."""
        n, rows = self.n, batch.num_rows
        if not rows:
            return True
        seqs = batch.column(batch.schema.get_field_index("seq"))
        if seqs.null_count:
            return self._broken(n, f"messages {n} to {n + rows - 1}: column seq has a missing "
                                "value")
        wrong = np.flatnonzero(numbers(seqs) != np.arange(n, n + rows))
        if len(wrong):
            return self._broken(n + int(wrong[0]), f"message at position {n + int(wrong[0])} "
                                f"has sequence number {seqs[int(wrong[0])]}: messages were "
                                "reordered, inserted or removed")
        try:
            self.chain.add(batch)
        except ChainDamage as error:
            return self._broken(n, f"messages {n} to {n + rows - 1}: {error}")
        head = self.chain.head()
        if checkpoint is not None and head != checkpoint:
            return self._broken(n, f"messages {n} to {n + rows - 1} (one record batch) do not "
                                "match the integrity chain: one of them was altered")
        self.head, self.n = head, n + rows
        return True

    def add_messages(self, messages: Iterable[Message], chunk: int = 8192,
                     checkpoints: Sequence[tuple[int, bytes]] = ()) -> bool:
        """Check messages (built into batches of ``chunk``, cut at the ``checkpoints`` given as
        ``(message count, chain value)`` so each is compared); False at the first batch that
        breaks the chain."""
        from fedsec.transcript import arrow_format as fmt
        from fedsec.transcript.sink import to_batch

        schema = fmt.bare_schema(self.version)
        marks = dict(checkpoints)
        cuts = sorted(marks)
        stream = iter(messages)
        while True:
            ahead = [c - self.n for c in cuts if c > self.n]
            size = min([chunk, *ahead])
            part = list(itertools.islice(stream, size))
            if not part:
                return True
            batch = to_batch([(m, encode(m.payload)[3]) for m in part], schema)
            if not self.add_batch(batch, marks.get(self.n + len(part))):
                return False

    def add_columns(self, cols: Mapping[str, Sequence[Any]]) -> bool:
        raise TypeError("a format-4 transcript is checked a batch at a time (add_batch)")

    def _broken(self, at: int, problem: str) -> bool:
        self.first_bad = at
        self.problems.append(problem)
        return False
