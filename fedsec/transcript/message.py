"""One recorded message and the hash chain that links messages together."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from hashlib import sha256
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
from blake3 import blake3

from fedsec.errors import ValidationError

#: Names of parties, tags, phases and protections: no separators, no spaces.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:+\-/]*$")

#: The chain's hash function per transcript format: formats 2 to 4 use BLAKE3, about four
#: times faster than SHA-256 on large payloads; format 1 files used SHA-256. Formats 3 and 4
#: also chain the end record (:func:`seal`). Formats 1 to 3 chain each message on its own
#: (:func:`link`); format 4 (written now) chains them column by column, a batch at a time
#: (:mod:`fedsec.transcript.batch_chain`). Every format is still read and verified.
CHAIN_HASHES: dict[str, Callable[[bytes], Any]] = {"1": sha256, "2": blake3, "3": blake3,
                                                   "4": blake3}
#: The metadata of a message that has none (shared, read-only).
NO_META: Mapping[str, Any] = MappingProxyType({})
#: The format :class:`~fedsec.transcript.TranscriptWriter` writes.
CHAIN_FORMAT = "4"
#: The formats whose end record is chained.
SEALED_FORMATS = frozenset({"3", "4"})
#: The chain value a message of a format-4 transcript carries: none (its batch is chained).
NO_DIGEST = b""
#: The end record's fields the seal covers.
SEALED_FIELDS = ("status", "n_messages", "error")


class Message(NamedTuple):
    """A payload that crossed from one party to another (an immutable record).

    Attributes
    ----------
    seq : int
        Position in the transcript, from 0.
    round, phase : int, str
        Protocol round and phase the message belongs to.
    sender, receiver : str
        Party names.
    tag : str
        Semantic tag (``kernel_block``, ``masked_residual``, ...).
    kind : str
        ``"array"`` or ``"bytes"`` (see :mod:`fedsec.transcript.payload`).
    protection : str
        How the payload is protected (``plain``, ``noise``, ``paillier``,
        ``ckks``, ``secret`` for key material shown only by fingerprint).
    key_id : str
        The key that opens a protected payload; empty for ``plain``.
    dtype, shape : str, tuple of int
        Array layout (empty for bytes).
    payload : numpy.ndarray or bytes
        The value as the receiver got it (arrays are read-only).
    size : int
        Bytes on the wire.
    meta : Mapping
        JSON-able facts an attack needs to interpret the payload (never a
        secret).
    elapsed : float
        Seconds since the run started; not covered by the chain, since two
        runs with one seed differ only there.
    crypto_seconds : float
        Time the sender spent protecting this payload (encoding, masking,
        encryption, serialization); like ``elapsed``, outside the chain.
    digest : bytes
        Chain value after this message in formats 1 to 3 (32 bytes; BLAKE3 in
        formats 2 and 3, SHA-256 in format 1); empty in format 4, which chains
        messages a batch at a time (the transcript's ``footer["head"]`` and
        its batches' checkpoints hold the chain values).
    """

    seq: int
    round: int
    phase: str
    sender: str
    receiver: str
    tag: str
    kind: str
    protection: str
    key_id: str
    dtype: str
    shape: tuple[int, ...]
    payload: np.ndarray | bytes
    size: int
    meta: Mapping[str, Any]
    elapsed: float
    crypto_seconds: float
    digest: bytes

    @property
    def meta_json(self) -> str:
        """The metadata as canonical JSON."""
        return canonical_json(self.meta)


def _mapping_as_dict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(
        f"Message metadata must be JSON-able; {type(value).__name__} is not (convert arrays to "
        "lists, or send them as payloads)."
    )


#: One encoder for every call (``json.dumps`` with these options builds a new one each time).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False,
                              default=_mapping_as_dict)


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces), as hashed and stored.

    Encoded by the C encoder ``json.JSONEncoder.encode`` builds for every call, built once
    here (it runs for every message with metadata); anything it refuses is encoded again by
    :data:`_CANONICAL`, which raises the error ``json`` raises.

    >>> canonical_json({"b": [1, 2.5], "a": None})
    '{"a":null,"b":[1,2.5]}'
    """
    encode = _C_CANONICAL or _c_canonical()
    if encode is None or type(value) is str:
        return _CANONICAL.encode(value)
    try:
        return "".join(encode(value, 0))
    except BaseException:
        _MARKERS.clear()  # (the circular-reference markers of the value that failed)
        return _CANONICAL.encode(value)


#: The circular-reference markers of :data:`_C_CANONICAL` (empty between calls).
_MARKERS: dict[int, Any] = {}
_C_CANONICAL: Callable[[Any, int], Any] | None = None


def _c_canonical() -> Callable[[Any, int], Any] | None:
    """Build :data:`_C_CANONICAL` (None where the C encoder is missing, or encodes otherwise
    than :data:`_CANONICAL`)."""
    global _C_CANONICAL
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    c = _CANONICAL
    try:
        encode = make(_MARKERS, c.default, json.encoder.encode_basestring_ascii, None,
                      c.key_separator, c.item_separator, c.sort_keys, c.skipkeys, c.allow_nan)
        sample = {"b": [1, 2.5, True, None, "\u00e9"], "a": {"y": -0.0, "x": ""}}
        same = "".join(encode(sample, 0)) == c.encode(sample)
    except Exception:
        return None
    if not same:
        return None
    _C_CANONICAL = encode
    return encode


def check_name(value: str, what: str) -> str:
    """Refuse names that could not be recorded unambiguously."""
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValidationError(
            f"The {what} {value!r} is not a valid name: use letters, digits and _ . : + - /"
            " (no spaces), starting with a letter, digit or underscore."
        )
    return value


def genesis(header_json: str, version: str = CHAIN_FORMAT) -> bytes:
    """The chain value before the first message, bound to the header."""
    label = f"fedsec-transcript-v{version}".encode()
    return CHAIN_HASHES[version](label + b"\x00" + header_json.encode("utf-8")).digest()


def link(
    previous: bytes, seq: int, round_: int, phase: str, sender: str, receiver: str, tag: str,
    kind: str, protection: str, key_id: str, dtype: str, shape: tuple[int, ...], size: int,
    meta_json: str, raw: bytes | np.ndarray, version: str = CHAIN_FORMAT,
) -> bytes:
    """The chain value of one message given the previous one.

    Every field except the timings ``elapsed`` and ``crypto_seconds`` is
    covered: the fixed fields joined by the unit separator (names cannot
    contain it, JSON escapes it), then the payload bytes after a length prefix.
    ``raw`` is the payload's bytes, or a uint8 array holding them.
    """
    head = (
        f"{seq}\x1f{round_}\x1f{phase}\x1f{sender}\x1f{receiver}\x1f{tag}\x1f{kind}\x1f"
        f"{protection}\x1f{key_id}\x1f{dtype}\x1f{shape}\x1f{size}\x1f{meta_json}\x1f{len(raw)}\x1e"
    )
    new = CHAIN_HASHES[version]
    if len(raw) <= 4096:  # one call is cheaper for small payloads
        return new(previous + head.encode("utf-8") + bytes(raw)).digest()
    h = new(previous + head.encode("utf-8"))
    h.update(raw)
    return h.digest()


def seal(head: bytes, footer: Mapping[str, Any], version: str = CHAIN_FORMAT) -> bytes:
    """The chain value of the end record: the last message's chain value and how the run
    ended (:data:`SEALED_FIELDS`: status, message count, error), so none of them can be edited
    without re-chaining."""
    fields = canonical_json({k: footer.get(k) for k in SEALED_FIELDS})
    label = f"fedsec-transcript-v{version}-end".encode()
    return CHAIN_HASHES[version](label + b"\x00" + head + fields.encode("utf-8")).digest()
