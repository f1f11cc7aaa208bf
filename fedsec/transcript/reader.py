"""Reading transcripts back, including the readable prefix of a broken file.

Nothing in a file is trusted before it is checked: the schema (names and types), every record
batch (validated in full before a value is decoded, so a damaged offset or length cannot make
the reader read or allocate outside the file), and every decoded field (JSON, dtypes, shapes
that must account for exactly the payload's bytes). The first damaged batch or message stops
the reading; what was read before it stays, and the transcript says where the damage starts.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import Message
from fedsec.transcript.payload import ARRAY, BYTES, decode
from fedsec.transcript.transcript import Transcript

#: Array dtypes a transcript may record: bool, integers, floats, complex, little-endian.
_DTYPE = re.compile(r"^(\|b1|\|[iu]1|<[iu][248]|<f[248]|<c(8|16))$")
_MAX_DIMS = 32
_EXPECTED = pa.schema([pa.field(n, t, nullable=False) for n, t in fmt.SCHEMA_FIELDS])


class Damage(Exception):
    """A batch or message that cannot be read (internal to the reader)."""


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Load a transcript written by fedsec.

    A file whose end was cut off (a run that died, a copy that stopped) is read up to its last
    complete batch; a damaged batch or message ends the reading there. What is missing is
    listed in ``read_problems`` and :meth:`Transcript.verify` reports it (``truncated`` when
    the file was cut, ``tampered`` at the first damaged message otherwise).

    Raises
    ------
    MissingInputError
        When ``path`` names no file.
    TranscriptError
        When the file is not a fedsec transcript at all or its header is unreadable.
    """
    path = Path(path)
    if not path.is_file():
        what = "a directory" if path.is_dir() else "no such file"
        raise MissingInputError(f"No transcript at {str(path)!r} ({what}); give the path of a "
                                "transcript.arrow file.")
    with pa.memory_map(str(path)) as source:
        magic = source.read(len(fmt.FILE_MAGIC))
        if magic != fmt.FILE_MAGIC:
            raise TranscriptError(
                f"{str(path)!r} is not a fedsec transcript: it does not start with the Arrow file "
                "signature."
            )
        source.seek(0)
        try:
            reader = ipc.open_file(source)
            schema = reader.schema
        except (pa.ArrowException, OSError, ValueError):
            return _salvage(path, source)
        header, version = _header(schema, path)
        collected = _Collected()
        if not _same_header_at_start(source, schema):
            collected.damaged("the run header at the start of the file differs from the copy "
                              "in the file's index (a stream reader would see another run)")
            return collected.transcript(header, version)
        for i in range(reader.num_record_batches):
            try:
                batch, custom = reader.get_batch_with_custom_metadata(i)
            except (pa.ArrowException, OSError, ValueError) as error:
                collected.damaged(f"record batch {i} is unreadable ({_short(error)})")
                break
            if not collected.add(batch, custom, i):
                break
        if collected.footer is None and collected.damaged_at is None:
            collected.damaged("the file's index lists no end record")
        return collected.transcript(header, version)


def read_pandas(path: str | os.PathLike[str]) -> Any:
    """The transcript at ``path`` as a pandas DataFrame, one row per message.

    A finished transcript is also readable with ``pandas.read_feather(path)``; this function
    checks the file first and also reads the intact prefix of a cut-off or damaged one.
    """
    return read_transcript(path).to_pandas()


class _Collected:
    """Messages read so far, the end record, and where reading stopped."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.footer: dict[str, Any] | None = None
        self.problems: list[str] = []
        self.damaged_at: int | None = None

    def damaged(self, problem: str) -> None:
        self.problems.append(problem)
        self.damaged_at = len(self.messages)

    def add(self, batch: pa.RecordBatch, custom: Mapping[bytes, bytes] | None,
            index: int) -> bool:
        """Check and decode one batch; False (and a problem) when it is damaged."""
        if self.footer is not None:
            self.damaged(f"record batch {index} follows the end record")
            return False
        try:
            messages = list(checked_messages(batch, len(self.messages)))
            footer = _footer(custom) if batch.num_rows == 0 else None
        except Damage as error:
            self.damaged(f"record batch {index}: {error}")
            return False
        self.messages.extend(messages)
        self.footer = footer
        return True

    def transcript(self, header: dict[str, Any], version: str, *,
                   truncated: bool = False) -> Transcript:
        return Transcript(header=header, messages=tuple(self.messages), footer=self.footer,
                          read_problems=tuple(self.problems), format_version=version,
                          damaged_at=None if truncated else self.damaged_at)


def _salvage(path: Path, source: pa.NativeFile) -> Transcript:
    """Read a file with no (readable) Arrow footer as a stream of batches after the magic."""
    source.seek(len(fmt.FILE_MAGIC))
    try:
        stream = ipc.open_stream(source)
        schema = stream.schema
    except (pa.ArrowException, OSError, ValueError) as error:
        raise TranscriptError(
            f"{str(path)!r} is cut off or corrupt before its header ends ({_short(error)}); no "
            "message can be read."
        ) from error
    header, version = _header(schema, path)
    collected = _Collected()
    index = 0
    while True:
        try:
            batch, custom = stream.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        except (pa.ArrowException, OSError, ValueError) as error:
            collected.problems.append(
                f"the file breaks after message {len(collected.messages) - 1} ({_short(error)})")
            return collected.transcript(header, version, truncated=True)
        if not collected.add(batch, custom, index):
            return collected.transcript(header, version)
        index += 1
    if collected.footer is None:
        collected.problems.append(
            f"the file ends after message {len(collected.messages) - 1} with no end record")
        return collected.transcript(header, version, truncated=True)
    # every batch and the end record are there; only the file's closing index (which the
    # chain does not cover) is cut or damaged
    return collected.transcript(header, version)


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
    if not schema.remove_metadata().equals(_EXPECTED):
        try:
            found = f"columns {schema.names} of types {[str(t) for t in schema.types]}"
        except ValueError:  # a name that is not UTF-8
            found = "unreadable column names"
        raise TranscriptError(f"{str(path)!r} has {found}; expected {fmt.COLUMNS} of fedsec's "
                              "types.")
    try:
        header = _json_object(meta[fmt.HEADER_KEY])
    except Damage as error:
        raise TranscriptError(f"{str(path)!r} has an unreadable run header ({error}).") from None
    return header, text


def _footer(custom: Mapping[bytes, bytes] | None) -> dict[str, Any] | None:
    if not custom or fmt.FOOTER_KEY not in custom:
        return None
    return _json_object(custom[fmt.FOOTER_KEY], "the end record")


def _json_object(raw: bytes, what: str = "JSON") -> dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Damage(f"{what} is unreadable ({_short(error)})") from None
    if not isinstance(value, dict):
        raise Damage(f"{what} is not a JSON object")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a value fedsec records")


def checked_messages(batch: pa.RecordBatch, first: int) -> Iterator[Message]:
    """The messages of ``batch`` (its first at position ``first``), each checked.

    Raises
    ------
    Damage
        When the batch does not have fedsec's columns and types, fails Arrow's full
        validation, or a message's fields cannot be decoded.
    """
    if not batch.schema.remove_metadata().equals(_EXPECTED):
        raise Damage("its columns are not a transcript's")
    try:
        batch.validate(full=True)
    except (pa.ArrowException, ValueError) as error:
        raise Damage(f"it fails validation ({_short(error)})") from None
    cols = {name: batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)}
    for i in range(batch.num_rows):
        seq = first + i
        try:
            yield _message(cols, i)
        except Damage as error:
            raise Damage(f"message {seq} is unreadable: {error}") from None


def _message(cols: Mapping[str, list[Any]], i: int) -> Message:
    kind, dtype, raw = cols["kind"][i], cols["dtype"][i], cols["payload"][i]
    shape = tuple(cols["shape"][i])
    meta_json = cols["meta"][i]
    return Message(
        seq=cols["seq"][i], round=cols["round"][i], phase=cols["phase"][i],
        sender=cols["sender"][i], receiver=cols["receiver"][i], tag=cols["tag"][i],
        kind=kind, protection=cols["protection"][i], key_id=cols["key_id"][i],
        dtype=dtype, shape=shape, payload=_payload(kind, dtype, shape, raw),
        size=cols["size"][i], meta={} if meta_json == "{}" else _json_object(
            meta_json.encode("utf-8"), "its metadata"),
        elapsed=cols["elapsed"][i], crypto_seconds=cols["crypto_seconds"][i],
        digest=cols["digest"][i],
    )


def _payload(kind: str, dtype: str, shape: tuple[int, ...], raw: bytes) -> np.ndarray | bytes:
    """Decode a payload whose layout fields come from the file: checked before use."""
    if kind == BYTES:
        if dtype or shape:
            raise Damage("a byte payload with an array layout")
        return decode(kind, dtype, shape, raw)
    if kind != ARRAY:
        raise Damage(f"unknown payload kind {kind[:20]!r}")
    if not _DTYPE.match(dtype):
        raise Damage(f"dtype {dtype[:20]!r} is not one a transcript records")
    if len(shape) > _MAX_DIMS or any(n < 0 for n in shape):
        raise Damage(f"shape {shape[:_MAX_DIMS + 1]} is invalid")
    if math.prod(shape) * np.dtype(dtype).itemsize != len(raw):
        raise Damage(f"shape {shape} of {dtype} does not fit its {len(raw)} payload bytes")
    return decode(kind, dtype, shape, raw)


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:160]
