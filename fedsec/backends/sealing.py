"""Key shares sealed to their holder: X25519, HKDF-SHA256, AES-256-GCM.

Bonawitz et al. (CCS 2017) route each party's Shamir shares through the server, each
encrypted under a key the dealer agrees with the holder (its own key pair, apart from the
one that derives the pairwise masks, so that rebuilding a dropped party's mask key opens no
share). Here the dealer and the holder agree ``X25519(c_dealer, C_holder)``; HKDF-SHA256
derives one AES-256-GCM key per direction and sum, which seals exactly one record (so its
fixed nonce is never reused), with the sum, the dealer and the holder as associated data.

A record holds the holder's Shamir point and its shares of the dealer's mask key and
self-mask seed (:func:`share_record`). :func:`open_records` opens a message's records with
the holders' private keys alone: how a coalition's View opens the shares its members hold.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fedsec.backends import shamir, tags
from fedsec.errors import CapabilityError

SCHEME = "X25519-HKDF-SHA256-AES256GCM"
PUBLIC_BYTES = 32
_POINT = struct.Struct(">I")
RECORD_BYTES = _POINT.size + 2 * shamir.SHARE_BYTES
"""A record: the holder's point, its share of the mask key, its share of the self-mask seed."""
SEALED_BYTES = RECORD_BYTES + 16
"""A sealed record: the record and its GCM tag."""
_NONCE = bytes(12)


def private_key(material: bytes) -> X25519PrivateKey:
    """The X25519 private key of 32 bytes of ``material`` (any 32 bytes are one)."""
    return X25519PrivateKey.from_private_bytes(material)


def public_bytes(private: X25519PrivateKey) -> bytes:
    """The raw 32-byte public key of ``private``."""
    return private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def shared_secret(private: X25519PrivateKey, peer_public: bytes) -> bytes:
    """The raw X25519 secret of ``private`` and the peer's raw public key."""
    return private.exchange(X25519PublicKey.from_public_bytes(peer_public))


def direction_key(shared: bytes, label: str, dealer: str, holder: str) -> bytes:
    """The AES-256-GCM key that seals ``dealer``'s record to ``holder`` in the sum ``label``."""
    info = f"fedsec-share-seal\x00{label}\x00{dealer}\x00{holder}".encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(shared)


def associated_data(label: str, dealer: str, holder: str) -> bytes:
    """What a sealed record is bound to: its sum, its dealer, its holder."""
    return f"{label}\x00{dealer}\x00{holder}".encode()


def seal(key: bytes, record: bytes, aad: bytes) -> bytes:
    """``record`` sealed under ``key`` (one record per key: the nonce is fixed)."""
    return AESGCM(key).encrypt(_NONCE, record, aad)


def unseal(key: bytes, sealed: bytes, aad: bytes) -> bytes:
    """The record inside ``sealed``; refused when the key, the route or the bytes differ."""
    try:
        return AESGCM(key).decrypt(_NONCE, sealed, aad)
    except InvalidTag:
        raise CapabilityError("A sealed key share does not open: it was altered, re-routed or "
                              "sealed to another holder.") from None


def share_record(point: int, mask_key_share: int, self_seed_share: int) -> bytes:
    """One holder's record: its point, then its two shares (fixed width).

    Examples
    --------
    >>> parse_record(share_record(3, 5, 7))
    (3, 5, 7)
    """
    return (_POINT.pack(point) + shamir.to_bytes(mask_key_share)
            + shamir.to_bytes(self_seed_share))


def parse_record(record: bytes) -> tuple[int, int, int]:
    """Inverse of :func:`share_record`: (point, mask-key share, self-seed share)."""
    if len(record) != RECORD_BYTES:
        raise CapabilityError(f"A key-share record is {RECORD_BYTES} bytes; got {len(record)}.")
    (point,) = _POINT.unpack_from(record)
    width = shamir.SHARE_BYTES
    start = _POINT.size
    return (point, int.from_bytes(record[start:start + width], "big"),
            int.from_bytes(record[start + width:], "big"))


def split_sealed(payload: bytes, count: int) -> list[bytes]:
    """The ``count`` sealed records of a payload, in order."""
    if len(payload) != count * SEALED_BYTES:
        raise CapabilityError(f"A payload of {count} sealed key shares is "
                              f"{count * SEALED_BYTES} bytes; got {len(payload)}.")
    return [payload[i * SEALED_BYTES:(i + 1) * SEALED_BYTES] for i in range(count)]


def open_records(payload: bytes, meta: Mapping[str, Any],
                 keys: Mapping[str, bytes]) -> list[tuple[str, str, bytes]]:
    """``(dealer, holder, record)`` of every record in a sealed-shares message that a key in
    ``keys`` (holders' private seal keys, by key id) opens; the others are skipped.

    Opening needs nothing but the message and the holder's key: the dealer's public key
    travels in the metadata.
    """
    dealers: Sequence[str] = meta[tags.FROM]
    holders: Sequence[str] = meta[tags.TO]
    label = str(meta[tags.ROUND])
    out = []
    for sealed, dealer, holder, public_hex in zip(
            split_sealed(payload, len(dealers)), dealers, holders, meta[tags.SENDER_KEYS],
            strict=True):
        material = keys.get(tags.seal_key_id(holder, label))
        if material is None:
            continue
        shared = shared_secret(private_key(material), bytes.fromhex(public_hex))
        key = direction_key(shared, label, dealer, holder)
        out.append((dealer, holder, unseal(key, sealed, associated_data(label, dealer, holder))))
    return out
