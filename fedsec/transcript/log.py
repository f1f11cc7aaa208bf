"""The messages of a transcript file, read back lazily: a sequence over the file's batches.

A run that streams its transcript to disk keeps no message in memory once its batch is
written; the finished transcript's messages are this sequence over the file. Each pass reads
the memory-mapped file batch by batch (every batch checked as :func:`read_transcript` checks
it), so what a pass holds is one batch of messages, and payload arrays are read-only views of
the mapped file: the operating system pages in what an attack actually reads.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

from fedsec.errors import TranscriptError
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.message import Message


class MessageLog(Sequence[Message]):
    """The first ``count`` messages of the transcript file at ``path``, in order.

    Iterating reads the file once, a batch at a time; indexing reads the batch that holds the
    message (the last batch read is kept). The file must not change while the log is in use:
    a file that no longer holds the messages raises :class:`~fedsec.errors.TranscriptError`.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from fedsec.transcript import TranscriptWriter
    >>> path = tempfile.mkdtemp() + "/t.arrow"
    >>> w = TranscriptWriter({"protocol": "demo"}, path)
    >>> for i in range(3):
    ...     _ = w.record(round=0, phase="main", sender="a", receiver="b", tag="x",
    ...                  payload=np.full(2, float(i)))
    >>> log = w.close().messages
    >>> type(log).__name__, len(log), log[-1].payload.tolist()
    ('MessageLog', 3, [2.0, 2.0])
    """

    def __init__(self, path: str | os.PathLike[str], count: int) -> None:
        self.path = Path(path)
        self._n = count
        self._starts: list[int] | None = None  # each batch's first message
        self._cached: tuple[int, list[Message]] | None = None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Message]:
        n = 0
        for batch in self._batches():
            for message in batch:
                if n >= self._n:
                    return
                yield message
                n += 1
        self._check_read(n)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):  # one pass over the file, not one read per message
            start, stop, step = index.indices(self._n)
            if step < 0:
                return [self[i] for i in range(start, stop, step)]
            return list(itertools.islice(iter(self), start, max(start, stop), step))
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"message {index} is not in this transcript of {self._n}")
        starts = self._batch_starts()
        at = bisect.bisect_right(starts, index) - 1
        if self._cached is None or self._cached[0] != at:
            self._cached = (at, self._batch(at))
        return self._cached[1][index - starts[at]]

    def __repr__(self) -> str:
        return f"MessageLog({str(self.path)!r}, {self._n} messages)"

    def columns(self) -> ColumnMessages | None:
        """The messages as the file's record batches, checked as they are read (what an
        adversary's view selects from, building no message); None when the file holds more
        messages than the run recorded."""
        from fedsec.transcript.reader import open_messages

        with open_messages(self.path) as stream:
            columns = ColumnMessages(list(stream.record_batches()), stream.version,
                                     as_written=stream.as_written)
        self._check_read(len(columns))
        return columns if len(columns) == self._n else None

    def _batches(self) -> Iterator[list[Message]]:
        from fedsec.transcript.batch_fields import messages_of
        from fedsec.transcript.reader import open_messages

        with open_messages(self.path) as stream:
            for cols in stream.column_batches():
                yield messages_of(cols)

    def _batch_starts(self) -> list[int]:
        if self._starts is None:
            from fedsec.transcript.reader import open_messages

            starts, n = [], 0
            with open_messages(self.path) as stream:
                for batch in stream.record_batches(check=False):
                    starts.append(n)
                    n += batch.num_rows
            self._check_read(n)
            self._starts = starts
        return self._starts

    def _batch(self, at: int) -> list[Message]:
        for i, batch in enumerate(self._batches()):
            if i == at:
                return batch
        raise TranscriptError(f"{str(self.path)!r} changed while it was read: batch {at} is "
                              "gone.")

    def _check_read(self, n: int) -> None:
        if n < self._n:
            raise TranscriptError(f"{str(self.path)!r} holds {n} messages where the run "
                                  f"recorded {self._n}: the file changed after the run.")
