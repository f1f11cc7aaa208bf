"""Wire encoding of message payloads.

A payload is a numeric or boolean numpy array (scalars become 0-d arrays) or
an opaque byte string (ciphertexts, serialized public keys, fingerprints).
Arrays travel as their raw little-endian C-order bytes with an explicit
dtype string and shape, so decoding is exact and never needs pickle.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Any

import numpy as np

from fedsec.errors import ValidationError

#: Payload kinds recorded in the ``kind`` column.
ARRAY = "array"
BYTES = "bytes"
KINDS = (ARRAY, BYTES)

_ALLOWED_DTYPE_KINDS = frozenset("biufc")
_BIG_ENDIAN_HOST = sys.byteorder == "big"
#: The dtypes whose arrays travel in their own byte layout, and their wire dtype strings:
#: the bool and numeric types in this host's order when it is little-endian (a big-endian
#: host's arrays are swapped by :func:`wire_view`). A record's fast path looks them up.
WIRE_DTYPES: dict[np.dtype, str] = {} if _BIG_ENDIAN_HOST else {
    np.dtype(code): np.dtype(code).str for code in "?bBhHiIlLqQefdgFDG"
}


def encode(value: Any) -> tuple[str, str, tuple[int, ...], bytes]:
    """Encode a payload as ``(kind, dtype, shape, raw_bytes)``.

    Parameters
    ----------
    value : numpy.ndarray, number, bool, bytes, bytearray or memoryview
        What a party sends.

    Returns
    -------
    tuple
        The kind (``"array"`` or ``"bytes"``), the numpy dtype string (empty
        for bytes), the shape (empty for bytes) and the wire bytes.

    Examples
    --------
    >>> encode(np.array([1.0, 2.0]))[:3]
    ('array', '<f8', (2,))
    >>> encode(b"ct")
    ('bytes', '', (), b'ct')
    """
    kind, dtype, shape, data = wire_view(value)
    return kind, dtype, shape, data if isinstance(data, bytes) else data.tobytes()


def wire_view(value: Any) -> tuple[str, str, tuple[int, ...], np.ndarray | bytes]:
    """Like :func:`encode`, but the data stays an array whose bytes are the wire bytes.

    The array is C-contiguous and little-endian; it is the caller's own
    array when that already holds the wire layout (no copy is made).
    """
    if type(value) is np.ndarray:  # the common case, checked first
        arr = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        return BYTES, "", (), bytes(value)
    elif isinstance(value, (int, float, complex, np.generic, np.ndarray)):  # bool is an int
        arr = np.asarray(value)
    else:
        raise ValidationError(
            "A message payload must be a numpy array, a number or bytes. Got "
            f"{type(value).__name__} instead; convert it to an array (numbers) or serialize it "
            "to bytes (ciphertexts)."
        )
    dtype = arr.dtype
    if dtype.kind not in _ALLOWED_DTYPE_KINDS:
        raise ValidationError(
            f"A message payload array must have a bool or numeric dtype. Got {dtype} instead;"
            " encode strings or objects explicitly before sending."
        )
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and _BIG_ENDIAN_HOST):
        arr = arr.astype(dtype.newbyteorder("<"))
    elif not arr.flags.c_contiguous:  # ascontiguousarray would turn 0-d into 1-d
        arr = arr.copy(order="C")
    return ARRAY, arr.dtype.str, arr.shape, arr


def decode(kind: str, dtype: str, shape: tuple[int, ...], raw: bytes | memoryview
           ) -> np.ndarray | bytes:
    """Inverse of :func:`encode`; arrays come back read-only.

    Examples
    --------
    >>> decode(*encode(np.arange(3)))
    array([0, 1, 2])
    """
    if kind == ARRAY:
        return np.frombuffer(raw, dtype=_dtype(dtype)).reshape(shape)
    if kind == BYTES:
        return bytes(raw)
    raise ValidationError(f"Unknown payload kind {kind!r}; expected one of {KINDS}.")


@lru_cache(maxsize=256)
def _dtype(text: str) -> np.dtype:
    return np.dtype(text)
