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
from fedsec.transcript.batch_chain import FEED_ALONE_BYTES, BatchChain
from fedsec.transcript.log import MessageLog
from fedsec.transcript.message import (
    CHAIN_FORMAT,
    Message,
    canonical_json,
    seal,
)
from fedsec.transcript.payload import ARRAY, WIRE_DTYPES, wire_view
from fedsec.transcript.rows import (
    CHAIN_SCHEMA,
    EMPTY_META,
    HASHED_SCHEMA,
    PAYLOAD_BYTES,
    RecordedMessages,
    Row,
    flat_batch,
    rows_batch,
)
from fedsec.transcript.signing import sign
from fedsec.transcript.sink import ArrowSink, DiskWriter
from fedsec.transcript.traffic import count_batch
from fedsec.transcript.transcript import Transcript

#: Arrays up to this size are sent as bytes of their own (cheaper to hash and deliver).
SMALL_BYTES = 4096
#: A payload this large is written in a batch of its own, straight from its own buffer.
OWN_BATCH_BYTES = 1 << 18
#: An in-memory transcript's traffic is counted this many rows at a time.
COUNT_ROWS = 8192
#: An in-memory transcript hashes its payloads joined in runs of about this many bytes.
_RUN_BYTES = 1 << 20

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

class TranscriptWriter:
    """Records messages in order, chains them, and streams them to a file.

    Messages are chained a record batch at a time (transcript format 4,
    :mod:`fedsec.transcript.batch_chain`), in memory every ``flush_rows``
    messages or ``flush_bytes`` payload bytes, its payloads hashed as they are
    recorded, joined about a megabyte at a time (one of a megabyte or more where
    it lies). Each receiver gets a payload of its own. A batch's rows wait as their
    fields back to back in one list, each column a slice of it (no transposition
    of tuples). For a file, the recording
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
        # the rows recorded, not yet in a batch: their fields back to back, in one list
        self._pending: list[Any] = []
        self._pending_seq = 0  # the first pending message's position
        self._flush_at = flush_rows - 1  # the position of the message that fills a batch
        self._shape: tuple[int, ...] = ()  # the last small array's shape
        self._pending_raw: list[bytes] = []  # their wire bytes
        self._pending_bytes = 0
        # in memory, the pending payloads not hashed yet: the small ones joined (the last
        # ones), the larger ones and the small ones before them in order (the run)
        self._joined = bytearray()
        self._run: list[bytes | bytearray] = []
        self._feed_at = min(_RUN_BYTES, flush_bytes)
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
        disk = self._disk
        if disk is not None and disk.error is not None:
            raise self._failed()
        if (type(payload) is np.ndarray and payload.nbytes <= SMALL_BYTES
                and (dtype := WIRE_DTYPES.get(wire_type := payload.dtype)) is not None):
            # the common case, inline: a small array whose bytes are the wire bytes
            kind, shape = ARRAY, payload.shape
            if shape == self._shape:  # the previous message's, kept: the new tuple is freed
                shape = self._shape  # at once, so the garbage collector counts one fewer
            else:
                self._shape = shape
            raw = payload.tobytes()  # C order, whatever the array's own
            delivered: np.ndarray | bytes = (  # read-only: bytes cannot change
                np.frombuffer(raw, wire_type) if len(shape) == 1
                else np.ndarray(shape, wire_type, raw))
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
        if disk is None:  # in memory: chained here, every flush_rows or flush_bytes
            self._rows.append(row)
            if meta:
                self._metas[seq] = meta
            pending = self._pending
            pending += row  # (its fields, appended in one C call: batches slice columns)
            if n <= SMALL_BYTES:  # copied after the small payloads before it
                joined = self._joined
                joined += raw
            else:
                self._add_large(raw)
            self._pending_bytes = pending_bytes = self._pending_bytes + n
            if seq >= self._flush_at or pending_bytes >= self._feed_at:
                self._fed(pending_bytes)
            return delivered
        if n >= OWN_BATCH_BYTES:  # chained and written from its own buffer, a batch of its own
            self.flush()
            self._submit(list(row), [raw], n)
            return delivered
        left = self._chunk_left - n
        if left < 0:  # a batch's payloads fill one chunk at most
            self.flush()
            left = self._plan.new_chunk(n) - n
        self._chunk_left = left
        pending = self._pending
        pending += row  # (its fields, appended in one C call: the disk thread slices columns)
        self._pending_raw.append(raw)
        self._pending_bytes += n
        if seq >= self._flush_at or self._pending_bytes >= self._flush_bytes or (
                now >= self._flush_due):
            self.flush()
        return delivered

    def _add_large(self, raw: bytes) -> None:
        """In memory: keep a payload of more than ``SMALL_BYTES`` for the next run hashed
        (not copied into the small ones' buffer, which would grow by copies), or hash one of
        ``FEED_ALONE_BYTES`` or more at once, where it lies, after those before it."""
        if self._joined:
            self._run.append(self._joined)
            self._joined = bytearray()
        if len(raw) < FEED_ALONE_BYTES:
            self._run.append(raw)
            return
        self._feed_run()
        self._chain.feed_payloads(raw)

    def _feed_run(self) -> None:
        """In memory: hash the payloads not hashed yet (the run, then the small ones joined
        since), joined, in one call."""
        run, joined = self._run, self._joined
        if joined:
            run.append(joined)
        if run:
            self._chain.feed_payloads(run[0] if len(run) == 1 else b"".join(run))
            self._run = []
        self._joined = bytearray()

    def _fed(self, pending_bytes: int) -> None:
        """In memory, when a batch may be due or a run of payloads joined: chain the batch
        (every ``flush_rows`` messages or ``flush_bytes`` bytes), or hash the run."""
        if self._count - self._pending_seq >= self._flush_rows or (
                pending_bytes >= self._flush_bytes):
            self.flush()
            return
        self._feed_run()
        self._feed_at = min(pending_bytes + _RUN_BYTES, self._flush_bytes)

    def _submit(self, fields: list[Any], raws: list[bytes], n_bytes: int) -> None:
        """Hand the next rows (``fields``: theirs back to back, in one list) with their
        payloads ``raws`` to the disk thread, which chains and writes them."""
        assert self._disk is not None  # (a transcript in memory is chained by flush)
        first = self._pending_seq
        self._pending_seq = first + len(raws)
        self._flush_at = self._pending_seq + self._flush_rows - 1  # (the row that fills one)
        self._disk.submit(fields, raws, first, n_bytes)
        self._flush_due = perf_counter() + self._flush_seconds

    def flush(self) -> None:
        """Chain the messages recorded so far as one batch: here, for a transcript kept in
        memory (their payloads hashed as they were recorded, joined a run at a time, the lock
        released meanwhile), or in the background thread that also writes them to the file."""
        if not self._pending:
            return
        fields, self._pending = self._pending, []
        if self._disk is not None:
            self._submit(fields, self._pending_raw, self._pending_bytes)
            self._pending_raw = []
            self._pending_bytes = 0
            return
        chain, first = self._chain, self._pending_seq
        n = self._count - first
        self._feed_run()
        lengths = np.fromiter(fields[PAYLOAD_BYTES::len(fields) // n], dtype=np.int64, count=n)
        chain.add(flat_batch(fields, n, HASHED_SCHEMA, None, first), fed_lengths=lengths)
        self._checkpoints.append((chain.n, chain.head()))
        self._pending_seq = first + n
        self._flush_at = first + n + self._flush_rows - 1  # (the row that fills one)
        self._pending_bytes = 0
        self._feed_at = min(_RUN_BYTES, self._flush_bytes)

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
               ) -> tuple[bytes, np.ndarray | bytes]:
    """The wire bytes to chain and write and the payload the receiver gets, which is its own:
    no later change by the sender reaches it, and no buffer of the writer is held by it. An
    array is copied once, into bytes the delivered array reads (read-only): the disk thread
    joins a batch's bytes with ``bytes.join``, which leaves the interpreter lock to the run
    while it copies (it keeps it for any other buffer)."""
    if isinstance(data, bytes):
        return data, data
    raw = data.tobytes()
    return raw, np.frombuffer(raw, dtype=data.dtype).reshape(shape)
