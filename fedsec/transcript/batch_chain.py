"""Format 4's integrity chain: the messages hashed column by column, a batch at a time.

Formats 1 to 3 chain every message on its own (one hash call in Python per message, and one
more per message to verify). Format 4 hashes a record batch's chained columns as Arrow holds
them, each column as one or two *streams* that run through the whole transcript:

- an integer column (``seq``, ``round``, ``wire_bytes``): its values, 8 or 4 bytes each,
  little-endian;
- a string or binary column (names, ``payload_dtype``, ``meta``, ``payload``): the values'
  byte lengths (8 bytes each), and their bytes back to back;
- ``payload_shape`` (a list of integers per message): the lists' lengths, and their values.

Each stream has its own running BLAKE3 hash, fed batch after batch. The chain value after ``n``
messages, :meth:`BatchChain.head`, hashes the value before the first message (:func:`genesis`,
bound to the header), ``n`` and every stream's hash so far. It depends on the messages only,
not on how they were cut into batches (a run flushed by the clock and its re-run give the same
value), and it commits to every chained field of every message before it: the lengths make
each stream parse one way only. The timings (``elapsed``, ``crypto_seconds``) are not chained,
as in every format.

A file records the chain value after each batch in the batch's metadata; a reader recomputes it
from the validated batch's buffers (no per-message work in Python) and stops at the first batch
whose value differs. An edit is therefore located to its batch (its first message is
``first_bad``), not to the message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
from blake3 import blake3

from fedsec.transcript.message import genesis

#: Formats whose chain is this one.
BATCH_FORMATS = frozenset({"4"})
#: The columns format 4 chains, in the order their streams are hashed.
CHAINED_COLUMNS = ("seq", "round", "phase", "sender", "receiver", "tag", "kind", "protection",
                   "key_id", "payload_dtype", "payload_shape", "wire_bytes", "meta", "payload")
#: Bytes as the chain takes them: bytes, a memoryview, or a one-dimensional uint8 array.
Buffer: TypeAlias = Any
_LABEL = b"fedsec-transcript-v%s-head\x00"
#: A payload at least this long is hashed on its own rather than joined to its neighbours.
FEED_ALONE_BYTES = 1 << 20
#: Shorter payloads are joined in runs of about this many bytes, each hashed in one call (one
#: call per payload of tens of kilobytes costs more than joining them: BLAKE3 hashes a long
#: input many chunks at a time).
_RUN_BYTES = 1 << 20
_FIXED: dict[pa.DataType, np.dtype] = {pa.int32(): np.dtype("<i4"), pa.int64(): np.dtype("<i8")}


class ChainDamage(Exception):
    """A batch whose chained columns cannot be hashed as written (a missing value)."""


class BatchChain:
    """The chain of a format-4 transcript, fed one record batch at a time.

    Examples
    --------
    >>> from fedsec.transcript import arrow_format as fmt
    >>> from fedsec.transcript.columns import column
    >>> schema = fmt.bare_schema("4")
    >>> def batch(seqs):
    ...     values = {"seq": seqs, "round": [0] * len(seqs), "payload_shape": [()] * len(seqs),
    ...               "wire_bytes": [1] * len(seqs), "payload": [b"x"] * len(seqs),
    ...               "elapsed": [0.0] * len(seqs), "crypto_seconds": [0.0] * len(seqs)}
    ...     return pa.RecordBatch.from_arrays(
    ...         [column(values.get(f.name, ["a"] * len(seqs)), f.type) for f in schema],
    ...         schema=schema)
    >>> one, two = BatchChain("{}"), BatchChain("{}")
    >>> one.add(batch([0, 1, 2]))
    >>> two.add(batch([0])); two.add(batch([1, 2]))
    >>> one.head() == two.head(), one.n
    (True, 3)
    """

    def __init__(self, header_json: str, version: str = "4") -> None:
        self.version = version
        self.n = 0
        self._start = genesis(header_json, version)
        self._label = _LABEL % version.encode()
        self._streams: list[blake3] | None = None
        # the payload bytes' stream (the last), which feed_payloads may feed ahead of add
        self._payload_stream = blake3()

    def feed_payloads(self, data: Buffer) -> None:
        """Hash the next payload bytes now, ahead of the batch that holds them, which is then
        added with ``fed_lengths`` (their lengths) instead of a payload column."""
        self._payload_stream.update(data)

    def add(self, batch: pa.RecordBatch, payloads: list[Buffer] | None = None, *,
            fed_lengths: np.ndarray | None = None) -> None:
        """Feed the next batch (validated: its offsets lie inside its buffers).

        ``payloads``, when given, are the batch's wire payloads one by one (``batch`` then
        needs no payload column): they are hashed where they lie, without first being joined
        into one buffer, and give the chain value the batch with them joined would. With
        ``fed_lengths`` instead (each payload's length in bytes), the batch's payloads were
        hashed already, back to back, by :meth:`feed_payloads`.

        Raises
        ------
        ChainDamage
            When a chained column holds a missing value (its bytes would not say so).
        """
        given = payloads if fed_lengths is None else fed_lengths
        if given is not None and len(given) != batch.num_rows:
            raise ValueError(f"{len(given)} payloads for a batch of {batch.num_rows} rows")
        parts: list[Buffer | tuple[list[Buffer], np.ndarray] | None] = []
        for name in CHAINED_COLUMNS:
            if name == "payload" and fed_lengths is not None:
                parts += [fed_lengths.astype("<i8", copy=False).tobytes(), None]
            elif name == "payload" and payloads is not None:
                lengths = np.fromiter(map(len, payloads), "<i8", len(payloads))
                parts += [lengths.tobytes(), (payloads, lengths)]
            else:
                parts += _streams(batch.column(batch.schema.get_field_index(name)), name)
        if self._streams is None:  # (the payloads' bytes are the last stream)
            self._streams = [*(blake3() for _ in parts[1:]), self._payload_stream]
        for stream, part in zip(self._streams, parts, strict=True):
            if part is None:  # fed already
                continue
            if isinstance(part, tuple):
                _feed(stream, *part)
            else:
                stream.update(part)
        self.n += batch.num_rows

    def head(self) -> bytes:
        """The chain value after the messages fed so far."""
        h = blake3(self._label + self._start + self.n.to_bytes(8, "little"))
        for stream in self._streams or ():
            h.update(stream.digest())
        return h.digest()


def _feed(stream: blake3, payloads: list[Buffer], lengths: np.ndarray) -> None:
    """Hash ``payloads`` (``lengths`` bytes long) back to back: large ones where they lie, the
    runs of shorter ones between them joined first, about ``_RUN_BYTES`` at a time."""
    start = 0
    for at in np.flatnonzero(lengths >= FEED_ALONE_BYTES).tolist():
        _feed_joined(stream, payloads, lengths, start, at)
        stream.update(payloads[at])
        start = at + 1
    _feed_joined(stream, payloads, lengths, start, len(payloads))


def _feed_joined(stream: blake3, payloads: list[Buffer], lengths: np.ndarray, start: int,
                 end: int) -> None:
    """Hash ``payloads[start:end]`` joined, in runs of about ``_RUN_BYTES``."""
    if end <= start:
        return
    ends = np.cumsum(lengths[start:end])
    cuts = np.searchsorted(ends, np.arange(_RUN_BYTES, int(ends[-1]), _RUN_BYTES), "right")
    first = start
    for cut in [*np.unique(cuts).tolist(), end - start]:
        if start + cut > first:
            stream.update(b"".join(payloads[first:start + cut]))
            first = start + cut


def _streams(array: pa.Array, name: str) -> Iterator[memoryview | bytes]:
    """The bytes ``array`` adds to its column's streams."""
    if array.null_count:
        raise ChainDamage(f"column {name} has a missing value")
    n, offset = len(array), array.offset
    fixed = _FIXED.get(array.type)
    if n == 0:  # nothing to add (an empty array may come without buffers)
        yield from [b""] * (1 if fixed is not None else 2)
        return
    if fixed is not None:
        values = array.buffers()[1]
        yield _view(values)[offset * fixed.itemsize:(offset + n) * fixed.itemsize]
        return
    if pa.types.is_list(array.type):
        bounds = _bounds(array.buffers()[1], np.dtype("<i4"), offset, n)
        child = array.values
        item = _FIXED[child.type].itemsize
        yield np.diff(bounds).astype("<i8").tobytes()
        start = child.offset + int(bounds[0])
        end = child.offset + int(bounds[-1])
        yield _view(child.buffers()[1])[start * item:end * item]
        return
    width = np.dtype("<i8") if pa.types.is_large_binary(array.type) else np.dtype("<i4")
    _, offsets, data = array.buffers()
    bounds = _bounds(offsets, width, offset, n)
    yield np.diff(bounds).astype("<i8").tobytes()
    yield _view(data)[int(bounds[0]):int(bounds[-1])]


def _bounds(buffer: pa.Buffer | None, dtype: np.dtype, offset: int, n: int) -> np.ndarray:
    view = _view(buffer)
    whole = len(view) // dtype.itemsize * dtype.itemsize  # a damaged buffer may end mid-value
    bounds = np.frombuffer(view[:whole], dtype=dtype)[offset:offset + n + 1]
    if len(bounds) != n + 1:  # validation guarantees them; refuse rather than misread
        raise ChainDamage("a column's offsets are cut short")
    return bounds


def _view(buffer: pa.Buffer | None) -> memoryview:
    return memoryview(b"") if buffer is None else memoryview(buffer)
