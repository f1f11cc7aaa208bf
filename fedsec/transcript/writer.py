"""Append-only recording of messages, in memory and through to disk."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from time import perf_counter
from types import MappingProxyType
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import Message, canonical_json, genesis, link
from fedsec.transcript.payload import decode, encode
from fedsec.transcript.transcript import Transcript

_EMPTY_META = "{}"
_NO_META: Mapping[str, Any] = MappingProxyType({})


class ArrowSink:
    """Writes record batches to ``PATH.partial`` and moves the file into place on finish.

    The last batch of a finished transcript has no rows; its custom metadata
    holds the footer (status, message count, final chain value). A file
    without it was cut short.
    """

    def __init__(self, path: str | os.PathLike[str], header_json: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.schema = fmt.schema(header_json)
        self._file = open(self.partial, "wb")  # noqa: SIM115 - closed in finish()
        self._writer = ipc.new_file(self._file, self.schema)

    def write(self, rows: list[tuple[Message, bytes]], n_total: int, head: bytes) -> None:
        """Append rows as one batch, with a checkpoint of the chain in its metadata."""
        batch = _to_batch(rows, self.schema)
        self._writer.write_batch(
            batch, custom_metadata={b"n": str(n_total).encode(), b"head": head.hex().encode()}
        )
        self._file.flush()

    def finish(self, footer: Mapping[str, Any]) -> None:
        """Write the end record, close the file and move it into place."""
        end = _to_batch([], self.schema)
        footer_json = canonical_json(footer).encode()
        self._writer.write_batch(end, custom_metadata={fmt.FOOTER_KEY: footer_json})
        self._writer.close()
        self._file.close()
        os.replace(self.partial, self.path)

    def discard(self) -> None:
        """Close and delete the partial file (used when re-saving fails)."""
        try:
            self._writer.close()
        finally:
            self._file.close()
            self.partial.unlink(missing_ok=True)


class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Batches are flushed every ``flush_rows`` messages, every ``flush_bytes``
    payload bytes or every ``flush_seconds`` seconds, whichever comes first,
    so a run that dies loses at most that much. While the run is open the
    file is ``PATH.partial``; :meth:`close` writes the footer and moves it
    into place. A run that dies leaves ``PATH.partial`` with a readable
    prefix.

    Parameters
    ----------
    header : Mapping
        JSON-able facts about the run (protocol, parameters, parties, public
        parameters). Covered by the integrity chain.
    path : path-like, optional
        Where the finished transcript goes; ``None`` keeps it in memory only.

    Examples
    --------
    >>> import numpy as np
    >>> w = TranscriptWriter({"protocol": "demo"})
    >>> m = w.record(round=0, phase="main", sender="a", receiver="b", tag="x", payload=np.ones(2))
    >>> w.close().verify().ok
    True
    """

    def __init__(
        self, header: Mapping[str, Any], path: str | os.PathLike[str] | None = None, *,
        flush_rows: int = 8192, flush_bytes: int = 64 << 20, flush_seconds: float = 1.0,
    ) -> None:
        self.header = dict(header)
        self._header_json = canonical_json(self.header)
        self._head = genesis(self._header_json)
        self._messages: list[Message] = []
        self._pending: list[tuple[Message, bytes]] = []
        self._pending_bytes = 0
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._start = time.perf_counter()
        self._last_flush = self._start
        self._transcript: Transcript | None = None
        self._sink = None if path is None else ArrowSink(path, self._header_json)

    @property
    def n_messages(self) -> int:
        """How many messages have been recorded."""
        return len(self._messages)

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages recorded so far."""
        return tuple(self._messages)

    def record(
        self, *, round: int, phase: str, sender: str, receiver: str, tag: str, payload: Any,
        protection: str = "plain", key_id: str = "", meta: Mapping[str, Any] | None = None,
        size: int | None = None, crypto_seconds: float = 0.0,
    ) -> Message:
        """Append one message and return it as the receiver gets it.

        Names are not checked here (the network checks them once at its
        boundary). ``size`` overrides the bytes counted on the wire, for key
        material recorded only by fingerprint; by default it is the payload
        length.
        """
        if self._transcript is not None:
            raise TranscriptError("This transcript is closed; start a new run to record more.")
        kind, dtype, shape, raw = encode(payload)
        if meta:
            meta_json = canonical_json(meta)
        else:
            meta, meta_json = _NO_META, _EMPTY_META
        seq = len(self._messages)
        wire = len(raw) if size is None else int(size)
        digest = link(self._head, seq, round, phase, sender, receiver, tag, kind, protection,
                      key_id, dtype, shape, wire, meta_json, raw)
        now = perf_counter()
        message = Message(seq, round, phase, sender, receiver, tag, kind, protection, key_id,
                          dtype, shape, decode(kind, dtype, shape, raw), wire, meta,
                          now - self._start, crypto_seconds, digest)
        self._head = digest
        self._messages.append(message)
        if self._sink is not None:
            self._pending.append((message, raw))
            self._pending_bytes += len(raw)
            if (
                len(self._pending) >= self._flush_rows
                or self._pending_bytes >= self._flush_bytes
                or now - self._last_flush >= self._flush_seconds
            ):
                self.flush()
        return message

    def flush(self) -> None:
        """Write the pending messages as one record batch."""
        if self._sink is None or not self._pending:
            return
        self._sink.write(self._pending, len(self._messages), self._head)
        self._pending = []
        self._pending_bytes = 0
        self._last_flush = time.perf_counter()

    def close(self, status: str = "complete", error: str | None = None) -> Transcript:
        """Finish the transcript and return it; a second call returns the same one.

        ``status`` is ``"complete"`` for a run that ended normally and
        ``"aborted"`` for one that raised (``error`` says why).
        """
        if self._transcript is None:
            footer: dict[str, Any] = {
                "status": status, "n_messages": len(self._messages), "head": self._head.hex(),
            }
            if error is not None:
                footer["error"] = error
            if self._sink is not None:
                self.flush()
                self._sink.finish(footer)
            self._transcript = Transcript(
                header=self.header, messages=tuple(self._messages), footer=footer
            )
        return self._transcript

    def abort(self, error: BaseException) -> Transcript:
        """Close after a failure, recording the error in the footer."""
        return self.close("aborted", f"{type(error).__name__}: {error}")


def write_transcript(transcript: Transcript, path: str | os.PathLike[str]) -> None:
    """Write a transcript to ``path`` atomically; :func:`read_transcript` gives it back exactly."""
    sink = ArrowSink(path, canonical_json(dict(transcript.header)))
    try:
        rows: list[tuple[Message, bytes]] = []
        for message in transcript.messages:
            rows.append((message, encode(message.payload)[3]))
            if len(rows) >= 8192:
                sink.write(rows, message.seq + 1, message.digest)
                rows = []
        if rows:
            sink.write(rows, rows[-1][0].seq + 1, rows[-1][0].digest)
        sink.finish(transcript.footer or {"status": "unknown"})
    except BaseException:
        sink.discard()
        raise


def _to_batch(rows: Sequence[tuple[Message, bytes]], schema: pa.Schema) -> pa.RecordBatch:
    if not rows:
        return pa.RecordBatch.from_pylist([], schema=schema)
    messages = [m for m, _ in rows]
    columns = dict(zip(Message._fields, zip(*messages, strict=True), strict=True))
    columns["payload"] = [raw for _, raw in rows]
    columns["meta"] = [m.meta_json if m.meta else _EMPTY_META for m in messages]
    arrays = [pa.array(columns[f.name], type=f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
