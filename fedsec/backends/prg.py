"""Cryptographic randomness for masks and keys.

Masks come from AES-256 in counter mode (a 64-bit nonce derived from the
use, a 64-bit block counter) keyed by a 32-byte key two parties share, so a
mask is never reused and either party can regenerate it. Keys come from one of two sources:

* ``simulation``: derived from the run's secret seed with SHAKE-256, so runs are
  reproducible. Anyone who knows the seed knows every key: it is marked
  insecure in every transcript and report.
* ``agreement``: X25519 Diffie-Hellman between the two parties (private keys
  from the operating system's generator, public keys sent through the
  network) followed by HKDF-SHA256, as a deployment would do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

KEY_BYTES = 32
SIMULATION = "simulation"
AGREEMENT = "agreement"
KEY_SOURCES = (SIMULATION, AGREEMENT)


def simulation_key(seed: int, purpose: str) -> bytes:
    """A 32-byte key derived from the run's secret seed (reproducible, insecure by design).

    Examples
    --------
    >>> simulation_key(0, "pair/a/b") == simulation_key(0, "pair/a/b")
    True
    """
    material = b"fedsec-simulation-key\x00" + str(seed).encode() + b"\x00" + purpose.encode()
    return hashlib.shake_256(material).digest(KEY_BYTES)


def nonce_prefix(nonce: str) -> int:
    """The 64-bit nonce half of every counter block for a nonce string."""
    digest = hashlib.sha256(b"fedsec-mask-nonce\x00" + nonce.encode()).digest()
    return int.from_bytes(digest[:8], "big")


def mask_words(key: bytes, nonce: str, n: int) -> np.ndarray:
    """``n`` uniform 64-bit words from AES-256-CTR under ``key`` and ``nonce``.

    Examples
    --------
    >>> a = mask_words(b"k" * 32, "round0", 3)
    >>> a.dtype, bool((a == mask_words(b"k" * 32, "round0", 3)).all())
    (dtype('uint64'), True)
    """
    stream = _cached_block_cipher(key).update(counter_blocks(nonce, n))
    return np.frombuffer(stream, dtype="<u8")[:n]


class MaskStream:
    """Keystreams of ``n`` words for one nonce, written into one reused buffer.

    The counter blocks of a nonce are built once and every key enciphers the
    same bytes, so a sender adding many pairwise masks pays for the block
    cipher and one add per mask and nothing else (no allocation, no per-mask
    hashing). ``add`` gives exactly what ``mask_words`` gives.

    Examples
    --------
    >>> out = np.zeros(3, dtype=np.uint64)
    >>> MaskStream("round0", 3).add(out, block_cipher(b"k" * 32), 1)
    >>> bool((out == mask_words(b"k" * 32, "round0", 3)).all())
    True
    """

    def __init__(self, nonce: str, n: int) -> None:
        self.n = n
        self.blocks = counter_blocks(nonce, n)
        # update_into wants room for one block more than it is given
        self._buffer = bytearray(len(self.blocks) + 16)
        self._words = np.frombuffer(self._buffer, dtype="<u8")[:n]

    def add_all(self, out: np.ndarray, adds: Sequence[Any], subtracts: Sequence[Any]) -> None:
        """``out += sum(masks of adds) - sum(masks of subtracts)`` modulo 2**64, in place."""
        blocks, buffer, words = self.blocks, self._buffer, self._words
        for cipher in adds:
            cipher.update_into(blocks, buffer)
            np.add(out, words, out=out)
        for cipher in subtracts:
            cipher.update_into(blocks, buffer)
            np.subtract(out, words, out=out)

    def add(self, out: np.ndarray, cipher: Any, factor: int) -> None:
        """``out += factor * mask`` modulo 2**64, in place (``out``: uint64 of length ``n``)."""
        cipher.update_into(self.blocks, self._buffer)
        if factor == 1:
            np.add(out, self._words, out=out)
        elif factor == -1:
            np.subtract(out, self._words, out=out)
        else:  # uint64 arithmetic wraps modulo 2**64
            out += self._words * np.uint64(factor % (1 << 64))


@lru_cache(maxsize=16)
def counter_blocks(nonce: str, n: int) -> bytes:
    """The big-endian counter blocks ``(nonce_prefix, i)`` enciphered for ``n`` mask words."""
    blocks = (n + 1) // 2
    counters = np.empty((blocks, 2), dtype=">u8")
    counters[:, 0] = nonce_prefix(nonce)
    counters[:, 1] = np.arange(blocks, dtype=np.uint64)
    return counters.tobytes()


def block_cipher(key: bytes) -> Any:
    """The raw AES-256 block function under ``key`` (one key expansion).

    Counter mode is this function applied to the blocks ``nonce || counter``
    (NIST SP 800-38A); applying it to the counter blocks directly lets one
    expanded key serve every mask under it. Each block is enciphered once per
    nonce, so the mode's ECB name does not mean ECB use on data.
    """
    return Cipher(algorithms.AES(key), modes.ECB()).encryptor()  # noqa: S305


@lru_cache(maxsize=1024)
def _cached_block_cipher(key: bytes) -> Any:
    """:func:`block_cipher`, kept per key for one-off masks (opening recorded payloads)."""
    return block_cipher(key)


def agreement_keypair() -> tuple[X25519PrivateKey, bytes]:
    """A fresh X25519 private key (from the operating system) and its public bytes."""
    private = X25519PrivateKey.generate()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, public


def agreed_key(private: X25519PrivateKey, peer_public: bytes, context: str, *,
               length: int = KEY_BYTES) -> bytes:
    """The key both ends of an X25519 exchange derive (HKDF-SHA256 over ``context``; 32
    bytes, or ``length``)."""
    shared = private.exchange(X25519PublicKey.from_public_bytes(peer_public))
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None,
                info=b"fedsec-mask-key\x00" + context.encode()).derive(shared)
