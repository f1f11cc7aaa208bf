"""Reading transcripts back, including the readable prefix of a broken file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from fedsec.errors import MissingInputError, TranscriptError
from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import Message
from fedsec.transcript.payload import decode
from fedsec.transcript.transcript import Transcript


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Load a transcript written by fedsec.

    A file whose end was cut off (a run that died, a copy that stopped) is
    read up to its last complete batch; what is missing is listed in
    ``read_problems`` and :meth:`Transcript.verify` reports it.

    Raises
    ------
    TranscriptError
        When the file is not a fedsec transcript at all or its header is
        unreadable.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"No transcript at {str(path)!r}: the file does not exist.")
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
        except (pa.ArrowInvalid, OSError):
            return _salvage(path, source)
        header = _header(reader.schema, path)
        version = _version(reader.schema)
        messages: list[Message] = []
        problems: list[str] = []
        footer = None
        for i in range(reader.num_record_batches):
            try:
                batch, custom = reader.get_batch_with_custom_metadata(i)
            except (pa.ArrowInvalid, OSError) as error:
                problems.append(
                    f"record batch {i} is unreadable ({error}); messages from {len(messages)} on "
                    "are lost"
                )
                break
            footer = _footer(custom) if batch.num_rows == 0 else footer
            messages.extend(_messages(batch))
        return Transcript(header=header, messages=tuple(messages), footer=footer,
                          read_problems=tuple(problems), format_version=version)


def read_pandas(path: str | os.PathLike[str]) -> Any:
    """The transcript at ``path`` as a pandas DataFrame, one row per message.

    A finished transcript is also readable with ``pandas.read_feather(path)``;
    this function additionally reads the prefix of a cut-off file.
    """
    path = Path(path)
    try:
        return ipc.open_file(pa.memory_map(str(path))).read_pandas()
    except (pa.ArrowInvalid, OSError):
        return _salvage(path, None).to_pandas()


def _salvage(path: Path, source: pa.NativeFile | None) -> Transcript:
    """Read a file with no Arrow footer as a stream of batches after the magic."""
    own = source is None
    if source is None:
        source = pa.memory_map(str(path))
    try:
        source.seek(len(fmt.FILE_MAGIC))
        try:
            stream = ipc.open_stream(source)
        except (pa.ArrowInvalid, OSError) as error:
            raise TranscriptError(
                f"{str(path)!r} is cut off or corrupt before its header ends ({error}); no message "
                "can be read."
            ) from error
        header = _header(stream.schema, path)
        version = _version(stream.schema)
        messages: list[Message] = []
        footer = None
        problems: list[str] = []
        while True:
            try:
                batch, custom = stream.read_next_batch_with_custom_metadata()
            except StopIteration:
                break
            except (pa.ArrowInvalid, OSError) as error:
                problems.append(
                    f"the file breaks after message {len(messages) - 1} ({error})"
                )
                break
            footer = _footer(custom) if batch.num_rows == 0 else footer
            messages.extend(_messages(batch))
        if footer is None and not problems:
            problems.append(f"the file ends after message {len(messages) - 1} with no end record")
        return Transcript(header=header, messages=tuple(messages), footer=footer,
                          read_problems=tuple(problems), format_version=version)
    finally:
        if own:
            source.close()


def _header(schema: pa.Schema, path: Path) -> dict[str, Any]:
    meta = schema.metadata or {}
    version = meta.get(fmt.VERSION_KEY)
    if version is None or fmt.HEADER_KEY not in meta:
        raise TranscriptError(f"{str(path)!r} is an Arrow file but not a fedsec transcript.")
    if version.decode() not in fmt.READABLE_VERSIONS:
        raise TranscriptError(
            f"{str(path)!r} uses transcript format {version.decode()}; this fedsec reads formats "
            f"{', '.join(fmt.READABLE_VERSIONS)}. Upgrade fedsec to read it."
        )
    names = [f.name for f in schema]
    if names != fmt.COLUMNS:
        raise TranscriptError(f"{str(path)!r} has columns {names}; expected {fmt.COLUMNS}.")
    return json.loads(meta[fmt.HEADER_KEY].decode("utf-8"))


def _version(schema: pa.Schema) -> str:
    return schema.metadata[fmt.VERSION_KEY].decode()


def _footer(custom: pa.KeyValueMetadata | None) -> dict[str, Any] | None:
    if not custom or fmt.FOOTER_KEY not in custom:
        return None
    return json.loads(custom[fmt.FOOTER_KEY].decode("utf-8"))


def _messages(batch: pa.RecordBatch) -> list[Message]:
    cols = {name: batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)}
    out = []
    for i in range(batch.num_rows):
        kind, dtype, raw = cols["kind"][i], cols["dtype"][i], cols["payload"][i]
        shape = tuple(cols["shape"][i])
        meta_json = cols["meta"][i]
        out.append(Message(
            seq=cols["seq"][i], round=cols["round"][i], phase=cols["phase"][i],
            sender=cols["sender"][i], receiver=cols["receiver"][i], tag=cols["tag"][i],
            kind=kind, protection=cols["protection"][i], key_id=cols["key_id"][i],
            dtype=dtype, shape=shape, payload=decode(kind, dtype, shape, raw),
            size=cols["size"][i], meta={} if meta_json == "{}" else json.loads(meta_json),
            elapsed=cols["elapsed"][i], crypto_seconds=cols["crypto_seconds"][i],
            digest=cols["digest"][i],
        ))
    return out
