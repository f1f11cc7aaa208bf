"""A record batch's messages checked from its columns at once, without a value per message.

:func:`~fedsec.transcript.batch_fields.checked_columns` checks each message in Python (its
payload layout, its metadata): a few microseconds a message. :func:`check_batch` accepts
exactly the same batches, checking the layouts with numpy over the columns' buffers and parsing
each distinct metadata text once (a batch repeats a handful). A batch it cannot clear so (a
missing value, a layout or metadata it refuses, a shape whose size overflows) goes through
``checked_columns`` itself, which raises the same error as ever or accepts it: the fast check
never accepts what the message-by-message one refuses, nor refuses what it accepts.
tests/transcript/test_batch_check.py checks both agree on damaged batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from fedsec.transcript import arrow_format as fmt
from fedsec.transcript.batch_fields import (
    EMPTY_META,
    ITEMSIZE,
    MAX_DIMS,
    Damage,
    checked_columns,
    json_object,
    validated,
)
from fedsec.transcript.columns import numbers
from fedsec.transcript.message import canonical_json
from fedsec.transcript.payload import ARRAY, BYTES

#: Shapes whose size (estimated in floating point) stays below this are multiplied exactly in
#: 64-bit integers; a larger one is checked message by message.
_EXACT_SIZE = float(2**52)


def check_batch(batch: pa.RecordBatch, first: int, version: str = fmt.FORMAT_VERSION) -> bool:
    """Check ``batch`` (its first message at position ``first``) as
    :func:`~fedsec.transcript.batch_fields.checked_columns` does.

    Returns whether the batch is *as written*: no missing value and every metadata in
    canonical JSON, so that its messages, written back into a batch, give the same bytes
    (what lets its columns stand in for its messages when a chain is checked).

    Raises
    ------
    Damage
        Exactly when ``checked_columns`` does, with its message.
    """
    validated(batch, version)
    if not batch.num_rows:
        return True
    columns = {fmt.field_name(name): batch.column(i) for i, name in enumerate(batch.schema.names)}
    if not any(c.null_count for c in columns.values()):
        canonical = metas_canonical(columns["meta"])
        if canonical is not None and layouts_fit(columns):
            return canonical
    checked_columns(batch, first, version)  # raises as message by message, or clears it
    return False


def metas_canonical(column: pa.Array) -> bool | None:
    """Whether every metadata text in ``column`` (no missing value) is canonical JSON; None
    when one is not a JSON object. Each distinct text is parsed once."""
    canonical = True
    for text in distinct(column)[0]:
        if text == EMPTY_META:
            continue
        try:
            value = json_object(text.encode("utf-8"), "its metadata")
        except Damage:
            return None
        try:
            canonical = canonical and canonical_json(value) == text
        except (TypeError, ValueError, RecursionError):  # a value JSON reads but never writes
            canonical = False
    return canonical


def layouts_fit(columns: dict[str, pa.Array]) -> bool:
    """Whether every message's kind, dtype and shape account for exactly its payload bytes
    (True only when :func:`~fedsec.transcript.batch_fields.check_layout` accepts each)."""
    kinds, kind = distinct(columns["kind"])
    if not set(kinds) <= {ARRAY, BYTES}:
        return False
    is_array = np.isin(kind, [i for i, k in enumerate(kinds) if k == ARRAY])
    dtypes, dtype = distinct(columns["dtype"])
    itemsize = np.array([ITEMSIZE.get(d, 0) for d in dtypes], dtype=np.int64)[dtype]
    no_dtype = np.array([d == "" for d in dtypes], dtype=bool)[dtype]
    shapes = columns["shape"]
    bounds = offsets(shapes).astype(np.int64)
    n_dims = np.diff(bounds)
    dims = numbers(shapes.values)[bounds[0]:bounds[-1]]
    if ((~is_array & (~no_dtype | (n_dims != 0))).any()  # bytes with an array layout
            or (is_array & ((itemsize == 0) | (n_dims > MAX_DIMS))).any()
            or (dims < 0).any()):
        return False
    size, estimate = _sizes(bounds[:-1] - bounds[0], n_dims, dims)
    if not (estimate < _EXACT_SIZE).all():  # (NaN too: an overflow times a zero)
        return False
    n_bytes = np.diff(offsets(columns["payload"]))
    return bool((~is_array | (size * itemsize == n_bytes)).all())


def _sizes(starts: np.ndarray, n_dims: np.ndarray, dims: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each shape's number of elements, in 64-bit integers (exact wherever the floating-point
    estimate, also returned, stays below 2**52, or a dimension is 0) and in floating point."""
    size = np.ones(len(n_dims), dtype=np.int64)
    estimate = np.ones(len(n_dims))
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(int(n_dims.max(initial=0))):
            has = n_dims > k
            dim = dims[starts[has] + k]
            size[has] *= dim
            estimate[has] *= dim
    return size, estimate


def distinct(column: pa.Array) -> tuple[list[Any], np.ndarray]:
    """The distinct values of a string column and each row's index among them (a missing
    value is one of them, None). A column that repeats one value, as most of a batch's do
    (its phase, kind, dtype, metadata...), is recognised from its bytes."""
    n = len(column)
    if column.null_count:  # (only in a batch edited on purpose: found one by one)
        values = column.to_pylist()
        names = list(dict.fromkeys(values))
        index = {name: i for i, name in enumerate(names)}
        return names, np.array([index[v] for v in values], dtype=np.int64)
    if n and _repeats_one_value(column):
        return [column[0].as_py()], np.broadcast_to(np.int32(0), (n,))
    encoded = column.dictionary_encode()
    return encoded.dictionary.to_pylist(), numbers(encoded.indices)


def _repeats_one_value(column: pa.Array) -> bool:
    """Whether every value of a validated string column (no missing value) is its first."""
    bounds = offsets(column)
    width = int(bounds[1] - bounds[0])
    if not (np.diff(bounds) == width).all():
        return False
    if width == 0:
        return True
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8, count=len(column) * width,
                         offset=int(bounds[0])).reshape(len(column), width)
    return bool((data == data[0]).all())


def offsets(column: pa.Array) -> np.ndarray:
    """The value offsets of a validated list, string or binary column (its ``len + 1``
    bounds), as a read-only numpy view of its buffer."""
    large = pa.types.is_large_binary(column.type) or pa.types.is_large_string(column.type)
    dtype = np.dtype("<i8" if large else "<i4")
    return np.frombuffer(column.buffers()[1], dtype=dtype, count=len(column) + 1,
                         offset=column.offset * dtype.itemsize)
