"""Chunks of memory that hold payload bytes until their record batch is written."""

from __future__ import annotations

import sys
import threading

import numpy as np

#: Payload bytes are packed into chunks of this size.
ARENA_BYTES = 16 << 20
#: The first chunk's size; each next one doubles, up to ``ARENA_BYTES``.
_FIRST_CHUNK_BYTES = 1 << 18
#: Chunks this large are faulted into memory ahead of use.
_PREFAULT_BYTES = 4 << 20
#: Filled chunks kept for reuse once nothing views them any more.
_RETIRED_CHUNKS = 4


def _touch(chunk: np.ndarray) -> None:
    """Fault every page of ``chunk`` in (numpy releases the interpreter lock meanwhile)."""
    chunk[::4096] = 0


class Arena:
    """Payload bytes of the messages waiting for their batch, packed one after another.

    Consecutive payloads in one chunk form a single buffer, so a record batch takes them
    without copying. Nothing delivered to a party views a chunk (receivers get payloads of
    their own), so once a chunk's batches are written it is reused: its pages are already in
    memory, where fresh memory would have to be faulted in. Chunks start small and double up
    to ``chunk_bytes``; once they are large and none can be reused, the next one is faulted in
    by a background thread while this one fills.
    """

    def __init__(self, chunk_bytes: int = ARENA_BYTES, *, prefault: bool = True) -> None:
        self.chunk_bytes = chunk_bytes
        self.prefault = prefault
        self.chunk = np.empty(0, dtype=np.uint8)
        self.view = memoryview(b"")
        self.used = 0
        self._next_bytes = min(_FIRST_CHUNK_BYTES, chunk_bytes)
        self._ready: tuple[threading.Thread, np.ndarray] | None = None
        self._retired: list[np.ndarray] = []

    def new_chunk(self, n: int) -> None:
        size = max(self._next_bytes, n)
        if len(self.chunk):
            self._retired = [self.chunk, *self._retired][:_RETIRED_CHUNKS]
        self.chunk, self.view = np.empty(0, dtype=np.uint8), memoryview(b"")
        chunk = self._recycled(size)
        if chunk is None and self._ready is not None and not self._ready[0].is_alive():
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

    def _recycled(self, size: int) -> np.ndarray | None:
        """A retired chunk of at least ``size`` bytes that nothing else holds any more (its
        batches written, no delivered payload still viewing it): its pages are already in
        memory, so reusing it saves faulting fresh ones in."""
        for i in range(len(self._retired)):
            # references: the list's and getrefcount's argument; any view of the chunk adds
            # one (numpy views refer to the array that owns the memory)
            if len(self._retired[i]) >= size and sys.getrefcount(self._retired[i]) <= 2:
                return self._retired.pop(i)
        return None

    def release(self) -> None:
        """Drop the chunk prepared in advance and the retired ones (the run is over)."""
        self._retired = []
        if self._ready is not None:
            self._ready[0].join()
            self._ready = None

    def put(self, raw: bytes | np.ndarray, n: int) -> bool:
        """Copy the ``n`` bytes of ``raw`` (bytes, or a uint8 array) in after the others; False
        (and nothing copied) when they do not fit in the chunk (see :meth:`new_chunk`)."""
        start = self.used
        end = start + n
        if end > len(self.view) or not self.view:  # (no chunk yet: not even 0 bytes fit)
            return False
        self.used = end
        if isinstance(raw, bytes):
            self.view[start:end] = raw
        else:
            self.chunk[start:end] = raw
        return True
