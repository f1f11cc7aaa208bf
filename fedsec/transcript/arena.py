"""Where a batch's payload bytes go: the plan that cuts the messages into batches, and the
buffer the transcript's thread packs each batch's payloads into.

The recording thread copies nothing for the file: each receiver's payload is its own copy
(``bytes``), and those copies are what the transcript's thread packs back to back (a record
batch needs its payloads in one buffer) before hashing and writing them, with ``bytes.join``,
which lets the interpreter lock go while it copies a megabyte or more. Payloads of any other
type are copied into a buffer reused batch after batch (a batch's bytes are in the file once
it is written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

#: A batch's payloads fill at most this many bytes (but for a payload larger on its own).
ARENA_BYTES = 16 << 20
#: The first batch's payload bytes at most; each next limit doubles, up to ``ARENA_BYTES``.
_FIRST_CHUNK_BYTES = 1 << 18
#: Payloads of a batch smaller than this are joined into a new buffer (one call).
_JOIN_BYTES = 1 << 20


class ChunkPlan:
    """Cuts batches where their payloads would fill a chunk: the first holds up to 256 KiB, each
    next one twice as much, up to ``chunk_bytes`` (arithmetic only; no memory is held).

    Examples
    --------
    >>> plan = ChunkPlan(1 << 20)
    >>> plan.take(10), plan.new_chunk(10), plan.take(10), plan.used
    (False, 262144, True, 10)
    """

    def __init__(self, chunk_bytes: int = ARENA_BYTES) -> None:
        self.chunk_bytes = chunk_bytes
        self.size = 0
        self.used = 0
        self._next_bytes = min(_FIRST_CHUNK_BYTES, chunk_bytes)

    def take(self, n: int) -> bool:
        """Count ``n`` more bytes into the current chunk; False (nothing counted) when they do
        not fit, or no chunk was started (see :meth:`new_chunk`)."""
        end = self.used + n
        if end > self.size or not self.size:
            return False
        self.used = end
        return True

    def new_chunk(self, n: int) -> int:
        """Start the next chunk, large enough for ``n`` bytes; its size."""
        self.size = max(self._next_bytes, n)
        self.used = 0
        self._next_bytes = min(2 * self._next_bytes, self.chunk_bytes)
        return self.size


class Packer:
    """Packs a batch's payloads (bytes, or uint8 arrays) back to back into one buffer.

    A lone payload is used as it is; ``bytes`` and a few small payloads of other types are
    joined; larger batches of other types are copied into a buffer kept for the next batch
    (valid until :meth:`pack` is called again).

    Examples
    --------
    >>> Packer().pack([b"ab", np.frombuffer(b"c", np.uint8)], 3).to_pybytes()
    b'abc'
    """

    def __init__(self) -> None:
        self.buffer = np.empty(0, dtype=np.uint8)

    def pack(self, raws: Sequence[Any], n_bytes: int) -> pa.Buffer:
        """``raws`` (``n_bytes`` in all) as one buffer: joined when they are all ``bytes``
        (``bytes.join`` lets the interpreter lock go while it copies a megabyte or more, so
        the run goes on meanwhile; the allocator hands back the previous batch's memory), or
        a few small ones; else copied into the buffer kept for the next batch."""
        if len(raws) == 1:
            return pa.py_buffer(raws[0])
        if n_bytes < _JOIN_BYTES or all(type(raw) is bytes for raw in raws):
            return pa.py_buffer(b"".join(raws))
        if len(self.buffer) < n_bytes:
            self.buffer = np.empty(max(n_bytes, 2 * len(self.buffer)), dtype=np.uint8)
        # copied under the interpreter lock: a copy that let it go would wait to take it back
        # from the recording thread, once per payload
        view = self.buffer.data
        start = 0
        for raw in raws:
            end = start + len(raw)
            view[start:end] = raw
            start = end
        return pa.py_buffer(self.buffer[:n_bytes])
