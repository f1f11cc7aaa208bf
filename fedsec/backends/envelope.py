"""The versioned envelope protected payloads travel in.

Layout: magic ``FSEC``, one version byte, a 4-byte big-endian length, a
canonical JSON header (backend, key id, public facts of the encoding), then the
body (fixed-width big-endian ciphertexts, or serialized ciphertext objects
with their lengths in the header).
"""

from __future__ import annotations

import json
import struct
from typing import Any

from fedsec.errors import TranscriptError, ValidationError

MAGIC = b"FSEC"
VERSION = 1
_HEAD = struct.Struct(">4sBI")


def wrap(header: dict[str, Any], body: bytes) -> bytes:
    """Envelope bytes for ``header`` and ``body``.

    Examples
    --------
    >>> unwrap(wrap({"backend": "x"}, b"abc"))
    ({'backend': 'x'}, b'abc')
    """
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return _HEAD.pack(MAGIC, VERSION, len(head)) + head + body


def unwrap(data: bytes) -> tuple[dict[str, Any], bytes]:
    """Header and body of an envelope; refuses anything else with a clear error."""
    if len(data) < _HEAD.size:
        raise TranscriptError("A protected payload is shorter than its envelope header.")
    magic, version, size = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise TranscriptError("A protected payload does not start with the fedsec envelope magic.")
    if version != VERSION:
        raise TranscriptError(
            f"A protected payload uses envelope version {version}; this fedsec reads version "
            f"{VERSION}. Upgrade fedsec."
        )
    start = _HEAD.size
    header = json.loads(data[start : start + size].decode())
    return header, bytes(data[start + size :])


def unwrap_payload(payload: Any, *, scheme: str, key_id: str) -> tuple[dict[str, Any], bytes]:
    """Header and body of a wire payload of ``scheme`` (``"CKKS"``, ``"Paillier"``): refuses an
    array, and an envelope encrypted under another key than ``key_id``, this run's."""
    if not isinstance(payload, bytes):
        raise ValidationError(f"A {scheme} payload must be envelope bytes, not an array.")
    header, body = unwrap(payload)
    if header.get("key_id") != key_id:
        raise ValidationError(f"A {scheme} payload is encrypted under another key than this run's.")
    return header, body
