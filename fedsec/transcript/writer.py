"""Append-only recording of messages, in memory and through to disk."""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from fedsec.cost import Tally
from fedsec.errors import TranscriptError
from fedsec.transcript.arena import Arena
from fedsec.transcript.batch_chain import BATCH_FORMATS, BatchChain
from fedsec.transcript.log import MessageLog
from fedsec.transcript.message import (
    CHAIN_FORMAT,
    Message,
    canonical_json,
    seal,
)
from fedsec.transcript.payload import ARRAY, WIRE_DTYPES, encode, wire_view
from fedsec.transcript.rows import (
    CHAIN_SCHEMA,
    EMPTY_META,
    RecordedMessages,
    Row,
    message_of,
    rows_batch,
)
from fedsec.transcript.signing import sign
from fedsec.transcript.sink import ArrowSink, DiskWriter, to_batch
from fedsec.transcript.transcript import Transcript

#: Arrays up to this size are sent as bytes of their own (cheaper to hash and deliver).
SMALL_BYTES = 4096
#: A payload this large is written in a batch of its own, straight from its own buffer.
OWN_BATCH_BYTES = 1 << 18
#: Batches of at least this many messages have their traffic counted from their columns.
COUNT_BY_COLUMNS = 64

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Messages are chained a record batch at a time (transcript format 4,
    :mod:`fedsec.transcript.batch_chain`), in memory every ``flush_rows``
    messages or ``flush_bytes`` payload bytes. Each receiver gets a payload of
    its own; for the file, a payload below ``OWN_BATCH_BYTES`` is also copied
    into large chunks shared with the file's batches (a larger one is written
    from the receiver's copy), and a background thread chains and writes the
    batches, so disk time overlaps the protocol's own work. Batches are
    flushed every ``flush_rows`` messages, every ``flush_bytes`` payload bytes
    or every ``flush_seconds`` seconds, whichever comes first, so a run that
    dies loses at most that much (plus the batch being written). While the run is
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
        self._chain = BatchChain(self._header_json, CHAIN_FORMAT)
        self._checkpoints: list[tuple[int, bytes]] = []
        # in memory only (a file-backed run keeps none): every message's row, and the
        # metadata of those that have any, by position (rows.py says why not messages)
        self._rows: list[Row] = []
        self._metas: dict[int, Mapping[str, Any]] = {}
        self._count = 0
        self._arena = Arena(prefault=prefault)
        self._pending: list[Row] = []  # recorded, not yet in a batch
        self._pending_seq = 0  # the first pending message's position
        self._shape: tuple[int, ...] = ()  # the last small array's shape
        self._pending_raw: list[Any] = []  # in memory: the payloads to chain (bytes, arrays)
        self._pending_bytes = 0
        self._pending_start = 0  # where the pending payloads start in the arena's chunk
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._start = time.perf_counter()
        self._last_flush = self._start
        self._transcript: Transcript | None = None
        self._sink = None if path is None else ArrowSink(path, self._header_json)
        #: The traffic written, counted by the disk thread as batches go to disk (a
        #: file-backed writer keeps no message to count afterwards), complete once the writer
        #: is closed; None for a writer without a file.
        self.tally: Tally | None = None if path is None else Tally()
        self._disk: DiskWriter | None = None
        if self._sink is not None and self.tally is not None:
            self._disk = DiskWriter(self._sink, self._chain, self.tally)
            self._disk.start()
            # a writer dropped without close() still lets its thread end
            weakref.finalize(self, self._disk.inbox.put, None)

    @property
    def n_messages(self) -> int:
        """How many messages have been recorded."""
        return self._count

    @property
    def messages(self) -> Sequence[Message]:
        """The messages recorded so far: kept in memory by a writer without a file; a writer
        streaming to a file keeps none once written, and reads them back when it closes
        (:attr:`Transcript.messages` of :meth:`close`)."""
        if self._sink is not None:
            raise TranscriptError("A transcript streamed to a file keeps no messages in memory; "
                                  "read them from close().messages.")
        return tuple(RecordedMessages(self._rows, self._metas))

    def record(
        self, *, round: int, phase: str, sender: str, receiver: str, tag: str, payload: Any,
        protection: str = "plain", key_id: str = "", meta: Mapping[str, Any] | None = None,
        size: int | None = None, crypto_seconds: float = 0.0,
    ) -> np.ndarray | bytes:
        """Append one message and return its payload as the receiver gets it.

        Arrays arrive as read-only copies of the recorded wire bytes, bytes as they are (they
        cannot change). Names are not checked here (the network checks them once at its
        boundary). ``size`` overrides the bytes counted on the wire, for key material
        recorded only by fingerprint; by default it is the payload length.
        """
        if self._transcript is not None:
            raise TranscriptError("This transcript is closed; start a new run to record more.")
        if self._disk is not None and self._disk.error is not None:
            raise self._failed()
        if (type(payload) is np.ndarray and payload.nbytes <= SMALL_BYTES
                and (dtype := WIRE_DTYPES.get(payload.dtype)) is not None):
            # the common case, inline: a small array whose bytes are the wire bytes
            kind, shape = ARRAY, payload.shape
            if shape == self._shape:  # the previous message's, kept: the new tuple is freed
                shape = self._shape  # at once, so the garbage collector counts one fewer
            else:
                self._shape = shape
            raw: bytes | np.ndarray = payload.tobytes()  # C order, whatever the array's own
            delivered: np.ndarray | bytes = (  # read-only: bytes cannot change
                np.frombuffer(raw, payload.dtype) if len(shape) == 1
                else np.ndarray(shape, payload.dtype, raw))
        else:
            kind, dtype, shape, data = wire_view(payload)
            raw, delivered = _delivered(dtype, shape, data)
        n = len(raw)
        seq = self._count
        self._count = seq + 1
        now = perf_counter()
        row = (round, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape,
               n if size is None else int(size), canonical_json(meta) if meta else EMPTY_META,
               now - self._start, crypto_seconds, delivered, n)
        if self._disk is None:
            self._rows.append(row)
            if meta:
                self._metas[seq] = meta
            self._pending.append(row)
            self._pending_raw.append(raw)
            self._pending_bytes += n
            if len(self._pending) >= self._flush_rows or self._pending_bytes >= self._flush_bytes:
                self._chain_pending()
        elif n >= OWN_BATCH_BYTES:  # written from its own buffer, in a batch of its own
            self.flush()
            self._send([row], pa.py_buffer(raw))
        else:
            arena = self._arena
            if not arena.put(raw, n):
                self.flush()  # a batch's payloads stay in one chunk
                arena.new_chunk(n)
                self._pending_start = 0
                arena.put(raw, n)
            self._pending.append(row)
            if (len(self._pending) >= self._flush_rows
                    or arena.used - self._pending_start >= self._flush_bytes
                    or now - self._last_flush >= self._flush_seconds):
                self._write_pending()
        return delivered

    def _write_pending(self) -> None:
        """Hand the pending messages, as one batch, to the disk thread."""
        arena = self._arena
        self._send(self._pending, pa.py_buffer(arena.chunk[self._pending_start:arena.used]))
        self._pending = []
        self._pending_start = arena.used

    def _chain_pending(self) -> None:
        """Chain the pending messages of a writer without a file, as one batch."""
        self._chain.add(rows_batch(self._pending, CHAIN_SCHEMA, None, self._pending_seq),
                        self._pending_raw)
        self._checkpoints.append((self._chain.n, self._chain.head()))
        self._pending, self._pending_raw = [], []
        self._pending_seq = self._count
        self._pending_bytes = 0

    def _send(self, rows: Sequence[Row], payloads: pa.Buffer) -> None:
        """Build the batch of ``rows`` (the next to write) and hand it to the disk thread."""
        disk = self._disk
        assert disk is not None  # only a writer streaming to a file sends batches
        first = self._pending_seq
        self._pending_seq = first + len(rows)
        batch = rows_batch(rows, disk.sink.schema, payloads, first)
        # chained, written and counted by the disk thread (a batch of a few rows, as a large
        # payload has, is counted by its messages: counting by columns costs more there)
        disk.submit(batch, payloads.size, None if len(rows) >= COUNT_BY_COLUMNS else
                    [message_of(first + i, row) for i, row in enumerate(rows)])
        self._last_flush = perf_counter()

    def flush(self) -> None:
        """Write the messages recorded so far (when streaming to a file; in memory, chain
        them)."""
        if not self._pending:
            return
        if self._disk is None:
            self._chain_pending()
        else:
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
            self.flush()
            disk = self._disk
            if disk is not None:  # every batch chained and written first
                disk.inbox.put(None)
                disk.join()
                if disk.error is not None:
                    raise self._failed()
                self._checkpoints = disk.checkpoints
            head = self._chain.head()
            footer: dict[str, Any] = {
                "status": status, "n_messages": self._count, "head": head.hex(),
            }
            if error is not None:
                footer["error"] = error
            footer["end"] = seal(head, footer).hex()
            if self._sign_key is not None:
                footer.update(sign(self._sign_key, footer, header=self.header,
                                   version=CHAIN_FORMAT))
            if disk is not None:
                disk.sink.finish(footer)
                messages: Sequence[Message] = MessageLog(disk.sink.path, self._count)
            else:
                messages = RecordedMessages(self._rows, self._metas)
            self._transcript = Transcript(header=self.header, messages=messages, footer=footer,
                                          checkpoints=tuple(self._checkpoints))
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


def _delivered(dtype: str, shape: tuple[int, ...], data: np.ndarray | bytes
               ) -> tuple[bytes | np.ndarray, np.ndarray | bytes]:
    """The wire bytes to chain and write (bytes, or a read-only uint8 array) and the payload
    the receiver gets, which is its own: no later change by the sender reaches it, and no
    buffer of the writer is held by it. An array is copied once."""
    if isinstance(data, bytes):
        return data, data
    if data.nbytes <= SMALL_BYTES:
        raw = data.tobytes()
        return raw, np.frombuffer(raw, dtype=data.dtype).reshape(shape)  # read-only
    own = np.empty(data.nbytes, dtype=np.uint8)
    own[:] = data.reshape(-1).view(np.uint8)
    own.flags.writeable = False
    return own, own.view(dtype).reshape(shape)


def write_transcript(transcript: Transcript, path: str | os.PathLike[str]) -> None:
    """Write a transcript to ``path`` atomically; :func:`read_transcript` gives it back exactly."""
    version = transcript.format_version
    header_json = canonical_json(dict(transcript.header))
    sink = ArrowSink(path, header_json, version)
    chain = BatchChain(header_json, version) if version in BATCH_FORMATS else None

    def write(rows: list[tuple[Message, bytes]]) -> None:
        batch = to_batch(rows, sink.schema)
        if chain is None:  # every message carries its chain value
            sink.write_batch(batch, rows[-1][0].seq + 1, rows[-1][0].digest)
            return
        chain.add(batch)
        sink.write_batch(batch, chain.n, chain.head())

    try:
        rows: list[tuple[Message, bytes]] = []
        for message in transcript.messages:
            rows.append((message, encode(message.payload)[3]))
            if len(rows) >= 8192:
                write(rows)
                rows = []
        if rows:
            write(rows)
        sink.finish(transcript.footer or {"status": "unknown"})
    except BaseException:
        sink.discard()
        raise
