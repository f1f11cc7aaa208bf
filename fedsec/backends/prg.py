"""Cryptographic randomness for masks and keys.

Masks come from AES-256 in counter mode (a 64-bit nonce derived from the
use, a 64-bit block counter) keyed by a 32-byte key two parties share, so a
mask is never reused and either party can regenerate it. Keys come from one of two sources:

* ``simulation``: derived from the run's seed with SHAKE-256, so runs are
  reproducible. Anyone who knows the seed knows every key: it is marked
  insecure in every transcript and report.
* ``agreement``: X25519 Diffie-Hellman between the two parties (private keys
  from the operating system's generator, public keys sent through the
  network) followed by HKDF-SHA256, as a deployment would do.
"""

from __future__ import annotations

import hashlib
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
    """A 32-byte key derived from the run's seed (reproducible, insecure by design).

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
    counters = _counter_blocks((n + 1) // 2).copy()
    counters[:, 0] = nonce_prefix(nonce)
    stream = _block_cipher(key).update(counters.view(np.uint8))
    return np.frombuffer(stream, dtype="<u8")[:n]


@lru_cache(maxsize=64)
def _counter_blocks(blocks: int) -> np.ndarray:
    """Big-endian counter blocks ``(0, i)``; the nonce half is filled in per use."""
    counters = np.zeros((blocks, 2), dtype=">u8")
    counters[:, 1] = np.arange(blocks, dtype=np.uint64)
    counters.setflags(write=False)
    return counters


@lru_cache(maxsize=1024)
def _block_cipher(key: bytes) -> Any:
    """The raw AES-256 block function under ``key``, kept per key.

    Counter mode is this function applied to the blocks ``nonce || counter``
    (NIST SP 800-38A); applying it to the counter blocks directly avoids
    building a cipher context per mask. Each block is enciphered once, so the
    mode's ECB name does not mean ECB use on data.
    """
    return Cipher(algorithms.AES(key), modes.ECB()).encryptor()  # noqa: S305


def agreement_keypair() -> tuple[X25519PrivateKey, bytes]:
    """A fresh X25519 private key (from the operating system) and its public bytes."""
    private = X25519PrivateKey.generate()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, public


def agreed_key(private: X25519PrivateKey, peer_public: bytes, context: str) -> bytes:
    """The 32-byte key both ends of an X25519 exchange derive (HKDF-SHA256 over ``context``)."""
    shared = private.exchange(X25519PublicKey.from_public_bytes(peer_public))
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None,
                info=b"fedsec-mask-key\x00" + context.encode()).derive(shared)
