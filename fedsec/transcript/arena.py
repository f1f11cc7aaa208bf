"""Where a batch's payload bytes go: the plan that cuts the messages into batches, and the
one buffer the transcript's thread packs each batch's payloads into.

The recording thread copies nothing for the file: each receiver's payload is its own copy
(``bytes``), and those copies are what the transcript's thread packs back to back (a record
batch needs its payloads in one buffer) before hashing and writing them, with ``bytes.join``,
which lets the interpreter lock go while it copies a megabyte or more.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

#: A batch's payloads fill at most this many bytes (but for a payload larger on its own).
ARENA_BYTES = 16 << 20
#: The first batch's payload bytes at most; each next limit doubles, up to ``ARENA_BYTES``.
_FIRST_CHUNK_BYTES = 1 << 18


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


def pack(raws: Sequence[bytes]) -> pa.Buffer:
    """A batch's payloads back to back as one buffer: a lone payload as it is, more joined.

    ``bytes.join`` lets the interpreter lock go while it copies a megabyte or more (when every
    part is ``bytes``, as each receiver's copy is), so the run goes on meanwhile; the allocator
    hands back the previous batch's memory.

    Examples
    --------
    >>> pack([b"ab", b"c"]).to_pybytes()
    b'abc'
    """
    return pa.py_buffer(raws[0] if len(raws) == 1 else b"".join(raws))
