"""A message as the writer holds it: a plain tuple of its fields, made into a record batch or
into a :class:`~fedsec.transcript.Message` when needed.

Recording a small message costs a few microseconds, and at that scale the garbage collector
matters. It stops tracking a tuple that holds only values it never tracks (numbers, strings,
bytes, tuples of those, numpy arrays), so the rows a run keeps pending, or in memory for its
whole length, cost it nothing; a :class:`Message` holds its metadata mapping, which keeps it
tracked, to be walked again at every full collection. So the writer keeps rows, a record
batch is built from their columns (:func:`rows_batch`), and an in-memory transcript builds
each message when it is read (:class:`RecordedMessages`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, overload

import numpy as np
import pyarrow as pa

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.columns import column
from fedsec.transcript.message import CHAIN_FORMAT, NO_DIGEST, NO_META, Message

#: A row: ``(round, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape,
#: size, meta_json, elapsed, crypto_seconds, payload, payload_bytes)``; ``payload`` is what
#: the receiver got, ``payload_bytes`` the length of its wire bytes, ``meta_json`` the
#: metadata as canonical JSON (``"{}"`` for none).
Row = tuple[Any, ...]
EMPTY_META = "{}"
#: The row position of the payload's length in bytes.
PAYLOAD_BYTES = 15
#: The row position of each column a row holds (the others: seq, payload, digest).
_POSITION = {name: i for i, name in enumerate(
    ("round", "phase", "sender", "receiver", "tag", "kind", "protection", "key_id", "dtype",
     "shape", "size", "meta", "elapsed", "crypto_seconds"))}


#: The columns of the current format the integrity chain covers, but for the payloads: the
#: writer of an in-memory transcript chains its payloads where they lie
#: (:meth:`~fedsec.transcript.batch_chain.BatchChain.add`).
CHAIN_SCHEMA = fmt.bare_schema(CHAIN_FORMAT)
CHAIN_SCHEMA = CHAIN_SCHEMA.remove(CHAIN_SCHEMA.get_field_index("payload"))
#: Only the columns the chain hashes, but for the payloads (no timings): what the writer of an
#: in-memory transcript builds to chain a batch.
HASHED_SCHEMA = pa.schema([f for f in CHAIN_SCHEMA
                           if fmt.field_name(f.name) not in ("elapsed", "crypto_seconds")])


def row_of(message: Message, payload_bytes: int) -> Row:
    """``message`` as a row (its wire payload ``payload_bytes`` long)."""
    m = message
    return (m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection, m.key_id,
            m.dtype, m.shape, m.size, m.meta_json if m.meta else EMPTY_META, m.elapsed,
            m.crypto_seconds, m.payload, payload_bytes)


def joined(raws: Sequence[Any]) -> pa.Buffer:
    """Wire payloads (bytes, or uint8 arrays) back to back as one buffer: a lone one as it is,
    without a copy."""
    return pa.py_buffer(raws[0] if len(raws) == 1 else b"".join(raws))


def message_of(seq: int, row: Row, meta: Mapping[str, Any] = NO_META) -> Message:
    """The message at position ``seq`` whose fields ``row`` holds (``meta`` its metadata)."""
    (round_, phase, sender, receiver, tag, kind, protection, key_id, dtype, shape, size, _,
     elapsed, crypto_seconds, payload, _) = row
    return Message(seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype,
                   shape, payload, size, meta, elapsed, crypto_seconds, NO_DIGEST)


def rows_batch(rows: Sequence[Row], schema: pa.Schema, payloads: pa.Buffer | None,
               seqs: int | Sequence[int], digests: Sequence[bytes] | None = None
               ) -> pa.RecordBatch:
    """``rows`` as one record batch of ``schema``: ``payloads`` holds their wire bytes back to
    back (None for a schema without a payload column, as :data:`CHAIN_SCHEMA`), ``seqs`` is
    the first row's position (the rest follow it) or every row's, and ``digests`` their chain
    values (formats with a digest column)."""
    # the rows' fields flattened into one list (one C loop reading each row once: zip(*rows)
    # goes through an iterator per row), each column then a strided slice of it
    return flat_batch(list(chain.from_iterable(rows)), len(rows), schema, payloads, seqs,
                      digests)


def flat_batch(flat: list[Any], n: int, schema: pa.Schema, payloads: pa.Buffer | None,
               seqs: int | Sequence[int], digests: Sequence[bytes] | None = None
               ) -> pa.RecordBatch:
    """Like :func:`rows_batch`, for ``n`` rows given back to back in one list (``flat``: the
    first row's fields, then the second's...), as the writer of a file queues them."""
    width = len(flat) // n if n else 1
    arrays = []
    for f in schema:
        name = fmt.field_name(f.name)
        if name == "payload":
            if payloads is None:
                raise ValueError("rows_batch: a schema with a payload column needs payloads")
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromiter(flat[PAYLOAD_BYTES::width], dtype=np.int64, count=n),
                      out=offsets[1:])
            arrays.append(pa.Array.from_buffers(pa.large_binary(), n,
                                                [None, pa.py_buffer(offsets), payloads]))
        elif name == "seq":
            arrays.append(pa.Array.from_buffers(f.type, n, [None, pa.py_buffer(
                np.arange(seqs, seqs + n, dtype=np.int64) if isinstance(seqs, int)
                else np.asarray(seqs, dtype=np.int64))]))
        elif name == "digest":
            arrays.append(column([NO_DIGEST] * n if digests is None else digests, f.type))
        else:
            arrays.append(column(flat[_POSITION[name]::width], f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


class RecordedMessages(Sequence[Message]):
    """The messages of a transcript recorded in memory, built from the writer's rows as they
    are read (``metas`` holds the metadata of the messages that have any, by position).

    Each read builds the message afresh (a fraction of a microsecond); its payload is the
    very value the receiver got.
    """

    def __init__(self, rows: Sequence[Row], metas: Mapping[int, Mapping[str, Any]]) -> None:
        self._rows = rows
        self._metas = metas

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Message]:
        metas = self._metas
        for seq, row in enumerate(self._rows):
            yield message_of(seq, row, metas.get(seq, NO_META))

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self._rows))))
        n = len(self._rows)
        seq = index + n if index < 0 else index
        if not 0 <= seq < n:
            raise IndexError(f"message {index} is not in this transcript of {n}")
        return message_of(seq, self._rows[seq], self._metas.get(seq, NO_META))

    def __repr__(self) -> str:
        return f"RecordedMessages({len(self._rows)} messages)"

