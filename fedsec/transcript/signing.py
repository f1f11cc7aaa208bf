"""Signatures over a transcript's end record, for transcripts that leave the auditor's machine.

The chain alone detects accidents and edits made without recomputing it; anyone can recompute
it, since the algorithm is open. A signature closes that gap: with an Ed25519 key, the writer
signs the end record's seal (which chains the header, every message, and how the run ended),
and the footer carries the signature and the signer's fingerprint. Whoever holds the public key
detects any edit by someone without the private key, re-chained or not
(``fedsec inspect --verify-key PUBLIC.pem``).

Keys are PEM files, for example made with OpenSSL::

    openssl genpkey -algorithm ed25519 -out fedsec-signing.pem
    openssl pkey -in fedsec-signing.pem -pubout -out fedsec-signing.pub.pem
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from fedsec.errors import ValidationError

LABEL = b"fedsec-transcript-signature-v1\x00"
HOW = ("make one with: openssl genpkey -algorithm ed25519 -out KEY.pem (and its public half: "
       "openssl pkey -in KEY.pem -pubout -out KEY.pub.pem)")


def load_signing_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """The Ed25519 private key in the PEM file at ``path`` (unencrypted)."""
    data = _read(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise ValidationError(f"{str(path)!r} is not an unencrypted PEM private key ({error}); "
                              f"{HOW}.") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValidationError(f"{str(path)!r} holds a {type(key).__name__}, not an Ed25519 key; "
                              f"{HOW}.")
    return key


def load_verify_key(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    """The Ed25519 public key in the PEM file at ``path`` (a private key gives its public half)."""
    data = _read(path)
    try:
        key: Any = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        key = load_signing_key(path).public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise ValidationError(f"{str(path)!r} holds a {type(key).__name__}, not an Ed25519 key; "
                              f"{HOW}.")
    return key


def fingerprint(key: Ed25519PublicKey) -> str:
    """A short name of a public key: the first 16 bytes of SHA-256 of its raw form, in hex."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:32]


def sign(key: Ed25519PrivateKey, end: str) -> dict[str, str]:
    """The footer fields that sign the end record's seal ``end`` (hex)."""
    return {"signature": key.sign(LABEL + bytes.fromhex(end)).hex(),
            "signer": fingerprint(key.public_key())}


def signature_problem(footer: Mapping[str, Any] | None, key: Ed25519PublicKey) -> str | None:
    """Why ``footer`` is not signed by ``key`` over its seal, or None when it is."""
    if not footer or "signature" not in footer:
        return "the transcript is not signed"
    if footer.get("signer") != fingerprint(key):
        return (f"the transcript is signed by key {str(footer.get('signer'))[:16]}…, not by the "
                f"given key {fingerprint(key)[:16]}…")
    try:
        key.verify(bytes.fromhex(str(footer["signature"])),
                   LABEL + bytes.fromhex(str(footer.get("end", ""))))
    except (InvalidSignature, ValueError):
        return "the signature does not match the end record: the file was edited after signing"
    return None


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ValidationError(f"Cannot read the key {str(path)!r} ({error.strerror}).") from None
