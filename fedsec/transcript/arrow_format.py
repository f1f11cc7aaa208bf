"""The on-disk layout of a transcript: Apache Arrow IPC (Feather v2) file.

Why Arrow IPC: it is open and columnar (``pandas.read_feather`` or
``pyarrow.ipc.open_file`` read a whole transcript in one call, memory-mapped),
it is written batch by batch as the run goes, and a file is the IPC *stream*
format framed by magic bytes and a closing footer, so a run that dies before
writing the footer still leaves every flushed batch readable as a stream.
Parquet was the alternative; its footer holds the only copy of the schema and
row-group index, so a truncated Parquet file is unreadable. Payloads are raw
bytes with explicit dtype and shape columns: no pickle anywhere.

Columns: seq, round, phase, sender, receiver, tag, kind, protection, key_id,
payload_dtype, payload_shape, wire_bytes, payload, meta (JSON), elapsed, crypto_seconds,
digest (formats 1 and 2 named three of them dtype, shape and size, which shadow pandas
attributes; format 4 has no digest column: it chains batches, and each batch's metadata holds
the chain value after it). The run header is
JSON in the schema metadata; the footer metadata records how the run ended,
the message count and the final chain value.
"""

from __future__ import annotations

from functools import cache

import pyarrow as pa

from fedsec.transcript.message import CHAIN_FORMAT, CHAIN_HASHES

#: The format written now, and every format this fedsec reads (they differ in the chain hash).
FORMAT_VERSION = CHAIN_FORMAT
READABLE_VERSIONS = tuple(CHAIN_HASHES)
HEADER_KEY = b"fedsec.header"
VERSION_KEY = b"fedsec.transcript_version"
FOOTER_KEY = b"fedsec.footer"
FILE_MAGIC = b"ARROW1\x00\x00"

SCHEMA_FIELDS = [
    ("seq", pa.int64()),
    ("round", pa.int32()),
    ("phase", pa.string()),
    ("sender", pa.string()),
    ("receiver", pa.string()),
    ("tag", pa.string()),
    ("kind", pa.string()),
    ("protection", pa.string()),
    ("key_id", pa.string()),
    ("dtype", pa.string()),
    ("shape", pa.list_(pa.int64())),
    ("size", pa.int64()),
    ("payload", pa.large_binary()),
    ("meta", pa.string()),
    ("elapsed", pa.float64()),
    ("crypto_seconds", pa.float64()),
    ("digest", pa.binary(32)),
]
#: Format 3 renamed the columns that shadowed pandas attributes (``frame.dtype`` ...).
RENAMED = {"dtype": "payload_dtype", "shape": "payload_shape", "size": "wire_bytes"}
_FIRST_RENAMED = 3
#: From format 4 on, messages carry no chain value of their own.
_FIRST_WITHOUT_DIGEST = 4


def _fields(version: str) -> list[tuple[str, pa.DataType]]:
    if int(version) >= _FIRST_WITHOUT_DIGEST:
        return [(name, type_) for name, type_ in SCHEMA_FIELDS if name != "digest"]
    return SCHEMA_FIELDS


def column_names(version: str = FORMAT_VERSION) -> list[str]:
    """The file's column names in ``version`` (in order; :data:`SCHEMA_FIELDS` names the
    fields of :class:`~fedsec.transcript.Message`, which format 3 renamed in part and format
    4 holds without ``digest``)."""
    renamed = int(version) >= _FIRST_RENAMED
    return [RENAMED.get(name, name) if renamed else name for name, _ in _fields(version)]


COLUMNS = column_names()


def field_name(column: str) -> str:
    """The :class:`~fedsec.transcript.Message` field a column holds, in any format.

    >>> field_name("payload_dtype"), field_name("dtype"), field_name("tag")
    ('dtype', 'dtype', 'tag')
    """
    return _FIELD_OF.get(column, column)


_FIELD_OF = {new: old for old, new in RENAMED.items()}


@cache  # asked for every batch read
def bare_schema(version: str = FORMAT_VERSION) -> pa.Schema:
    """The columns and types of ``version``, without the header."""
    return pa.schema([pa.field(n, t, nullable=False) for n, (_, t) in
                      zip(column_names(version), _fields(version), strict=True)])


def schema(header_json: str, version: str = FORMAT_VERSION) -> pa.Schema:
    """The Arrow schema carrying the run header and the format version."""
    return bare_schema(version).with_metadata(
        {VERSION_KEY: version.encode(), HEADER_KEY: header_json.encode("utf-8")})
