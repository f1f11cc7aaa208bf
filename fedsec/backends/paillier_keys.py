"""Paillier keys and obfuscators: generation, serialization, precomputation.

Keys are python-paillier (``phe``) key objects with gmpy2 arithmetic.
In ``simulation`` mode the primes and obfuscator randomness are drawn from
SHAKE-256 keyed by the run's secret seed (reproducible, marked insecure); in
``secrets`` mode from the operating system's generator.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

import gmpy2
from phe import paillier

from fedsec.errors import ValidationError


class KeyedStream:
    """Deterministic cryptographic bytes: SHAKE-256 over a label and a counter."""

    def __init__(self, label: bytes) -> None:
        self._label = label
        self._counter = 0

    def randbits(self, bits: int) -> int:
        """A uniform integer of ``bits`` bits."""
        self._counter += 1
        data = hashlib.shake_256(self._label + self._counter.to_bytes(8, "big")).digest(
            (bits + 7) // 8
        )
        return int.from_bytes(data, "big") >> (8 * len(data) - bits)

    def randbelow(self, bound: int) -> int:
        """A uniform integer in [0, bound) by rejection sampling."""
        bits = bound.bit_length()
        while True:
            value = self.randbits(bits)
            if value < bound:
                return value


def generate_keypair(
    key_bits: int, stream: KeyedStream | None
) -> tuple[paillier.PaillierPublicKey, paillier.PaillierPrivateKey]:
    """A key pair with an exactly ``key_bits``-bit modulus.

    ``stream`` None uses python-paillier's generator (operating-system randomness).
    """
    if stream is None:
        while True:
            public, private = paillier.generate_paillier_keypair(n_length=key_bits)
            if public.n.bit_length() == key_bits:
                return public, private
    half = key_bits // 2
    while True:
        p = _prime(half, stream)
        q = _prime(key_bits - half, stream)
        n = p * q
        if p != q and n.bit_length() == key_bits:
            public = paillier.PaillierPublicKey(n)
            return public, paillier.PaillierPrivateKey(public, p, q)


def _prime(bits: int, stream: KeyedStream) -> int:
    candidate = stream.randbits(bits) | (3 << (bits - 2)) | 1  # top two bits set, odd
    return int(gmpy2.next_prime(candidate))


def public_bytes(public: paillier.PaillierPublicKey) -> bytes:
    """The modulus n, big-endian (g = n + 1 is implied)."""
    return int(public.n).to_bytes((public.n.bit_length() + 7) // 8, "big")


def private_bytes(private: paillier.PaillierPrivateKey) -> bytes:
    """p and q, each big-endian with a 2-byte length prefix."""
    out = b""
    for prime in (private.p, private.q):
        raw = int(prime).to_bytes((prime.bit_length() + 7) // 8, "big")
        out += len(raw).to_bytes(2, "big") + raw
    return out


def private_from_bytes(data: bytes) -> paillier.PaillierPrivateKey:
    """Inverse of :func:`private_bytes`."""
    primes = []
    offset = 0
    for _ in range(2):
        if offset + 2 > len(data):
            raise ValidationError("Paillier private key material is truncated.")
        size = int.from_bytes(data[offset : offset + 2], "big")
        primes.append(int.from_bytes(data[offset + 2 : offset + 2 + size], "big"))
        offset += 2 + size
    p, q = primes
    return paillier.PaillierPrivateKey(paillier.PaillierPublicKey(p * q), p, q)


@dataclass
class ObfuscatorPool:
    """Precomputed ``r**n mod n**2`` values for one party and one public key.

    Computing them ahead (``fill``) takes the modular exponentiations off the
    critical path; ``take`` falls back to computing one when the pool is empty.
    """

    n: int
    stream: KeyedStream | None
    _pool: list[gmpy2.mpz] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._n = gmpy2.mpz(self.n)
        self._n2 = self._n * self._n

    def _one(self) -> gmpy2.mpz:
        while True:
            r = self.stream.randbelow(self.n) if self.stream else secrets.randbelow(self.n)
            if r > 1 and gmpy2.gcd(r, self._n) == 1:
                return gmpy2.powmod(r, self._n, self._n2)

    def fill(self, count: int) -> None:
        """Precompute until ``count`` obfuscators are ready."""
        while len(self._pool) < count:
            self._pool.append(self._one())

    def take(self) -> gmpy2.mpz:
        """One fresh obfuscator (never reused)."""
        return self._pool.pop() if self._pool else self._one()

    def __len__(self) -> int:
        return len(self._pool)
