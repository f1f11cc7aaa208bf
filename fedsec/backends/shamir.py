"""Shamir's threshold secret sharing over a prime field, on Python integers.

Shamir, "How to Share a Secret", Communications of the ACM 22(11), 1979. A secret
``s`` in GF(p) is the constant term of a polynomial ``f`` of degree ``t - 1`` whose other
coefficients are uniform in GF(p); the share of the holder at point ``x`` (non-zero,
distinct) is ``f(x)``. Any ``t`` shares give ``f(0) = s`` by Lagrange interpolation;
any ``t - 1`` shares are uniform and independent of ``s`` (for every candidate secret
exactly one polynomial through them exists), so they reveal nothing about it.

The field is GF(:data:`PRIME`), ``PRIME = 2**256 + 297`` (the smallest prime above
2**256), so every 32-byte key is one field element: a 32-byte secret is shared
as it is, without chunks or padding. Every function takes ``prime`` so that
tests can check the properties exhaustively over a small field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

PRIME = 2**256 + 297
"""The field's modulus: the smallest prime above 2**256."""
SHARE_BYTES = (PRIME.bit_length() + 7) // 8
"""Bytes of one share (a field element, big-endian): 33."""
SECRET_BYTES = 32
"""Bytes of a secret the field holds as one element (a key or a seed)."""


def random_coefficients(count: int, random_bytes: Callable[[int], bytes],
                        prime: int = PRIME) -> list[int]:
    """``count`` uniform field elements from ``random_bytes`` (64 spare bits each, so the
    reduction modulo ``prime`` is uniform to within 2**-64).

    Examples
    --------
    >>> import os
    >>> len(random_coefficients(3, os.urandom))
    3
    """
    width = (prime.bit_length() + 64 + 7) // 8
    raw = random_bytes(count * width)
    return [int.from_bytes(raw[i * width:(i + 1) * width], "big") % prime
            for i in range(count)]


def evaluate(coefficients: Sequence[int], xs: Sequence[int], prime: int = PRIME) -> list[int]:
    """``f(x) mod prime`` for each ``x``, ``f`` given by its coefficients, constant term first
    (Horner's rule).

    Examples
    --------
    >>> evaluate([1, 2, 3], [0, 1, 2], prime=101)  # 1 + 2x + 3x^2
    [1, 6, 17]
    """
    out = []
    highest_first = list(reversed(coefficients))
    for x in xs:
        acc = 0
        for c in highest_first:
            acc = (acc * x + c) % prime
        out.append(acc)
    return out


def split(secret: int, threshold: int, xs: Sequence[int], coefficients: Sequence[int],
          prime: int = PRIME) -> list[int]:
    """The shares of ``secret`` at the points ``xs``: ``f(x)`` with ``f(0) = secret`` and the
    ``threshold - 1`` uniform ``coefficients`` (from :func:`random_coefficients`) above it.

    Examples
    --------
    >>> shares = split(42, 2, [1, 2, 3], [5], prime=101)  # f(x) = 42 + 5x
    >>> shares, reconstruct([1, 3], [shares[0], shares[2]], prime=101)
    ([47, 52, 57], 42)
    """
    check_points(xs, threshold, prime)
    if len(coefficients) != threshold - 1:
        raise ValueError(f"A threshold of {threshold} needs {threshold - 1} random coefficients; "
                         f"got {len(coefficients)}.")
    if not 0 <= secret < prime:
        raise ValueError("The secret must be a field element (0 <= secret < prime).")
    return evaluate([secret, *coefficients], xs, prime)


def check_points(xs: Sequence[int], threshold: int, prime: int = PRIME) -> None:
    """Refuse points a sharing cannot use: zero (the secret's own point), repeated, outside
    the field, or fewer than ``threshold``; and a threshold below 1."""
    if threshold < 1:
        raise ValueError(f"A Shamir threshold is at least 1; got {threshold}.")
    if len(xs) < threshold:
        raise ValueError(f"{len(xs)} share holders cannot meet a threshold of {threshold}.")
    if len(set(xs)) != len(xs) or any(not 0 < x < prime for x in xs):
        raise ValueError("Share points must be distinct, non-zero field elements.")


def lagrange_at_zero(xs: Sequence[int], prime: int = PRIME) -> list[int]:
    """The coefficients ``c_j`` with ``f(0) = sum_j c_j f(x_j)`` for every polynomial of degree
    below ``len(xs)`` (one modular inversion for all of them).

    Examples
    --------
    >>> lagrange_at_zero([1, 2], prime=101)  # f(0) = 2 f(1) - f(2)
    [2, 100]
    """
    if len(set(xs)) != len(xs) or any(x % prime == 0 for x in xs):
        raise ValueError("Share points must be distinct and non-zero.")
    numerators, denominators = [], []
    for j, x_j in enumerate(xs):
        numerator, denominator = 1, 1
        for m, x_m in enumerate(xs):
            if m != j:
                numerator = numerator * x_m % prime
                denominator = denominator * (x_m - x_j) % prime
        numerators.append(numerator)
        denominators.append(denominator)
    inverses = _batch_inverse(denominators, prime)
    return [n * inv % prime for n, inv in zip(numerators, inverses, strict=True)]


def reconstruct(xs: Sequence[int], ys: Sequence[int], prime: int = PRIME) -> int:
    """The secret behind the shares ``ys`` at the points ``xs`` (at least the threshold of
    them; fewer give a value unrelated to the secret).

    Examples
    --------
    >>> reconstruct([2, 3], [52, 57], prime=101)
    42
    """
    if len(xs) != len(ys) or not xs:
        raise ValueError("Reconstruction needs one share per point, and at least one.")
    return sum(c * y for c, y in zip(lagrange_at_zero(xs, prime), ys, strict=True)) % prime


def to_bytes(element: int) -> bytes:
    """A field element as :data:`SHARE_BYTES` big-endian bytes."""
    return element.to_bytes(SHARE_BYTES, "big")


def secret_from_bytes(secret: bytes) -> int:
    """A key or seed of at most :data:`SECRET_BYTES` bytes as a field element."""
    if not 0 < len(secret) <= SECRET_BYTES:
        raise ValueError(f"A shared secret is 1 to {SECRET_BYTES} bytes; got {len(secret)}.")
    return int.from_bytes(secret, "big")


def secret_to_bytes(element: int, size: int = SECRET_BYTES) -> bytes:
    """Inverse of :func:`secret_from_bytes` for a ``size``-byte secret; refuses a field element
    of 2**(8 size) or more, which no such secret gives.

    Examples
    --------
    >>> secret_to_bytes(secret_from_bytes(b"0123456789abcdef"), 16)
    b'0123456789abcdef'
    """
    if not 0 <= element < 1 << (8 * size):
        raise ValueError(f"The shares do not reconstruct a {size}-byte secret: they are "
                         "inconsistent.")
    return element.to_bytes(size, "big")


def _batch_inverse(values: Sequence[int], prime: int) -> list[int]:
    """The inverses of non-zero ``values`` modulo ``prime`` with one exponentiation
    (Montgomery's trick)."""
    prefix, acc = [], 1
    for v in values:
        prefix.append(acc)
        acc = acc * v % prime
    inverse = pow(acc, -1, prime)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = prefix[i] * inverse % prime
        inverse = inverse * values[i] % prime
    return out
