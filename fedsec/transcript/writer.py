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
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.columns import column
from fedsec.transcript.message import NO_META, Message, canonical_json, genesis, link, seal
from fedsec.transcript.payload import BYTES, decode, encode, wire_view
from fedsec.transcript.signing import sign
from fedsec.transcript.transcript import Transcript

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

_EMPTY_META = "{}"
#: Payload bytes are packed into chunks of this size (a larger payload gets its own chunk).
_ARENA_BYTES = 16 << 20
#: The first chunk's size; each next one doubles, up to ``_ARENA_BYTES``.
_FIRST_CHUNK_BYTES = 1 << 18
#: Chunks this large are faulted into memory ahead of use.
_PREFAULT_BYTES = 4 << 20
#: Arrays up to this size are also kept as bytes of their own.
_SMALL_BYTES = 4096


def _touch(chunk: np.ndarray) -> None:
    """Fault every page of ``chunk`` in (numpy releases the interpreter lock meanwhile)."""
    chunk[::4096] = 0


class ArrowSink:
    """Writes record batches to ``PATH.partial`` and moves the file into place on finish.

    The last batch of a finished transcript has no rows; its custom metadata
    holds the footer (status, message count, final chain value, the end record's seal). A
    file without it was cut short. The file is readable by its owner only. Writes go straight
    to the operating system (no Python-level buffer), so every written batch survives the
    process.
    """

    def __init__(self, path: str | os.PathLike[str], header_json: str,
                 version: str = fmt.FORMAT_VERSION) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.schema = fmt.schema(header_json, version)
        # owner-only, like the private store: under plain or simulation keys the payloads are
        # the parties' private values
        os.close(os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.chmod(self.partial, 0o600)
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


class _Arena:
    """Payload bytes packed one after another in large chunks.

    Consecutive payloads in one chunk form a single buffer, so a record
    batch takes them without copying. A large array is copied once, into
    the chunk, and delivered as a read-only view of it; a small one is also
    kept as its own bytes (cheaper to hash and to deliver). Chunks start
    small and double up to ``chunk_bytes``; once they are large, the next
    one is faulted into memory by a background thread while this one fills
    (a first touch of fresh memory is otherwise most of the copy's cost).
    """

    def __init__(self, chunk_bytes: int = _ARENA_BYTES, *, prefault: bool = True) -> None:
        self.chunk_bytes = chunk_bytes
        self.prefault = prefault
        self.chunk = np.empty(0, dtype=np.uint8)
        self.view = memoryview(b"")
        self.used = 0
        self._next_bytes = min(_FIRST_CHUNK_BYTES, chunk_bytes)
        self._ready: tuple[threading.Thread, np.ndarray] | None = None

    def fits(self, n: int) -> bool:
        return self.used + n <= len(self.chunk) and len(self.chunk) > 0

    def new_chunk(self, n: int) -> None:
        size = max(self._next_bytes, n)
        chunk = None
        if self._ready is not None and not self._ready[0].is_alive():  # never wait for it
            ready = self._ready[1]
            self._ready = None
            chunk = ready if len(ready) >= size else None
        self.chunk = np.empty(size, dtype=np.uint8) if chunk is None else chunk
        self.view = self.chunk.data
        self.used = 0
        self._next_bytes = min(2 * self._next_bytes, self.chunk_bytes)
        if self.prefault and self._next_bytes >= _PREFAULT_BYTES and self._ready is None:
            ready = np.empty(self._next_bytes, dtype=np.uint8)
            thread = threading.Thread(target=_touch, args=(ready,), daemon=True,
                                      name="fedsec-transcript-memory")
            thread.start()
            self._ready = (thread, ready)

    def release(self) -> None:
        """Drop the chunk prepared in advance (the run is over)."""
        if self._ready is not None:
            self._ready[0].join()
            self._ready = None

    def put(self, kind: str, dtype: str, shape: tuple[int, ...], data: np.ndarray | bytes,
            n: int) -> tuple[np.ndarray | bytes, np.ndarray | bytes]:
        """Copy ``n`` bytes in (the caller made room); returns ``(raw, delivered)``."""
        start = self.used
        self.used = end = start + n
        if isinstance(data, bytes) or n <= _SMALL_BYTES:
            raw = data if isinstance(data, bytes) else data.tobytes()
            self.view[start:end] = raw
            return raw, raw if kind == BYTES else decode(kind, dtype, shape, raw)
        slot = self.chunk[start:end]
        slot[:] = data.reshape(-1).view(np.uint8)
        slot.flags.writeable = False
        return slot, slot.view(dtype).reshape(shape)


class _DiskWriter(threading.Thread):
    """Writes built record batches in order, so disk time overlaps the run.

    It needs the interpreter lock only briefly per batch, and batches are
    large; a failure is kept and raised by the transcript writer.
    """

    def __init__(self, sink: ArrowSink) -> None:
        super().__init__(name="fedsec-transcript", daemon=True)
        self.sink = sink
        self.inbox: SimpleQueue[tuple[pa.RecordBatch, int, bytes] | None] = SimpleQueue()
        self.error: BaseException | None = None

    def run(self) -> None:
        while (item := self.inbox.get()) is not None:
            if self.error is None:
                try:
                    self.sink.write_batch(*item)
                except BaseException as error:  # raised in the recording thread
                    self.error = error


class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Payloads are copied once, into large chunks shared with the file's
    batches; a background thread writes the batches, so disk time overlaps
    the protocol's own work. Batches are flushed every ``flush_rows``
    messages, every ``flush_bytes`` payload bytes or every
    ``flush_seconds`` seconds, whichever comes first, so a run that dies
    loses at most that much (plus the batch being written). While the run is
    open the file is ``PATH.partial``; :meth:`close` writes the footer and
    moves it into place. A run that dies leaves ``PATH.partial`` with a
    readable prefix.

    Parameters
    ----------
    header : Mapping
        JSON-able facts about the run (protocol, parameters, parties, public
        parameters). Covered by the integrity chain.
    path : path-like, optional
        Where the finished transcript goes; ``None`` keeps it in memory only.
    sign_key : Ed25519PrivateKey, optional
        Signs the end record (:mod:`fedsec.transcript.signing`).
    prefault : bool
        Let a helper thread fault the next memory chunk in ahead of need (faster
        on an idle core; off where every core is busy already, as in an audit's
        worker processes).

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
        prefault: bool = True, sign_key: Ed25519PrivateKey | None = None,
    ) -> None:
        self._sign_key = sign_key
        self.header = dict(header)
        self._header_json = canonical_json(self.header)
        self._head = genesis(self._header_json)
        self._messages: list[Message] = []
        self._arena = _Arena(prefault=prefault)
        self._pending: list[Message] = []
        self._pending_start = 0  # where the pending payloads start in the arena's chunk
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._start = time.perf_counter()
        self._last_flush = self._start
        self._transcript: Transcript | None = None
        self._sink = None if path is None else ArrowSink(path, self._header_json)
        self._disk: _DiskWriter | None = None
        if self._sink is not None:
            self._disk = _DiskWriter(self._sink)
            self._disk.start()
            # a writer dropped without close() still lets its thread end
            weakref.finalize(self, self._disk.inbox.put, None)

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
    ) -> np.ndarray | bytes:
        """Append one message and return its payload as the receiver gets it.

        Arrays arrive as read-only copies of the recorded wire bytes. Names
        are not checked here (the network checks them once at its boundary).
        ``size`` overrides the bytes counted on the wire, for key material
        recorded only by fingerprint; by default it is the payload length.
        """
        if self._transcript is not None:
            raise TranscriptError("This transcript is closed; start a new run to record more.")
        if self._disk is not None and self._disk.error is not None:
            raise self._failed()
        kind, dtype, shape, data = wire_view(payload)
        n = len(data) if isinstance(data, bytes) else data.nbytes
        arena = self._arena
        if not arena.fits(n):
            if self._pending:  # a batch's payloads stay in one chunk
                self._write_pending()
            arena.new_chunk(n)
            self._pending_start = 0
        raw, delivered = arena.put(kind, dtype, shape, data, n)
        if meta:
            meta_json = canonical_json(meta)
        else:
            meta, meta_json = NO_META, _EMPTY_META
        seq = len(self._messages)
        wire = n if size is None else int(size)
        self._head = link(self._head, seq, round, phase, sender, receiver, tag, kind, protection,
                          key_id, dtype, shape, wire, meta_json, raw)
        now = perf_counter()
        message = Message(seq, round, phase, sender, receiver, tag, kind, protection, key_id,
                          dtype, shape, delivered, wire, meta, now - self._start,
                          crypto_seconds, self._head)
        self._messages.append(message)
        if self._sink is not None:
            self._pending.append(message)
            if (len(self._pending) >= self._flush_rows
                    or arena.used - self._pending_start >= self._flush_bytes
                    or now - self._last_flush >= self._flush_seconds):
                self._write_pending()
        return delivered

    def _write_pending(self) -> None:
        """Hand the pending messages, as one batch, to the disk thread."""
        arena, rows, disk = self._arena, self._pending, self._disk
        assert disk is not None  # only a writer streaming to a file keeps pending messages
        payloads = pa.py_buffer(arena.chunk[self._pending_start:arena.used])
        batch = _to_batch(rows, disk.sink.schema, payloads)
        disk.inbox.put((batch, rows[-1].seq + 1, rows[-1].digest))
        self._pending = []
        self._pending_start = arena.used
        self._last_flush = perf_counter()

    def flush(self) -> None:
        """Write the messages recorded so far (when streaming to a file)."""
        if self._pending:
            self._write_pending()

    def close(self, status: str = "complete", error: str | None = None) -> Transcript:
        """Finish the transcript and return it; a second call returns the same one.

        ``status`` is ``"complete"`` for a run that ended normally and
        ``"aborted"`` for one that raised (``error`` says why).

        Raises
        ------
        TranscriptError
            When writing the file failed (for example a full disk); the file
            stays ``PATH.partial`` with what was written.
        """
        if self._transcript is None:
            self._arena.release()
            footer: dict[str, Any] = {
                "status": status, "n_messages": len(self._messages), "head": self._head.hex(),
            }
            if error is not None:
                footer["error"] = error
            footer["end"] = seal(self._head, footer).hex()
            if self._sign_key is not None:
                footer.update(sign(self._sign_key, footer["end"]))
            if self._disk is not None:
                self.flush()
                self._disk.inbox.put(None)
                self._disk.join()
                if self._disk.error is not None:
                    raise self._failed()
                self._disk.sink.finish(footer)
            self._transcript = Transcript(
                header=self.header, messages=tuple(self._messages), footer=footer
            )
        return self._transcript

    def abort(self, error: BaseException) -> Transcript:
        """Close after a failure, recording the error in the footer."""
        return self.close("aborted", f"{type(error).__name__}: {error}")

    def _failed(self) -> TranscriptError:
        disk = self._disk
        assert disk is not None  # only a writer streaming to a file writes one
        error = disk.error
        failure = TranscriptError(
            f"Writing the transcript failed: {type(error).__name__}: {error}. The file "
            f"{str(disk.sink.partial)!r} holds what was written before."
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


def _to_batch(rows: Sequence[Message] | Sequence[tuple[Message, bytes]], schema: pa.Schema,
              payloads: pa.Buffer | None = None) -> pa.RecordBatch:
    """Rows as one batch; ``payloads`` holds their payload bytes back to back, else they are
    given as ``(message, raw)`` pairs and joined."""
    if not rows:
        return pa.RecordBatch.from_arrays([column([], f.type) for f in schema], schema=schema)
    if payloads is None:
        pairs = cast("Sequence[tuple[Message, bytes]]", rows)
        messages = [m for m, _ in pairs]
        raws = [raw for _, raw in pairs]
        payloads = pa.py_buffer(raws[0] if len(raws) == 1 else b"".join(raws))
        lengths = [len(raw) for raw in raws]
    else:
        messages = list(cast("Sequence[Message]", rows))
        lengths = [len(m.payload) if isinstance(m.payload, bytes) else m.payload.nbytes
                   for m in messages]
    offsets = np.zeros(len(messages) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    payload = pa.Array.from_buffers(pa.large_binary(), len(messages),
                                    [None, pa.py_buffer(offsets), payloads])
    columns: dict[str, Sequence[Any]] = dict(
        zip(Message._fields, zip(*messages, strict=True), strict=True)
    )
    columns["meta"] = [m.meta_json if m.meta else _EMPTY_META for m in messages]
    arrays = [payload if f.name == "payload" else
              column(columns[fmt.field_name(f.name)], f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
