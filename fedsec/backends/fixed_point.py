"""Fixed-point encodings for exact masked arithmetic.

Two encodings, both with a public, explicit scale:

* Z_2^64 words for additive masks: ``x -> round(x * 2**f) mod 2**64``. Sums of
  encoded values and masks wrap modulo 2**64, so masks cancel exactly; the
  decoded sum is exact up to the quantization ``2**-f`` per summand, provided
  the true sum fits in the signed range (checked at encoding with a declared
  bound, never silently).
* Offset slots for Paillier packing: each value becomes a non-negative integer
  ``round(x * 2**f) + 2**(w-1)`` of ``w`` bits, and several slots share one big
  plaintext with ``h`` bits of headroom each, so up to ``2**h`` packed
  plaintexts can be added before a slot overflows.
"""

from __future__ import annotations

import numpy as np

from fedsec.errors import ValidationError


def check_range(values: np.ndarray, max_abs: float, *, what: str) -> np.ndarray:
    """Refuse non-finite values and values beyond the encoding's declared bound."""
    arr = np.asarray(values, dtype=np.float64)
    if not arr.size:
        return arr
    if arr.max() <= max_abs and arr.min() >= -max_abs:  # False for NaN: covers both checks
        return arr
    largest = float(np.max(np.abs(arr)))
    if not np.all(np.isfinite(arr)):
        raise ValidationError(f"{what}: values must be finite; found NaN or infinity.")
    if largest > max_abs:
        raise ValidationError(
            f"{what}: a value of magnitude {float(np.max(np.abs(arr))):.6g} exceeds the "
            f"encoding's bound {max_abs:.6g}; raise the backend's 'max_abs' parameter (this "
            "costs precision or slots) or rescale the data."
        )
    return arr


def encode_z64(values: np.ndarray, fraction_bits: int) -> np.ndarray:
    """Fixed-point words in Z_2^64 (two's complement of ``round(x * 2**f)``).

    Examples
    --------
    >>> decode_z64(encode_z64(np.array([1.5, -2.25]), 16), 16).tolist()
    [1.5, -2.25]
    """
    scaled = np.rint(np.asarray(values, dtype=np.float64) * float(2**fraction_bits))
    return scaled.astype(np.int64).view(np.uint64)


def decode_z64(words: np.ndarray, fraction_bits: int) -> np.ndarray:
    """Inverse of :func:`encode_z64` for a (possibly summed) vector of words."""
    return np.asarray(words, dtype=np.uint64).view(np.int64) * (2.0**-fraction_bits)


def z64_bound(fraction_bits: int, max_summands: int) -> float:
    """The largest |x| each of ``max_summands`` values may have so that their sum fits."""
    return float(2 ** (63 - fraction_bits)) / max_summands


def slot_width(fraction_bits: int, integer_bits: int) -> int:
    """Bits of one encoded value (sign offset included)."""
    return fraction_bits + integer_bits + 1


def pack(values: np.ndarray, *, fraction_bits: int, integer_bits: int, headroom_bits: int,
         slots: int) -> list[int]:
    """Pack values into big integers, ``slots`` per integer, low slot first.

    Examples
    --------
    >>> packed = pack(np.array([1.0, -1.0, 0.5]), fraction_bits=8, integer_bits=4,
    ...               headroom_bits=2, slots=2)
    >>> unpack(packed, 3, n_summands=1, fraction_bits=8, integer_bits=4, headroom_bits=2,
    ...        slots=2).tolist()
    [1.0, -1.0, 0.5]
    """
    width = slot_width(fraction_bits, integer_bits)
    stride = width + headroom_bits
    offset = 1 << (width - 1)
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValidationError("Only finite values can be encrypted; a value is NaN or infinite.")
    scaled = np.rint(values * float(2**fraction_bits))
    if scaled.size and float(np.max(np.abs(scaled))) >= offset:
        raise ValidationError(
            f"A value needs more than {integer_bits} integer bits; raise 'max_abs' on the "
            "Paillier backend."
        )
    # Python integers, exact: a float times a power of two is exact, and int64 would wrap
    # beyond 2**63 (65,536 with 47 fraction bits)
    ints = [int(v) + offset for v in scaled.tolist()]
    out = []
    for start in range(0, len(ints), slots):
        acc = 0
        for i, v in enumerate(ints[start : start + slots]):
            acc |= v << (i * stride)
        out.append(acc)
    return out


def unpack(packed: list[int], length: int, *, n_summands: int, fraction_bits: int,
           integer_bits: int, headroom_bits: int, slots: int) -> np.ndarray:
    """Inverse of :func:`pack` for the sum of ``n_summands`` packed vectors."""
    width = slot_width(fraction_bits, integer_bits)
    stride = width + headroom_bits
    mask = (1 << stride) - 1
    offset = n_summands << (width - 1)
    values: list[int] = []
    for acc in packed:
        for i in range(slots):
            if len(values) == length:
                break
            values.append(((acc >> (i * stride)) & mask) - offset)
    return np.array(values, dtype=np.float64) / float(2**fraction_bits)
