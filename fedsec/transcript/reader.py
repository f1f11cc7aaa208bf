"""Reading transcripts back, including the readable prefix of a broken file.

Nothing in a file is trusted before it is checked: the schema (names and types), every record
batch (validated in full before a value is decoded, so a damaged offset or length cannot make
the reader read or allocate outside the file), and every decoded field (JSON, dtypes, shapes
that must account for exactly the payload's bytes). The first damaged batch or message stops
the reading; what was read before it stays, and the transcript says where the damage starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.batch_check import check_batch
from fedsec.transcript.batch_fields import (
    Columns,
    Damage,
    check_layout,
    checked_columns,
    json_object,
    messages_of,
    short,
    validated,
)
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.message import Message
from fedsec.transcript.payload import decode
from fedsec.transcript.transcript import Transcript


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Load a transcript written by fedsec.

    A file whose end was cut off (a run that died, a copy that stopped) is read up to its last
    complete batch; a damaged batch or message ends the reading there. What is missing is
    listed in ``read_problems`` and :meth:`Transcript.verify` reports it (``truncated`` when
    the file was cut, ``tampered`` at the first damaged message otherwise).

    The messages are the file's record batches, memory-mapped and checked as they are read
    (:class:`~fedsec.transcript.columnar.ColumnMessages`): each is built when it is read, its
    payload a read-only view of the file's bytes, and :meth:`Transcript.verify` checks the
    chain from the batches.

    Raises
    ------
    MissingInputError
        When ``path`` names no file.
    TranscriptError
        When the file is not a fedsec transcript at all or its header is unreadable.
    """
    with open_messages(path) as stream:
        messages = ColumnMessages(list(stream.record_batches()), stream.version,
                                  as_written=stream.as_written)
        return Transcript(header=stream.header, messages=messages, footer=stream.footer,
                          read_problems=tuple(stream.problems), format_version=stream.version,
                          damaged_at=stream.damaged_at, checkpoints=tuple(stream.checkpoints))


def read_pandas(path: str | os.PathLike[str]) -> Any:
    """The transcript at ``path`` as a pandas DataFrame, one row per message.

    Every batch is checked first (a damaged file cannot crash pandas); a cut-off or damaged
    file gives the messages before the damage. Payloads are their wire bytes:
    :func:`payload_of` decodes a row's. Columns are format 3's names in any format
    (``payload_dtype``, ``payload_shape``, ``wire_bytes``: none shadows a pandas attribute).
    A finished format 3 file is also readable with ``pandas.read_feather(path)``.
    """
    with open_messages(path) as stream:
        batches = [batch.replace_schema_metadata(None) for batch in stream.record_batches()
                   if batch.num_rows]
        table = pa.Table.from_batches(batches, schema=fmt.bare_schema(stream.version))
    old = {name: fmt.RENAMED.get(name, name) for name in table.column_names}
    return table.rename_columns([old[name] for name in table.column_names]).to_pandas()


def payload_of(row: Mapping[str, Any]) -> np.ndarray | bytes:
    """The payload of one row of :func:`read_pandas`'s frame, decoded (an array, or bytes).

    Examples
    --------
    >>> payload_of({"kind": "array", "payload_dtype": "<f8", "payload_shape": [2],
    ...             "payload": np.array([1.0, 2.0]).tobytes()}).tolist()
    [1.0, 2.0]
    """
    kind, dtype = row["kind"], row["payload_dtype"]
    shape = [int(n) for n in row["payload_shape"]]
    raw = bytes(row["payload"])
    try:
        check_layout(kind, dtype, shape, len(raw))
    except Damage as error:
        raise TranscriptError(f"This row's payload cannot be decoded: {error}.") from None
    return decode(kind, dtype, tuple(shape), raw)


def open_messages(path: str | os.PathLike[str], mapped: bool = True) -> MessageStream:
    """The transcript at ``path`` as a stream of checked messages, one batch in memory at a
    time (use as a context manager; raises like :func:`read_transcript`). ``mapped``: read
    through a memory map (payloads then stay views of the file); otherwise each batch is read
    into memory of its own, freed with it (what a single pass that keeps nothing wants: the
    process never holds more than a batch, mapped pages included)."""
    return MessageStream(Path(path), mapped)


class MessageStream:
    """A transcript file read batch by batch: ``header`` and ``version`` at once; the
    messages by iterating (once); then ``footer``, ``problems`` and ``damaged_at`` (where a
    damaged batch or message stopped the reading; None when the file was read to its end or
    merely cut off)."""

    def __init__(self, path: Path, mapped: bool = True) -> None:
        if not path.is_file():
            what = "a directory" if path.is_dir() else "no such file"
            raise MissingInputError(f"No transcript at {str(path)!r} ({what}); give the path "
                                    "of a transcript.arrow file.")
        self.path = path
        self.footer: dict[str, Any] | None = None
        self.problems: list[str] = []
        self.damaged_at: int | None = None
        self.n_read = 0
        #: whether every batch read so far was checked (:meth:`record_batches`) and holds its
        #: messages as they are written (:func:`~fedsec.transcript.batch_check.check_batch`)
        self.as_written = True
        #: ``(messages so far, chain value)`` after each batch read that records one
        self.checkpoints: list[tuple[int, bytes]] = []
        self._source = pa.memory_map(str(path)) if mapped else pa.OSFile(str(path))
        try:
            self._open()
        except BaseException:
            self._source.close()
            raise

    def _open(self) -> None:
        magic = self._source.read(len(fmt.FILE_MAGIC))
        if magic != fmt.FILE_MAGIC:
            raise TranscriptError(f"{str(self.path)!r} is not a fedsec transcript: it does not "
                                  "start with the Arrow file signature.")
        self._source.seek(0)
        self._file: ipc.RecordBatchFileReader | None = None
        try:
            self._file = ipc.open_file(self._source)
            schema = self._file.schema
        except (pa.ArrowException, OSError, ValueError):
            self._file = None
            self._source.seek(len(fmt.FILE_MAGIC))
            try:
                self._stream = ipc.open_stream(self._source)
                schema = self._stream.schema
            except (pa.ArrowException, OSError, ValueError) as error:
                raise TranscriptError(
                    f"{str(self.path)!r} is cut off or corrupt before its header ends "
                    f"({short(error)}); no message can be read.") from error
        self.header, self.version = _header(schema, self.path)
        self._same_header = self._file is None or _same_header_at_start(self._source, schema)

    @property
    def indexed(self) -> bool:
        """Whether the file's closing index was readable (else it is read as a stream)."""
        return self._file is not None

    def __enter__(self) -> MessageStream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._source.close()

    def __iter__(self) -> Iterator[Message]:
        for cols in self.column_batches():
            yield from messages_of(cols)

    def column_batches(self) -> Iterator[Columns]:
        """Each batch's checked columns (:func:`checked_columns`), in order; the fast way to
        the chain of formats 1 to 3 (:meth:`ChainCheck.add_columns`) without building
        messages."""
        for _, _, cols in self.chain_batches(decode=True):
            assert cols is not None  # decoded
            yield cols

    def record_batches(self, check: bool = True) -> Iterator[pa.RecordBatch]:
        """Each checked batch as Arrow holds it (payloads as wire bytes), its messages checked
        as :meth:`column_batches` checks them but from the columns at once
        (:func:`~fedsec.transcript.batch_check.check_batch`); with ``check=False`` validated
        only."""
        for batch, _, _ in self.chain_batches(check=check):
            yield batch

    def chain_batches(self, decode: bool = False, check: bool = False
                      ) -> Iterator[tuple[pa.RecordBatch, bytes | None, Columns | None]]:
        """Each validated batch with the chain value its metadata records after it (None when
        it records none or an unreadable one) and, with ``decode``, its checked columns: what
        a format-4 chain is checked from (:meth:`BatchChainCheck.add_batch`). With ``check``
        (or ``decode``) its messages are checked too, and a batch whose messages cannot be
        read ends the reading."""
        if not self._same_header:
            self._damaged("the run header at the start of the file differs from the copy in "
                          "the file's index (a stream reader would see another run)")
            return
        batches = self._from_index() if self._file is not None else self._from_stream()
        for index, (batch, custom) in enumerate(batches):
            if self.footer is not None:
                self._damaged(f"record batch {index} follows the end record")
                return
            try:
                cols: Columns | None = None
                if decode:
                    cols = checked_columns(batch, self.n_read, self.version)
                as_written = check and check_batch(batch, self.n_read, self.version)
                if not (decode or check):
                    validated(batch, self.version)
                footer = _footer(custom) if batch.num_rows == 0 else None
            except Damage as error:
                self._damaged(f"record batch {index}: {error}")
                return
            self.as_written = self.as_written and as_written
            self.n_read += batch.num_rows
            self.footer = footer
            checkpoint = _checkpoint(custom) if batch.num_rows else None
            if checkpoint is not None:
                self.checkpoints.append((self.n_read, checkpoint))
            yield batch, checkpoint, cols
        if self.footer is None and self.damaged_at is None and not self.problems:
            if self._file is not None:
                self._damaged("the file's index lists no end record")
            else:
                self.problems.append(f"the file ends after message {self.n_read - 1} with no "
                                     "end record")

    def _damaged(self, problem: str) -> None:
        self.problems.append(problem)
        self.damaged_at = self.n_read

    def _from_index(self) -> Iterator[tuple[pa.RecordBatch, Any]]:
        assert self._file is not None
        for i in range(self._file.num_record_batches):
            try:
                yield self._file.get_batch_with_custom_metadata(i)
            except (pa.ArrowException, OSError, ValueError) as error:
                self._damaged(f"record batch {i} is unreadable ({short(error)})")
                return

    def _from_stream(self) -> Iterator[tuple[pa.RecordBatch, Any]]:
        """A file with no (readable) index: its batches as a stream. A break is a cut (the
        file is truncated there); a complete stream whose index alone is damaged reads whole
        (the chain does not cover the index)."""
        while True:
            try:
                yield self._stream.read_next_batch_with_custom_metadata()
            except StopIteration:
                return
            except (pa.ArrowException, OSError, ValueError) as error:
                self.problems.append(f"the file breaks after message {self.n_read - 1} "
                                     f"({short(error)})")
                return


def _same_header_at_start(source: pa.NativeFile, schema: pa.Schema) -> bool:
    """Whether the schema at the start of the stream is the index's (both are written)."""
    source.seek(len(fmt.FILE_MAGIC))
    try:
        return bool(ipc.open_stream(source).schema.equals(schema, check_metadata=True))
    except (pa.ArrowException, OSError, ValueError):
        return False


def _header(schema: pa.Schema, path: Path) -> tuple[dict[str, Any], str]:
    meta = schema.metadata or {}
    version = meta.get(fmt.VERSION_KEY)
    if version is None or fmt.HEADER_KEY not in meta:
        raise TranscriptError(f"{str(path)!r} is an Arrow file but not a fedsec transcript.")
    text = version.decode("ascii", errors="replace")
    if text not in fmt.READABLE_VERSIONS:
        raise TranscriptError(
            f"{str(path)!r} uses transcript format {text!r}; this fedsec reads formats "
            f"{', '.join(fmt.READABLE_VERSIONS)}. Upgrade fedsec to read it."
        )
    if not schema.remove_metadata().equals(fmt.bare_schema(text)):
        try:
            found = f"columns {schema.names} of types {[str(t) for t in schema.types]}"
        except ValueError:  # a name that is not UTF-8
            found = "unreadable column names"
        raise TranscriptError(f"{str(path)!r} has {found}; expected "
                              f"{fmt.column_names(text)} of fedsec's types.")
    try:
        header = json_object(meta[fmt.HEADER_KEY])
    except Damage as error:
        raise TranscriptError(f"{str(path)!r} has an unreadable run header ({error}).") from None
    return header, text


def _checkpoint(custom: Mapping[bytes, bytes] | None) -> bytes | None:
    """The chain value a batch's metadata records after it (None: none, or not hex)."""
    try:
        return bytes.fromhex(custom[b"head"].decode("ascii")) if custom else None
    except (KeyError, UnicodeDecodeError, ValueError):
        return None


def _footer(custom: Mapping[bytes, bytes] | None) -> dict[str, Any] | None:
    if not custom or fmt.FOOTER_KEY not in custom:
        return None
    return json_object(custom[fmt.FOOTER_KEY], "the end record")
