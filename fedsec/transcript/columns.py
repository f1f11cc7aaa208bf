"""Arrow columns built from their buffers: what ``pyarrow.array`` makes, without pandas.

``pyarrow.array`` asks pandas whether its input is a Series before converting, and so imports
pandas (about half a second) the first time it is called, even for a list of ints. A run
writes its transcript through this module instead: each column of the transcript's schema
(integers, floats, strings, bytes, lists of integers, fixed-size digests; never null) is
assembled from numpy buffers with ``pyarrow.Array.from_buffers``.
tests/transcript/test_columns.py checks every type against ``pyarrow.array``.

Examples
--------
>>> import pyarrow as pa
>>> column(["a", "bc"], pa.string()).to_pylist()
['a', 'bc']
>>> column([(2, 3), ()], pa.list_(pa.int64())).to_pylist()
[[2, 3], []]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from fedsec.errors import TranscriptError

_INT32_MAX = 2**31 - 1
#: The numpy dtype of each fixed-width Arrow type the transcript uses.
_NUMPY = {"int32": np.int32, "int64": np.int64, "double": np.float64}


def column(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """``values`` (no nulls) as an Arrow array of ``type_``: equal to
    ``pyarrow.array(values, type=type_)``."""
    n = len(values)
    # a column that repeats one value (a batch's phase, kind, protection, shape...) is built
    # from that value alone; == is exact for the strings, bytes, ints and tuples of ints
    # compared here (floats are left out: 0.0 == -0.0)
    if pa.types.is_integer(type_):
        return _integers(values, type_)
    same = n > 1 and not pa.types.is_floating(type_) and values.count(values[0]) == n
    if pa.types.is_string(type_) or pa.types.is_binary(type_) or pa.types.is_large_binary(
            type_):
        if same:
            one, _ = _joined(values[:1])
            data, lengths = one * n, np.full(n, len(one), dtype=np.int64)
        else:
            data, lengths = _joined(values)
        offsets = _offsets(lengths, "column", large=pa.types.is_large_binary(type_))
        return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(offsets),
                                                pa.py_buffer(data)])
    if pa.types.is_fixed_size_binary(type_):  # digests
        if any(len(v) != type_.byte_width for v in values):
            raise TranscriptError(f"A value is not {type_.byte_width} bytes long ({type_}).")
        return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(b"".join(values))])
    if pa.types.is_list(type_):
        item = _NUMPY.get(str(type_.value_type))
        if same and item is not None:
            k = len(values[0])
            offsets = _offsets(np.full(n, k, dtype=np.int64), "list column", large=False)
            flat_numbers = np.tile(np.asarray(values[0], dtype=item), n)
            child = pa.Array.from_buffers(type_.value_type, n * k,
                                          [None, pa.py_buffer(flat_numbers)])
        else:
            offsets = _offsets(np.fromiter(map(len, values), dtype=np.int64, count=n),
                               "list column", large=False)
            flat = list(itertools.chain.from_iterable(values))
            child = column(flat, type_.value_type)
        return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(offsets)], children=[child])
    dtype = _NUMPY.get(str(type_))
    if dtype is None:  # pragma: no cover - the schema holds no other type
        raise TranscriptError(f"No column builder for Arrow type {type_}.")
    if same:  # an int out of range raises OverflowError, as np.asarray does
        numbers = np.full(n, np.asarray(values[0], dtype=dtype), dtype=dtype)
    else:
        numbers = np.asarray(values, dtype=dtype)
    return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(numbers)])


def _integers(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """An integer column: read in one pass as 64-bit integers, then narrowed (an int out of
    the type's range raises OverflowError, as ``np.asarray`` does)."""
    dtype = _NUMPY.get(str(type_))
    if dtype is None:  # pragma: no cover - the schema holds no other type
        raise TranscriptError(f"No column builder for Arrow type {type_}.")
    wide = np.fromiter(values, dtype=np.int64, count=len(values))
    numbers = wide if dtype is np.int64 else wide.astype(dtype)
    if numbers is not wide and not np.array_equal(numbers, wide):
        raise OverflowError(f"A value does not fit the column's type {type_}.")
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(numbers)])


def numbers(array: pa.Array) -> np.ndarray:
    """The values of an integer or float column without nulls, as a read-only numpy view of
    its buffer (``numpy.asarray`` of an Arrow array would import pandas).

    >>> numbers(pa.array([3, 4, 5], type=pa.int32())[1:]).tolist()
    [4, 5]
    """
    dtype = _NUMPY.get(str(array.type))
    if dtype is None or array.null_count:
        raise TranscriptError(f"Not a column of numbers without nulls: {array.type}.")
    n, offset = len(array), array.offset
    buffer = array.buffers()[1]
    if buffer is None:  # an empty array may have none
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype, count=n, offset=offset * np.dtype(dtype).itemsize)


def _joined(values: Sequence[Any]) -> tuple[bytes, np.ndarray]:
    """The values' bytes back to back (strings as UTF-8) and each value's length in bytes.

    Strings are joined first and encoded once: when the result has one byte per character
    (ASCII, as every name and canonical JSON is), the characters counted are the bytes."""
    n = len(values)
    try:
        text = "".join(values)  # a TypeError when they are not all strings
    except TypeError:
        pass
    else:
        data = text.encode("utf-8")
        if len(data) == len(text):
            return data, np.fromiter(map(len, values), dtype=np.int64, count=n)
    encoded = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    return b"".join(encoded), np.fromiter(map(len, encoded), dtype=np.int64, count=n)


def _offsets(lengths: np.ndarray, what: str, *, large: bool) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if large:
        return offsets
    if offsets[-1] > _INT32_MAX:
        raise TranscriptError(f"A transcript batch's {what} exceeds 2 GiB; flush smaller "
                              "batches.")
    return offsets.astype(np.int32)
