"""Signatures over a transcript's end record, for transcripts that leave the auditor's machine.

The chain alone detects accidents and edits made without recomputing it; anyone can recompute
it, since the algorithm is open. A signature closes that gap: with an Ed25519 key, the writer
signs everything that decides a verdict (:func:`signed_bytes`): the format version, a digest of
the run header, and the end record (status, message count, error, final chain value and the
seal that chains them all), and the footer carries the signature and the signer's
fingerprint. Whoever holds the public key detects any edit by someone without the private key,
re-chained or not (``fedsec inspect --verify-key PUBLIC.pem``).

A signature is only as good as the seal it covers: formats 1 and 2 have no sealed end record,
so a file of those formats is refused whenever a key is given (an edited format-4 file
re-chained as format 1 or 2, its old footer kept, would otherwise pass). Transcripts signed
before the format version was signed (scheme 1, over the seal alone) still verify: the seal of
formats 3 and 4 already binds their version, header, messages and end record.

Keys are PEM files, for example made with OpenSSL::

    openssl genpkey -algorithm ed25519 -out fedsec-signing.pem
    openssl pkey -in fedsec-signing.pem -pubout -out fedsec-signing.pub.pem
"""

from __future__ import annotations

import hashlib
import os
import stat
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from fedsec.errors import ValidationError
from fedsec.transcript.message import SEALED_FORMATS, canonical_json

#: Scheme 1 signed the seal alone; scheme 2 (written now) signs :func:`signed_bytes`.
LABEL = b"fedsec-transcript-signature-v1\x00"
LABEL_V2 = b"fedsec-transcript-signature-v2\x00"
SCHEME = 2
#: The footer fields that name the signature itself (left out of what is signed).
_SIGNATURE = "signature"
HOW = ("make one with: openssl genpkey -algorithm ed25519 -out KEY.pem (and its public half: "
       "openssl pkey -in KEY.pem -pubout -out KEY.pub.pem)")


def load_signing_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """The Ed25519 private key in the PEM file at ``path`` (unencrypted); warns
    (:class:`KeyFileWarning`) when others than its owner may read the file."""
    key = _private_key(path)
    _warn_if_shared(path)
    return key


def _private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
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
        key = _private_key(path).public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise ValidationError(f"{str(path)!r} holds a {type(key).__name__}, not an Ed25519 key; "
                              f"{HOW}.")
    return key


def fingerprint(key: Ed25519PublicKey) -> str:
    """A short name of a public key: the first 16 bytes of SHA-256 of its raw form, in hex."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:32]


def signed_bytes(version: str, header: Mapping[str, Any], footer: Mapping[str, Any]) -> bytes:
    """What a scheme-2 signature covers: the format ``version``, the SHA-256 of the canonical
    run ``header``, and every field of the ``footer`` but the signature (status, message
    count, error, final chain value, the seal, the signer and the scheme)."""
    fields = {k: v for k, v in footer.items() if k != _SIGNATURE}
    header_digest = hashlib.sha256(canonical_json(dict(header)).encode("utf-8")).hexdigest()
    return LABEL_V2 + canonical_json({"format": str(version), "header": header_digest,
                                      "footer": fields}).encode("utf-8")


def sign(key: Ed25519PrivateKey, footer: Mapping[str, Any], *, header: Mapping[str, Any],
         version: str) -> dict[str, Any]:
    """The footer fields that sign ``footer`` (with its seal ``end``) of a transcript of
    ``version`` with ``header``: the signer's fingerprint, the scheme and the signature."""
    if version not in SEALED_FORMATS:
        raise ValidationError(f"A transcript of format {version} has no sealed end record and "
                              "cannot be signed.")
    fields = {"signer": fingerprint(key.public_key()), "signature_scheme": SCHEME}
    message = signed_bytes(version, header, {**footer, **fields})
    return {**fields, _SIGNATURE: key.sign(message).hex()}


def signature_problem(footer: Mapping[str, Any] | None, key: Ed25519PublicKey, *,
                      header: Mapping[str, Any], version: str) -> str | None:
    """Why ``footer`` is not signed by ``key`` (over the format ``version``, the ``header``
    and the end record), or None when it is. Meaningful only for a transcript whose chain
    verified (the seal it covers is then the chain's): :func:`~fedsec.transcript.check_file`
    checks both."""
    if version not in SEALED_FORMATS:
        return (f"the transcript is format {version}, which cannot carry a sealed signature "
                "(a signed transcript is format 3 or later): a signed file re-chained as an "
                "older format is a forgery")
    if not footer or _SIGNATURE not in footer:
        return "the transcript is not signed"
    if footer.get("signer") != fingerprint(key):
        return (f"the transcript is signed by key {str(footer.get('signer'))[:16]}…, not by the "
                f"given key {fingerprint(key)[:16]}…")
    scheme = footer.get("signature_scheme", 1)
    try:
        if scheme == SCHEME:
            message = signed_bytes(version, header, footer)
        elif scheme == 1 and "signature_scheme" not in footer:
            message = LABEL + bytes.fromhex(str(footer.get("end", "")))
        else:
            return f"the signature's scheme {str(scheme)[:16]!r} is not one fedsec verifies"
        key.verify(bytes.fromhex(str(footer[_SIGNATURE])), message)
    except (InvalidSignature, ValueError, TypeError):
        return "the signature does not match the end record: the file was edited after signing"
    return None


def _warn_if_shared(path: str | os.PathLike[str]) -> None:
    """Warn when the private key file at ``path`` is readable or writable by others than its
    owner (as ssh refuses such a key, but without refusing it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and mode & 0o077:
        warnings.warn(f"the private signing key {str(path)!r} is accessible to others than "
                      f"its owner (mode {stat.S_IMODE(mode):04o}); anyone who reads it can sign "
                      f"forged transcripts: chmod 600 {str(path)!r}", KeyFileWarning,
                      stacklevel=3)


class KeyFileWarning(UserWarning):
    """A private key file others can read."""


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ValidationError(f"Cannot read the key {str(path)!r} ({error.strerror}).") from None
