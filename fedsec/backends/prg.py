"""Cryptographic randomness for masks and keys.

Masks come from AES-256 in counter mode keyed by a 32-byte key two parties
share, with a per-use nonce, so a mask is never reused and either party can
regenerate it. Keys come from one of two sources:

* ``simulation``: derived from the run's seed with SHAKE-256, so runs are
  reproducible. Anyone who knows the seed knows every key: it is marked
  insecure in every transcript and report.
* ``agreement``: X25519 Diffie-Hellman between the two parties (private keys
  from the operating system's generator, public keys sent through the
  network) followed by HKDF-SHA256, as a deployment would do.
"""

from __future__ import annotations

import hashlib

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


def nonce_block(nonce: str) -> bytes:
    """The 16-byte initial counter block for a nonce string."""
    return hashlib.sha256(b"fedsec-mask-nonce\x00" + nonce.encode()).digest()[:16]


def mask_words(key: bytes, nonce: str, n: int) -> np.ndarray:
    """``n`` uniform 64-bit words from AES-256-CTR under ``key`` and ``nonce``.

    Examples
    --------
    >>> a = mask_words(b"k" * 32, "round0", 3)
    >>> a.dtype, bool((a == mask_words(b"k" * 32, "round0", 3)).all())
    (dtype('uint64'), True)
    """
    encryptor = Cipher(algorithms.AES(key), modes.CTR(nonce_block(nonce))).encryptor()
    return np.frombuffer(encryptor.update(bytes(8 * n)), dtype="<u8")


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
