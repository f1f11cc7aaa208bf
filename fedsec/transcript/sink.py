"""Where a transcript's batches go: the Arrow file (``PATH.partial`` until finished) and the
thread that writes built batches while the run goes on."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from queue import SimpleQueue
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.cost import Tally
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.arena import pack
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.message import Message, canonical_json
from fedsec.transcript.rows import flat_batch, joined, message_of, row_of, rows_batch
from fedsec.transcript.traffic import count_batch

#: Payload bytes that may wait for the disk thread before the run waits for it.
IN_FLIGHT_BYTES = 64 << 20
#: Batches of at least this many messages have their traffic counted from their columns.
COUNT_BY_COLUMNS = 64
#: What the transcript's thread is given per batch: the rows' fields back to back (one
#: list: the first row's, then the second's...), payloads, first position, bytes.
Job = tuple[list[Any], Sequence[bytes], int, int]


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
        # the parties' private values. Created afresh (a run that died may have left one) and
        # appended to, never truncated: ext4 writes a truncated file back to disk when it is
        # closed (its auto_da_alloc rule), 30 ms for a 90 MB transcript.
        self.partial.unlink(missing_ok=True)
        os.close(os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.chmod(self.partial, 0o600)
        self._file = pa.OSFile(str(self.partial), "ab")
        self._writer = ipc.new_file(self._file, self.schema)

    def write_batch(self, batch: pa.RecordBatch, n_total: int, head: bytes) -> None:
        """Append a built batch; ``n_total`` and ``head`` checkpoint the chain after it."""
        self._writer.write_batch(
            batch, custom_metadata={b"n": str(n_total).encode(), b"head": head.hex().encode()}
        )

    def finish(self, footer: Mapping[str, Any]) -> None:
        """Write the end record, close the file and move it into place."""
        end = to_batch([], self.schema)
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


class DiskWriter(threading.Thread):
    """Builds, chains and writes the recorded messages' batches in order, so building, hashing
    and disk time leave the run's path (BLAKE3 and the file's writes release the interpreter
    lock).

    Each job is a batch's rows (their fields back to back in one list, as the recording
    thread appends them: no transposition of tuples here), its payloads (each receiver's own
    copy, or the bytes the sender gave), its first message's position and its payload bytes.
    The thread packs the payloads into one buffer (:func:`~fedsec.transcript.arena.pack`),
    builds the batch, feeds ``chain`` and writes the batch to ``sink``, with the chain value
    after it in the batch's metadata and on ``checkpoints``. The batch's traffic is added to
    ``tally``, from its columns or, for a batch of a few rows, from its messages (cheaper one
    by one there). A failure is kept and raised by the transcript writer. At most
    ``max_in_flight`` payload bytes wait: a run that produces faster than the disk takes waits
    (:meth:`submit`), so what the transcript holds in memory does not grow with it. The
    recording thread reads ``checkpoints`` and ``tally`` only after :meth:`join`.
    """

    def __init__(self, sink: ArrowSink, chain: BatchChain, tally: Tally,
                 max_in_flight: int | None = None) -> None:
        super().__init__(name="fedsec-transcript", daemon=True)
        self.sink = sink
        self.chain = chain
        self.tally = tally
        self.checkpoints: list[tuple[int, bytes]] = []
        self.inbox: SimpleQueue[Job | None] = SimpleQueue()
        self.error: BaseException | None = None
        self.max_in_flight = IN_FLIGHT_BYTES if max_in_flight is None else max_in_flight
        self._in_flight = 0
        self._written = threading.Condition()

    def submit(self, fields: list[Any], raws: Sequence[bytes], first: int,
               n_bytes: int) -> None:
        """Queue a batch (``n_bytes`` of payload), first waiting while too much is queued."""
        with self._written:
            while (self._in_flight and self._in_flight + n_bytes > self.max_in_flight
                   and self.error is None and self.is_alive()):
                self._written.wait(timeout=1.0)
            self._in_flight += n_bytes
        self.inbox.put((fields, raws, first, n_bytes))

    def run(self) -> None:
        while (job := self.inbox.get()) is not None:
            if self.error is None:
                try:
                    self._write(*job[:3])
                except BaseException as error:  # raised in the recording thread
                    self.error = error
            n_bytes = job[3]
            del job
            with self._written:
                self._in_flight -= n_bytes
                self._written.notify_all()

    def _write(self, fields: list[Any], raws: Sequence[bytes], first: int) -> None:
        chain = self.chain
        n = len(raws)
        batch = flat_batch(fields, n, self.sink.schema, pack(raws), first)
        chain.add(batch)
        head = chain.head()
        self.checkpoints.append((chain.n, head))
        self.sink.write_batch(batch, chain.n, head)
        if n >= COUNT_BY_COLUMNS:
            count_batch(self.tally, batch)
        elif n:
            width = len(fields) // n
            self.tally.add([message_of(first + i, tuple(fields[i * width:(i + 1) * width]))
                            for i in range(n)])


def to_batch(pairs: Sequence[tuple[Message, bytes]], schema: pa.Schema) -> pa.RecordBatch:
    """``(message, wire bytes)`` pairs as one batch of ``schema`` (their own positions, and their
    chain values where the format has a digest column)."""
    rows = [row_of(m, len(raw)) for m, raw in pairs]
    return rows_batch(rows, schema, joined([raw for _, raw in pairs]),
                      [m.seq for m, _ in pairs], [m.digest for m, _ in pairs])
