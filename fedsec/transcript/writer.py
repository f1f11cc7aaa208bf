"""Append-only recording of messages, in memory and through to disk."""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.cost import Tally
from fedsec.errors import TranscriptError
from fedsec.transcript.arena import ChunkPlan
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
    HASHED_SCHEMA,
    RecordedMessages,
    Row,
    rows_batch,
)
from fedsec.transcript.signing import sign
from fedsec.transcript.sink import ArrowSink, DiskWriter, to_batch
from fedsec.transcript.traffic import count_batch
from fedsec.transcript.transcript import Transcript

#: Arrays up to this size are sent as bytes of their own (cheaper to hash and deliver).
SMALL_BYTES = 4096
#: A payload this large is written in a batch of its own, straight from its own buffer.
OWN_BATCH_BYTES = 1 << 18
#: An in-memory transcript's traffic is counted this many rows at a time.
COUNT_ROWS = 8192

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Messages are chained a record batch at a time (transcript format 4,
    :mod:`fedsec.transcript.batch_chain`), in memory every ``flush_rows``
    messages or ``flush_bytes`` payload bytes, hashing the payloads where they
    lie. Each receiver gets a payload of its own. For a file, the recording
    thread only keeps that payload with the message's fields: a background
    thread builds each batch, packs its payloads into one buffer, chains it and
    writes it, so building, hashing and disk time leave the protocol's path
    (:class:`~fedsec.transcript.sink.DiskWriter`). Its batches are cut every
    ``flush_rows`` messages, every ``flush_bytes`` payload bytes, every
    ``flush_seconds`` seconds or where their payloads would fill a chunk
    (:class:`~fedsec.transcript.arena.ChunkPlan`), whichever comes first; a
    payload of ``OWN_BATCH_BYTES`` or more is a batch of its own. So a run that
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
        sign_key: Ed25519PrivateKey | None = None,
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
        self._plan = ChunkPlan()
        self._chunk_left = -1  # bytes left in the current chunk (none yet: not even 0 fit)
        self._pending: list[Row] = []  # recorded, not yet in a batch
        self._pending_seq = 0  # the first pending message's position
        self._shape: tuple[int, ...] = ()  # the last small array's shape
        self._pending_raw: list[Any] = []  # their wire bytes (bytes, read-only uint8 arrays)
        self._pending_bytes = 0
        self._flush_rows = flush_rows
        self._flush_bytes = flush_bytes
        self._flush_seconds = flush_seconds
        self._start = time.perf_counter()
        self._flush_due = self._start + flush_seconds
        self._transcript: Transcript | None = None
        self._sink = None if path is None else ArrowSink(path, self._header_json)
        # a file-backed writer keeps no message to count afterwards: its thread counts them
        self._tally: Tally | None = None
        self._disk: DiskWriter | None = None
        if self._sink is not None:
            self._tally = Tally()
            self._disk = DiskWriter(self._sink, self._chain, self._tally)
            self._disk.start()
            # a writer dropped without close() still lets its thread end
            weakref.finalize(self, self._disk.inbox.put, None)

    @property
    def tally(self) -> Tally | None:
        """The traffic recorded, complete once the writer is closed: counted by the disk
        thread as batches are written, or (in memory) from the rows kept, when first asked
        after closing."""
        if self._tally is not None:
            return self._tally
        tally = Tally()
        for at in range(0, len(self._rows), COUNT_ROWS):
            count_batch(tally, rows_batch(self._rows[at:at + COUNT_ROWS], CHAIN_SCHEMA, None, at))
        if self._transcript is not None:
            self._tally = tally
        return tally

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
        pending = self._pending
        if self._disk is None:  # in memory: chained here, every flush_rows or flush_bytes
            self._rows.append(row)
            if meta:
                self._metas[seq] = meta
            pending.append(row)
            self._pending_raw.append(raw)
            self._pending_bytes += n
            if len(pending) >= self._flush_rows or self._pending_bytes >= self._flush_bytes:
                self.flush()
            return delivered
        if n >= OWN_BATCH_BYTES:  # chained and written from its own buffer, a batch of its own
            self.flush()
            self._submit([row], [raw], n)
            return delivered
        left = self._chunk_left - n
        if left < 0:  # a batch's payloads fill one chunk at most
            self.flush()
            left = self._plan.new_chunk(n) - n
        self._chunk_left = left
        pending = self._pending  # (a new list after a flush)
        pending.append(row)
        self._pending_raw.append(raw)
        self._pending_bytes += n
        if (len(pending) >= self._flush_rows or self._pending_bytes >= self._flush_bytes
                or now >= self._flush_due):
            self.flush()
        return delivered

    def _submit(self, rows: list[Row], raws: list[Any], n_bytes: int) -> None:
        """Chain ``rows`` (the next, with their payloads): here, for a transcript kept in
        memory (its payloads hashed where they lie, the lock released meanwhile), or in the
        disk thread, which writes them too."""
        first = self._pending_seq
        self._pending_seq = first + len(rows)
        if self._disk is None:
            self._chain.add(rows_batch(rows, HASHED_SCHEMA, None, first), raws)
            self._checkpoints.append((self._chain.n, self._chain.head()))
            return
        self._disk.submit(rows, raws, first, n_bytes)
        self._flush_due = perf_counter() + self._flush_seconds

    def flush(self) -> None:
        """Hand the messages recorded so far, as one batch, to the background thread that
        chains them (and writes them, when streaming to a file)."""
        if not self._pending:
            return
        self._submit(self._pending, self._pending_raw, self._pending_bytes)
        self._pending, self._pending_raw = [], []
        self._pending_bytes = 0

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
            if self._sink is not None:
                self._sink.finish(footer)
                messages: Sequence[Message] = MessageLog(self._sink.path, self._count)
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
        assert disk is not None and self._sink is not None  # only a file-backed writer has one
        error = disk.error
        failure = TranscriptError(
            f"Writing the transcript failed: {type(error).__name__}: {error}. The file "
            f"{str(self._sink.partial)!r} holds what was written before."
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
