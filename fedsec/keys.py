"""Key material a party holds, and fingerprints that name it in transcripts."""

from __future__ import annotations

import hashlib

from fedsec.errors import CapabilityError, ValidationError


def fingerprint(material: bytes) -> str:
    """A short public name for key material: the first 16 bytes of its SHA-256, in hex."""
    return hashlib.sha256(material).hexdigest()[:32]


class KeyStore:
    """The keys and shared seeds one party holds, by key id.

    Secret material never enters a transcript; only its fingerprint does.

    Examples
    --------
    >>> ks = KeyStore("alice")
    >>> ks.put("pair/alice+bob", b"0123456789abcdef0123456789abcdef")
    >>> "pair/alice+bob" in ks
    True
    """

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._material: dict[str, bytes] = {}
        self._public: dict[str, bool] = {}

    def put(self, key_id: str, material: bytes, *, public: bool = False) -> None:
        """Store ``material`` under ``key_id``; a different value under a held id is refused."""
        if not isinstance(material, (bytes, bytearray)):
            raise ValidationError(
                f"Key material for {key_id!r} must be bytes. Got {type(material).__name__} instead;"
                " serialize keys before storing them."
            )
        held = self._material.get(key_id)
        if held is not None and held != bytes(material):
            raise ValidationError(
                f"Party {self.owner!r} already holds a different key under {key_id!r}; "
                "use a new id."
            )
        self._material[key_id] = bytes(material)
        self._public[key_id] = public

    def get(self, key_id: str) -> bytes:
        """The material of ``key_id``; refused when this party does not hold it."""
        try:
            return self._material[key_id]
        except KeyError:
            held = ", ".join(sorted(self._material)) or "none"
            raise CapabilityError(
                f"Party {self.owner!r} does not hold key {key_id!r} (it holds: {held})."
            ) from None

    def __contains__(self, key_id: object) -> bool:
        return key_id in self._material

    def ids(self) -> tuple[str, ...]:
        """Ids of every key held, sorted."""
        return tuple(sorted(self._material))

    def is_public(self, key_id: str) -> bool:
        """Whether ``key_id`` is public material."""
        self.get(key_id)
        return self._public[key_id]

    def fingerprint(self, key_id: str) -> str:
        """The fingerprint of ``key_id``."""
        return fingerprint(self.get(key_id))

    def export(self) -> dict[str, bytes]:
        """Every key as ``{key_id: material}``, for the auditor's private store."""
        return dict(self._material)
