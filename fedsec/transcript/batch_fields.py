"""A record batch's fields checked and decoded, message by message.

Nothing read from a file is trusted before it is checked: the batch is validated in full by
Arrow first (a damaged offset or length cannot make the reader read or allocate outside the
file), then every message's payload layout (a dtype and shape that account for exactly its
bytes) and metadata (a JSON object). :mod:`fedsec.transcript.batch_check` accepts exactly the
same batches from their columns at once, without a Python value per message.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.message import NO_DIGEST, NO_META, Message
from fedsec.transcript.payload import ARRAY, BYTES, decode

#: Array dtypes a transcript may record (bool, integers, floats, complex, little-endian), with
#: their item sizes.
ITEMSIZE = {d: np.dtype(d).itemsize for d in (
    "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8", "<c8",
    "<c16")}
#: The most dimensions a payload's shape may have.
MAX_DIMS = 32
#: The key of the checked columns that holds the messages' decoded metadata.
METAS = "__metas__"
#: Metadata as the file holds a message without any.
EMPTY_META = "{}"
#: Payloads this small on average are copied out of the file rather than viewed in place.
_COPIED_BYTES = 4096

Columns = dict[str, list[Any]]


class Damage(Exception):
    """A batch or message that cannot be read (internal to the reader)."""


def checked_columns(batch: pa.RecordBatch, first: int,
                    version: str = fmt.FORMAT_VERSION) -> Columns:
    """The columns of ``batch`` (its first message at position ``first``) as lists, keyed by
    :class:`Message` field, every message's payload layout and metadata checked.

    Raises
    ------
    Damage
        When the batch does not have fedsec's columns and types, fails Arrow's full
        validation, or a message's fields cannot be decoded.
    """
    validated(batch, version)
    cols = {fmt.field_name(name): (payload_values(batch.column(i)) if name == "payload"
                                   else batch.column(i).to_pylist())
            for i, name in enumerate(batch.schema.names)}
    if "digest" not in cols:  # format 4 chains batches, not messages
        cols["digest"] = [NO_DIGEST] * batch.num_rows
    metas: list[Mapping[str, Any]] = []
    for i, (kind, dtype, shape, raw, meta) in enumerate(zip(
            cols["kind"], cols["dtype"], cols["shape"], cols["payload"], cols["meta"],
            strict=True)):
        try:
            check_layout(kind, dtype, shape, len(raw))
            metas.append(meta_of(meta))
        except Damage as error:
            raise Damage(f"message {first + i} is unreadable: {error}") from None
    cols[METAS] = metas
    return cols


def validated(batch: pa.RecordBatch, version: str) -> None:
    """Refuse a batch without fedsec's columns and types, or that fails Arrow's full
    validation (offsets and lengths inside its buffers); None when it passes."""
    if not batch.schema.remove_metadata().equals(fmt.bare_schema(version)):
        raise Damage("its columns are not a transcript's")
    try:
        batch.validate(full=True)
    except (pa.ArrowException, ValueError) as error:
        raise Damage(f"it fails validation ({short(error)})") from None


def payload_values(column: pa.Array) -> list[memoryview] | list[bytes]:
    """A validated binary column's values, large ones as views of its data buffer: no copy, so a
    memory-mapped file's payloads are read from disk only when used (arrays decode to
    read-only views of them; the mapping lives as long as a view does). A batch of small
    payloads (on average at most :data:`_COPIED_BYTES` each) is copied out instead."""
    if column.null_count:
        raise Damage("a message has no payload")
    _, offsets_buffer, data_buffer = column.buffers()
    if data_buffer is None or data_buffer.size <= _COPIED_BYTES * max(len(column), 1):
        return column.to_pylist()  # small payloads: copying them is cheaper than views
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[
        column.offset:column.offset + len(column) + 1].tolist()
    data = memoryview(data_buffer)
    return [data[start:end] for start, end in itertools.pairwise(offsets)]


def messages_of(cols: Columns) -> list[Message]:
    """Messages from checked columns (:func:`checked_columns`), payloads decoded."""
    return [Message(seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype,
                    tuple(shape), decode(kind, dtype, tuple(shape), raw), size, meta, elapsed,
                    crypto, digest)
            for (seq, round_, phase, sender, receiver, tag, kind, protection, key_id, dtype,
                 shape, raw, size, meta, elapsed, crypto, digest) in zip(
                cols["seq"], cols["round"], cols["phase"], cols["sender"], cols["receiver"],
                cols["tag"], cols["kind"], cols["protection"], cols["key_id"], cols["dtype"],
                cols["shape"], cols["payload"], cols["size"], cols[METAS], cols["elapsed"],
                cols["crypto_seconds"], cols["digest"], strict=True)]


def meta_of(text: str) -> Mapping[str, Any]:
    """A message's metadata from the JSON the file holds (the shared empty mapping for none).

    Raises
    ------
    Damage
        When it is not a JSON object.
    """
    return NO_META if text == EMPTY_META else json_object(text.encode("utf-8"), "its metadata")


def check_layout(kind: str, dtype: str, shape: list[int], n_bytes: int) -> None:
    """Refuse a payload layout (from the file) that does not describe exactly its bytes."""
    if kind == BYTES:
        if dtype or shape:
            raise Damage("a byte payload with an array layout")
        return
    if kind != ARRAY:
        raise Damage(f"unknown payload kind {kind[:20]!r}")
    itemsize = ITEMSIZE.get(dtype)
    if itemsize is None:
        raise Damage(f"dtype {dtype[:20]!r} is not one a transcript records")
    if len(shape) > MAX_DIMS or any(n < 0 for n in shape):
        raise Damage(f"shape {tuple(shape[:MAX_DIMS + 1])} is invalid")
    if math.prod(shape) * itemsize != n_bytes:
        raise Damage(f"shape {tuple(shape)} of {dtype} does not fit its {n_bytes} payload bytes")


def json_object(raw: bytes, what: str = "JSON") -> dict[str, Any]:
    """``raw`` parsed as a JSON object (NaN and infinities refused).

    Raises
    ------
    Damage
        When it is not UTF-8, not JSON, or not an object.
    """
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Damage(f"{what} is unreadable ({short(error)})") from None
    if not isinstance(value, dict):
        raise Damage(f"{what} is not a JSON object")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a value fedsec records")


def short(error: BaseException) -> str:
    """The first line of an error's message, at most 160 characters."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:160]
