"""The messages of a transcript file held as its checked record batches, built when read.

:func:`~fedsec.transcript.read_transcript` keeps the file's record batches (memory-mapped, each
checked as it was read) rather than a Python object per message: a :class:`ColumnMessages` is
a sequence of :class:`~fedsec.transcript.Message` that builds each message when it is read, its
payload a read-only view of the file's bytes (no copy). What needs no message is answered from
the columns at once: an adversary's view is a selection of rows (:meth:`~ColumnMessages.observed`
by :func:`fedsec.views.build_view`), :meth:`~ColumnMessages.select` finds messages by field
values, and a transcript's chain is checked from the batches as the file holds them
(:meth:`~ColumnMessages.chain_into`), with the verdict checking the messages would give.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
import pyarrow as pa

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.batch_check import distinct, offsets
from fedsec.transcript.batch_fields import meta_of, payload_values
from fedsec.transcript.chain_check import BatchChainCheck, ChainCheck
from fedsec.transcript.columns import numbers
from fedsec.transcript.message import NO_DIGEST, Message
from fedsec.transcript.payload import ARRAY, decode

#: Message fields held as strings and as integers: what :meth:`ColumnMessages.select` compares
#: in the columns.
_STRINGS = frozenset({"phase", "sender", "receiver", "tag", "kind", "protection", "key_id",
                      "dtype"})
_INTEGERS = frozenset({"seq", "round", "size"})
#: Messages built at a time when one is read by position.
_BLOCK = 512
#: Up to this many (sender, receiver) pairs in a batch, observed links are found by counting.
_FEW_LINKS = 1 << 16


class ColumnMessages(Sequence[Message]):
    """Messages held as record batches of a transcript file of format ``version``, each batch
    checked as the reader checks it (:func:`~fedsec.transcript.batch_check.check_batch`).

    ``as_written``: every batch has no missing value and canonical metadata, so its messages
    written back give the same bytes (the reader's verdict on each batch). A selection
    (:meth:`observed`) keeps the batches and the positions of its rows in them.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from fedsec.transcript import TranscriptWriter, read_transcript
    >>> path = tempfile.mkdtemp() + "/t.arrow"
    >>> w = TranscriptWriter({"parties": {"a": "client", "b": "server"}}, path)
    >>> for i in range(3):
    ...     _ = w.record(round=i, phase="main", sender="a", receiver="b", tag="x",
    ...                  payload=np.full(2, float(i)))
    >>> _ = w.close()
    >>> messages = read_transcript(path).messages
    >>> type(messages).__name__, len(messages), messages[-1].payload.tolist()
    ('ColumnMessages', 3, [2.0, 2.0])
    >>> [m.seq for m in messages.select(round=1)]
    [1]
    """

    def __init__(self, batches: Sequence[pa.RecordBatch], version: str = fmt.FORMAT_VERSION,
                 *, as_written: bool = False) -> None:
        self.version = version
        self.as_written = as_written
        self._batches = tuple(b for b in batches if b.num_rows)
        self._rows: tuple[np.ndarray | None, ...] = (None,) * len(self._batches)
        self._renamed: Mapping[str, str] = {}
        self._column = {fmt.field_name(name): i
                        for i, name in enumerate(fmt.column_names(version))}
        # each batch's distinct names per string column, shared with every selection of it
        self._codes: dict[tuple[int, str], tuple[list[Any], np.ndarray]] = {}
        self._cached: tuple[tuple[int, int], list[Message]] | None = None
        self._starts = self._counted()

    @property
    def whole(self) -> bool:
        """Whether these are every message of the batches, as recorded (no selection, no
        tag renamed)."""
        return all(rows is None for rows in self._rows) and not self._renamed

    def __len__(self) -> int:
        return self._starts[-1]

    def __iter__(self) -> Iterator[Message]:
        for at, rows in enumerate(self._rows):
            if rows is None or len(rows):
                yield from self._built(at, rows)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):  # one pass, not one search per message
            start, stop, step = index.indices(len(self))
            if step < 0:
                return tuple(self[i] for i in range(start, stop, step))
            return tuple(itertools.islice(iter(self), start, max(start, stop), step))
        n = len(self)
        position = index + n if index < 0 else index
        if not 0 <= position < n:
            raise IndexError(f"message {index} is not in these {n} messages")
        at = bisect.bisect_right(self._starts, position) - 1
        block, offset = divmod(position - self._starts[at], _BLOCK)
        if self._cached is None or self._cached[0] != (at, block):
            picked = self._positions(at)[block * _BLOCK:(block + 1) * _BLOCK]
            self._cached = ((at, block), self._built(at, picked))
        return self._cached[1][offset]

    def __repr__(self) -> str:
        return f"ColumnMessages({len(self)} messages in {len(self._batches)} record batches)"

    def observed(self, observes: Callable[[str, str], bool],
                 renamed: Mapping[str, str] | None = None) -> ColumnMessages:
        """The messages on links where ``observes(sender, receiver)`` holds, tags in
        ``renamed`` shown under their new name: a selection of these rows, nothing copied.
        ``observes`` is asked once per distinct link of each batch."""
        rows = []
        for at in range(len(self._batches)):
            senders, sender = self._distinct(at, "sender")
            receivers, receiver = self._distinct(at, "receiver")
            picked = self._rows[at]
            link = sender.astype(np.int64) * len(receivers) + receiver
            if picked is not None:
                link = link[picked]
            keep = _seen(link, senders, receivers, observes)
            if picked is None:
                rows.append(None if keep.all() else np.flatnonzero(keep))
            else:
                rows.append(picked[keep])
        return self._derived(tuple(rows), {**self._renamed, **(renamed or {})})

    def select(self, **where: Any) -> list[Message]:
        """The messages whose fields equal the given values, e.g. ``select(tag="x")``, in
        order: names and integers are compared in the columns (only the messages found are
        built), any other field on the messages."""
        found = self._found(where)
        if found is None:
            return [m for m in self if all(getattr(m, k) == v for k, v in where.items())]
        return [m for at, rows in enumerate(found) if len(rows) for m in self._built(at, rows)]

    def tags(self) -> frozenset[str]:
        """The tags of these messages (renamed ones under their new name)."""
        tags: set[str] = set()
        for at in range(len(self._batches)):
            names, codes = self._distinct(at, "tag")
            picked = self._rows[at]
            used = np.flatnonzero(np.bincount(codes if picked is None else codes[picked],
                                              minlength=len(names)))
            tags.update(self._renamed.get(names[i], names[i]) for i in used.tolist())
        return frozenset(tags)

    def chain_into(self, chain: ChainCheck, checkpoints: Sequence[tuple[int, bytes]] = (),
                   chunk: int = 8192) -> bool | None:
        """Feed ``chain`` from the batches as ``chain.add_messages(self, chunk, checkpoints)``
        would from the messages, with the same result, problems and first bad message (the
        same parts of the same bytes, compared at the same checkpoints), without building a
        message; None (``chain`` untouched) when the batches cannot stand in for the messages:
        a selection, another format, or batches not :attr:`as_written`."""
        if not (self.whole and self.as_written and chain.version == self.version):
            return None
        if isinstance(chain, BatchChainCheck):
            return _feed_parts(chain, self._batches, checkpoints, chunk)
        return all(chain.add_columns(_chained(batch)) for batch in self._batches)

    def _found(self, where: Mapping[str, Any]) -> list[np.ndarray] | None:
        """Per batch, the rows that match ``where``; None when a condition is not one the
        columns answer as comparing the messages would."""
        if not all((k in _STRINGS and type(v) is str) or (k in _INTEGERS and type(v) is int)
                   for k, v in where.items()):
            return None
        found = []
        for at, batch in enumerate(self._batches):
            rows = self._positions(at)
            for field, value in where.items():
                if field in _STRINGS:
                    names, codes = self._distinct(at, field)
                    wanted = [i for i, name in enumerate(names)
                              if (self._renamed.get(name, name) if field == "tag" else name)
                              == value]
                    rows = rows[np.isin(codes[rows], wanted)]
                else:
                    column = batch.column(self._column[field])
                    if column.null_count:
                        return None
                    values = numbers(column)
                    limits = np.iinfo(values.dtype)
                    inside = limits.min <= value <= limits.max
                    rows = rows[values[rows] == value] if inside else rows[:0]
            found.append(rows)
        return found

    def _built(self, at: int, rows: np.ndarray | None) -> list[Message]:
        """The messages at ``rows`` of batch ``at`` (None: all of them)."""
        batch = self._batches[at]
        indices = None if rows is None else pa.Array.from_buffers(
            pa.int64(), len(rows), [None, pa.py_buffer(np.ascontiguousarray(rows, np.int64))])

        def values(field: str) -> list[Any]:
            column = batch.column(self._column[field])
            return (column if indices is None else column.take(indices)).to_pylist()

        kinds, dtypes, shapes = values("kind"), values("dtype"), values("shape")
        payloads = _payloads(batch.column(self._column["payload"]), rows, kinds, dtypes, shapes)
        renamed = self._renamed
        tags = values("tag")
        if renamed:
            tags = [renamed.get(tag, tag) for tag in tags]
        seqs = values("seq")
        digests = values("digest") if "digest" in self._column else [NO_DIGEST] * len(seqs)
        return [Message(seq, round_, phase, sender, receiver, tag, kind, protection, key_id,
                        dtype, tuple(shape), payload, size, meta_of(meta), elapsed, crypto,
                        digest)
                for (seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype,
                     shape, payload, size, meta, elapsed, crypto, digest) in zip(
                    seqs, values("round"), values("phase"), values("sender"),
                    values("receiver"), tags, kinds, values("protection"), values("key_id"),
                    dtypes, shapes, payloads, values("size"), values("meta"),
                    values("elapsed"), values("crypto_seconds"), digests, strict=True)]

    def _positions(self, at: int) -> np.ndarray:
        rows = self._rows[at]
        return np.arange(self._batches[at].num_rows) if rows is None else rows

    def _distinct(self, at: int, field: str) -> tuple[list[Any], np.ndarray]:
        key = (at, field)
        if key not in self._codes:
            self._codes[key] = distinct(self._batches[at].column(self._column[field]))
        return self._codes[key]

    def _counted(self) -> list[int]:
        counts = [b.num_rows if rows is None else len(rows)
                  for b, rows in zip(self._batches, self._rows, strict=True)]
        return [0, *itertools.accumulate(counts)]

    def _derived(self, rows: tuple[np.ndarray | None, ...],
                 renamed: Mapping[str, str]) -> ColumnMessages:
        other = object.__new__(ColumnMessages)
        other.__dict__.update(self.__dict__)
        other._rows, other._renamed, other._cached = rows, dict(renamed), None
        other._starts = other._counted()
        return other


def _seen(link: np.ndarray, senders: list[Any], receivers: list[Any],
          observes: Callable[[str, str], bool]) -> np.ndarray:
    """Whether each row's link (``sender * len(receivers) + receiver``, indices among the
    names given) is observed, asking ``observes`` once per link present."""
    n_links = len(senders) * len(receivers)

    def answers(links: np.ndarray) -> list[bool]:
        return [observes(senders[i // len(receivers)], receivers[i % len(receivers)])
                for i in links.tolist()]

    if n_links > _FEW_LINKS:  # many names: the links present found by sorting
        present, which = np.unique(link, return_inverse=True)
        return np.array(answers(present), dtype=bool)[which]
    present = np.flatnonzero(np.bincount(link, minlength=n_links))
    seen = np.zeros(n_links, dtype=bool)
    seen[present] = answers(present)
    return seen[link]


def _payloads(column: pa.Array, rows: np.ndarray | None, kinds: list[str], dtypes: list[str],
              shapes: list[list[int]]) -> list[np.ndarray | bytes]:
    """The payloads at ``rows`` of a checked payload column, decoded as
    :func:`~fedsec.transcript.payload.decode` decodes them: arrays are read-only views of its
    data buffer (no copy), bytes a copy."""
    bounds = offsets(column)
    starts = (bounds[:-1] if rows is None else bounds[rows]).tolist()
    ends = (bounds[1:] if rows is None else bounds[rows + 1]).tolist()
    buffer = column.buffers()[2]
    data = memoryview(b"" if buffer is None else buffer).toreadonly()
    types: dict[str, np.dtype] = {}
    out: list[np.ndarray | bytes] = []
    for kind, dtype, shape, start, end in zip(kinds, dtypes, shapes, starts, ends, strict=True):
        if kind != ARRAY:
            out.append(decode(kind, dtype, tuple(shape), data[start:end]))
            continue
        type_ = types.get(dtype)
        if type_ is None:
            type_ = types[dtype] = np.dtype(dtype)
        n = (end - start) // type_.itemsize
        # (a view at an offset, one call: as decode's view of the slice, bit for bit)
        array = np.frombuffer(data, type_, n, start) if n else np.frombuffer(
            data[start:end], type_)
        out.append(array if len(shape) == 1 else array.reshape(shape))
    return out


def _chained(batch: pa.RecordBatch) -> dict[str, list[Any]]:
    """A batch's columns as :meth:`ChainCheck.add_columns` takes them (formats 1 to 3)."""
    return {fmt.field_name(name): (payload_values(batch.column(i)) if name == "payload"
                                   else batch.column(i).to_pylist())
            for i, name in enumerate(batch.schema.names)}


def _feed_parts(chain: BatchChainCheck, batches: Sequence[pa.RecordBatch],
                checkpoints: Sequence[tuple[int, bytes]], chunk: int) -> bool:
    """:meth:`BatchChainCheck.add_messages` over the messages of ``batches``, from the batches:
    the same parts (``chunk`` messages at most, cut at the checkpoints), each checked against
    the checkpoint at its end."""
    marks = dict(checkpoints)
    cuts = sorted(marks)
    left = deque(batches)
    while left:
        after = bisect.bisect_right(cuts, chain.n)
        size = min(chunk, cuts[after] - chain.n) if after < len(cuts) else chunk
        part: list[pa.RecordBatch] = []
        rows = 0
        while left and rows < size:
            batch = left.popleft()
            taken = min(size - rows, batch.num_rows)
            part.append(batch.slice(0, taken))
            if taken < batch.num_rows:
                left.appendleft(batch.slice(taken))
            rows += taken
        joined = part[0] if len(part) == 1 else pa.Table.from_batches(part).combine_chunks(
        ).to_batches()[0]
        if not chain.add_batch(joined, marks.get(chain.n + rows)):
            return False
    return True
