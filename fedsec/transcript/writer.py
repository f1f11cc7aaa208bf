"""Append-only recording of messages, in memory and through to disk."""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from queue import SimpleQueue
from time import perf_counter
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import Message, canonical_json, genesis, link
from fedsec.transcript.payload import decode, encode
from fedsec.transcript.transcript import Transcript

_EMPTY_META = "{}"
_NO_META: Mapping[str, Any] = MappingProxyType({})
#: The recording thread hands messages over in chunks of at most this many rows.
_HANDOFF_ROWS = 256
#: Payloads at least this large are chained by the background thread.
_BACKGROUND_BYTES = 1 << 14
#: A payload at least this large is written as its own batch, without copying it.
_OWN_BATCH_BYTES = 1 << 18


class ArrowSink:
    """Writes record batches to ``PATH.partial`` and moves the file into place on finish.

    The last batch of a finished transcript has no rows; its custom metadata
    holds the footer (status, message count, final chain value). A file
    without it was cut short. Writes go straight to the operating system (no
    Python-level buffer), so every written batch survives the process.
    """

    def __init__(self, path: str | os.PathLike[str], header_json: str,
                 version: str = fmt.FORMAT_VERSION) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.schema = fmt.schema(header_json, version)
        self._file = pa.OSFile(str(self.partial), "wb")
        self._writer = ipc.new_file(self._file, self.schema)

    def write(self, rows: Sequence[tuple[Message, bytes]], n_total: int, head: bytes) -> None:
        """Append rows as one batch, with a checkpoint of the chain in its metadata."""
        self.write_batch(_to_batch(rows, self.schema), n_total, head)

    def write_batch(self, batch: pa.RecordBatch, n_total: int, head: bytes) -> None:
        """Append a built batch; ``n_total`` and ``head`` checkpoint the chain after it."""
        self._writer.write_batch(
            batch, custom_metadata={b"n": str(n_total).encode(), b"head": head.hex().encode()}
        )

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


class _Chainer(threading.Thread):
    """Links messages into the chain and streams them to the sink, in order, off the run's path.

    The recording thread hands over ``("link", fields)`` for messages still
    to be chained (large payloads, whose hashing releases the interpreter
    lock and so overlaps the protocol's own work) and ``("batch", (batch,
    n, head))`` for record batches of messages it chained itself. The
    recording thread chains a message itself only when nothing handed over
    is left to chain, so the order is the order of recording. A failure is kept and raised by
    the writer at its next call.
    """

    def __init__(self, head: bytes, sink: ArrowSink | None, flush_rows: int, flush_bytes: int,
                 flush_seconds: float) -> None:
        super().__init__(name="fedsec-transcript", daemon=True)
        self.head = head
        self.sink = sink
        self.messages: list[Message] = []
        self.linked = 0  # messages handed over for linking that are linked
        self.done = 0  # items of the inbox fully handled
        self.error: BaseException | None = None
        self.inbox: SimpleQueue[tuple[str, list[Any]] | None] = SimpleQueue()
        self._pending: list[tuple[Message, bytes]] = []
        self._pending_bytes = 0
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._last_flush = perf_counter()

    def run(self) -> None:
        while True:
            item = self.inbox.get()
            if item is None:
                return
            what, chunk = item
            if self.error is not None:
                self.linked += len(chunk) if what == "link" else 0
                self.done += 1
                continue
            try:
                if what == "link":
                    for fields in chunk:
                        message, raw = self.link(fields)
                        self.linked += 1
                        self._stream(message, raw)
                elif what == "batch":  # built by the recording thread, after what came before
                    self._flush()
                    self.sink.write_batch(*chunk)
                    self._last_flush = perf_counter()
                else:
                    self._flush()
            except BaseException as error:  # handed to the recording thread
                self.error = error
            self.done += 1

    def link(self, fields: tuple[Any, ...]) -> tuple[Message, bytes]:
        """Chain one message (in whichever thread owns the chain now)."""
        *message_fields, meta_json, raw = fields
        (seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape,
         _payload, size) = message_fields[:13]
        self.head = link(self.head, seq, round_, phase, sender, receiver, tag, kind, protection,
                         key_id, dtype, shape, size, meta_json, raw)
        message = Message(*message_fields, self.head)
        self.messages.append(message)
        return message, raw

    @property
    def holds_rows(self) -> bool:
        """Whether messages linked here wait for their batch (they go before later ones)."""
        return bool(self._pending)

    def _stream(self, message: Message, raw: bytes) -> None:
        if self.sink is None:
            return
        if len(raw) >= _OWN_BATCH_BYTES:  # large payloads go alone, without a copy
            self._flush()
            self.sink.write([(message, raw)], message.seq + 1, message.digest)
            self._last_flush = perf_counter()
            return
        self._pending.append((message, raw))
        self._pending_bytes += len(raw)
        if (len(self._pending) >= self._flush_rows or self._pending_bytes >= self._flush_bytes
                or perf_counter() - self._last_flush >= self._flush_seconds):
            self._flush()

    def _flush(self) -> None:
        if self.sink is None or not self._pending:
            return
        last = self._pending[-1][0]
        self.sink.write(self._pending, last.seq + 1, last.digest)
        self._pending = []
        self._pending_bytes = 0
        self._last_flush = perf_counter()


class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Large payloads are chained, and every batch is written, by a background
    thread, so hashing and disk writes overlap the protocol's own
    computation; the order, the chain and the file are the same as if done
    inline. Batches are flushed every ``flush_rows`` messages, every
    ``flush_bytes`` payload bytes or every ``flush_seconds`` seconds,
    whichever comes first, so a run that dies loses at most that much (plus
    what the background thread had not written yet). While the run is open
    the file is ``PATH.partial``; :meth:`close` writes the footer and moves
    it into place. A run that dies leaves ``PATH.partial`` with a readable
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
    >>> got = w.record(round=0, phase="main", sender="a", receiver="b", tag="x",
    ...                payload=np.ones(2))
    >>> got.tolist(), w.close().verify().ok
    ([1.0, 1.0], True)
    """

    def __init__(
        self, header: Mapping[str, Any], path: str | os.PathLike[str] | None = None, *,
        flush_rows: int = 8192, flush_bytes: int = 64 << 20, flush_seconds: float = 1.0,
    ) -> None:
        self.header = dict(header)
        self._header_json = canonical_json(self.header)
        self._count = 0
        self._to_link = 0  # messages handed over (or about to be) for linking
        self._queued = 0  # items put in the background thread's inbox
        self._chunk: list[tuple[Any, ...]] = []  # to link in the background
        self._chunk_rows = min(_HANDOFF_ROWS, flush_rows)
        self._pending: list[tuple[Message, bytes]] = []  # linked here, to write
        self._pending_bytes = 0
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._start = time.perf_counter()
        self._last_handoff = self._start
        self._transcript: Transcript | None = None
        sink = None if path is None else ArrowSink(path, self._header_json)
        self._sink = sink
        self._chainer = _Chainer(genesis(self._header_json), sink, flush_rows, flush_bytes,
                                 flush_seconds)
        self._chainer.start()
        # a writer dropped without close() still lets its thread end
        weakref.finalize(self, self._chainer.inbox.put, None)

    @property
    def n_messages(self) -> int:
        """How many messages have been recorded."""
        return self._count

    def record(
        self, *, round: int, phase: str, sender: str, receiver: str, tag: str, payload: Any,
        protection: str = "plain", key_id: str = "", meta: Mapping[str, Any] | None = None,
        size: int | None = None, crypto_seconds: float = 0.0,
    ) -> np.ndarray | bytes:
        """Append one message and return its payload as the receiver gets it.

        The receiver's array is a read-only copy decoded from the recorded
        wire bytes. Names are not checked here (the network checks them once
        at its boundary). ``size`` overrides the bytes counted on the wire,
        for key material recorded only by fingerprint; by default it is the
        payload length.
        """
        if self._transcript is not None:
            raise TranscriptError("This transcript is closed; start a new run to record more.")
        chainer = self._chainer
        if chainer.error is not None:
            raise self._failed()
        kind, dtype, shape, raw = encode(payload)
        if meta:
            meta_json = canonical_json(meta)
        else:
            meta, meta_json = _NO_META, _EMPTY_META
        seq = self._count
        self._count = seq + 1
        delivered = decode(kind, dtype, shape, raw)
        now = perf_counter()
        fields = (seq, round, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape,
                  delivered, len(raw) if size is None else int(size), meta, now - self._start,
                  crypto_seconds, meta_json, raw)
        large = len(raw) >= _BACKGROUND_BYTES
        if large or self._to_link != chainer.linked:  # the background thread owns the chain
            if self._pending:
                self._write_pending()
            self._chunk.append(fields)
            self._to_link += 1
            if (large or len(self._chunk) >= self._chunk_rows
                    or now - self._last_handoff >= self._flush_seconds):
                self._hand_off()
            return delivered
        if self._chunk:
            self._hand_off()
        message, raw = chainer.link(fields)
        if self._sink is not None:
            self._pending.append((message, raw))
            self._pending_bytes += len(raw)
            if (len(self._pending) >= self._flush_rows or self._pending_bytes >= self._flush_bytes
                    or now - self._last_handoff >= self._flush_seconds):
                self._write_pending()
        return delivered

    def _put(self, item: tuple[str, Any]) -> None:
        self._chainer.inbox.put(item)
        self._queued += 1

    def _hand_off(self) -> None:
        if self._chunk:
            self._put(("link", self._chunk))
            self._chunk = []
        self._last_handoff = perf_counter()

    def _write_pending(self) -> None:
        """Write the batch here when the background thread is idle, else after its work."""
        last = self._pending[-1][0]
        batch = _to_batch(self._pending, self._sink.schema)
        chainer = self._chainer
        if self._queued == chainer.done and not chainer.holds_rows:  # idle, nothing unwritten
            self._sink.write_batch(batch, last.seq + 1, last.digest)
        else:
            self._put(("batch", (batch, last.seq + 1, last.digest)))
        self._pending = []
        self._pending_bytes = 0
        self._last_handoff = perf_counter()

    def flush(self) -> None:
        """Write the messages recorded so far (when streaming to a file)."""
        self._hand_off()
        if self._pending:
            self._write_pending()
        self._put(("flush", []))

    def close(self, status: str = "complete", error: str | None = None) -> Transcript:
        """Finish the transcript and return it; a second call returns the same one.

        ``status`` is ``"complete"`` for a run that ended normally and
        ``"aborted"`` for one that raised (``error`` says why).

        Raises
        ------
        TranscriptError
            When linking or writing a message failed (for example a full
            disk); the file stays ``PATH.partial`` with what was written.
        """
        if self._transcript is None:
            chainer = self._chainer
            self.flush()
            chainer.inbox.put(None)
            chainer.join()
            if chainer.error is not None:
                raise self._failed()
            footer: dict[str, Any] = {
                "status": status, "n_messages": len(chainer.messages), "head": chainer.head.hex(),
            }
            if error is not None:
                footer["error"] = error
            if chainer.sink is not None:
                chainer.sink.finish(footer)
            self._transcript = Transcript(
                header=self.header, messages=tuple(chainer.messages), footer=footer
            )
        return self._transcript

    def abort(self, error: BaseException) -> Transcript:
        """Close after a failure, recording the error in the footer."""
        return self.close("aborted", f"{type(error).__name__}: {error}")

    def _failed(self) -> TranscriptError:
        error = self._chainer.error
        failure = TranscriptError(
            f"Recording the transcript failed after {len(self._chainer.messages)} messages: "
            f"{type(error).__name__}: {error}"
        )
        failure.__cause__ = error
        return failure


def write_transcript(transcript: Transcript, path: str | os.PathLike[str]) -> None:
    """Write a transcript to ``path`` atomically; :func:`read_transcript` gives it back exactly."""
    sink = ArrowSink(path, canonical_json(dict(transcript.header)), transcript.format_version)
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
    columns["meta"] = [m.meta_json if m.meta else _EMPTY_META for m in messages]
    arrays = [_payload_column(rows) if f.name == "payload"
              else pa.array(columns[f.name], type=f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _payload_column(rows: Sequence[tuple[Message, bytes]]) -> pa.Array:
    """The payloads as one large-binary column; a single payload is wrapped, not copied."""
    raws = [raw for _, raw in rows]
    offsets = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum([len(raw) for raw in raws], out=offsets[1:])
    data = pa.py_buffer(raws[0] if len(raws) == 1 else b"".join(raws))
    return pa.Array.from_buffers(pa.large_binary(), len(raws), [None, pa.py_buffer(offsets), data])
