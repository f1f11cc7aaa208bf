"""The bytes of one message on a connection between party processes.

A frame is a JSON header after its length (4 bytes, big-endian), then raw bytes: for a
message, the header is canonical JSON (:func:`fedsec.transcript.message.canonical_json`) and
the bytes are the payload's wire bytes as :func:`fedsec.transcript.payload.encode` gives them.
Nothing is pickled: a frame decodes into JSON values and bytes only. The header of a message
frame holds every field the transcript's chain covers, so the frame of a recorded message can
be rebuilt from the transcript (:func:`message_frame`) and its digest compared with the
digests the party processes logged. This module imports neither numpy nor the transcript
package when it loads, so a party's process starts quickly.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from blake3 import blake3

from fedsec.errors import TransportError

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.transcript import Message

_LENGTH = struct.Struct("!I")
_SIZE = struct.Struct("!Q")
#: Frames up to this size go to a control socket in one write with their length.
_SMALL = 1 << 16


def pack(fields: Mapping[str, Any], raw: bytes | memoryview = b"") -> bytes:
    """One message frame: the header ``fields`` as canonical JSON, then ``raw``.

    Examples
    --------
    >>> fields, raw = unpack(pack({"seq": 0, "tag": "x"}, b"xy"))
    >>> fields, bytes(raw)
    ({'seq': 0, 'tag': 'x'}, b'xy')
    """
    from fedsec.transcript.message import canonical_json  # the coordinator's side only

    return _join(canonical_json(fields), raw)


def pack_control(fields: Mapping[str, Any], raw: bytes | memoryview = b"") -> bytes:
    """One frame between the coordinator and a party's process (a request or a reply);
    nothing digests it, so its header is plain JSON."""
    return _join(json.dumps(fields, allow_nan=False), raw)


def _join(head: str, raw: bytes | memoryview) -> bytes:
    encoded = head.encode("utf-8")
    return b"".join((_LENGTH.pack(len(encoded)), encoded, raw))


def unpack(frame: bytes | bytearray | memoryview) -> tuple[dict[str, Any], memoryview]:
    """The header and the raw bytes of a frame (the bytes as a view into ``frame``)."""
    view = memoryview(frame)
    if len(view) < _LENGTH.size:
        raise TransportError(f"A frame of {len(view)} bytes is too short to hold its header.")
    (n,) = _LENGTH.unpack_from(view)
    end = _LENGTH.size + n
    if end > len(view):
        raise TransportError(f"A frame announces a header of {n} bytes but holds only "
                             f"{len(view) - _LENGTH.size}.")
    try:
        fields = json.loads(bytes(view[_LENGTH.size:end]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TransportError(f"A frame's header is not JSON: {error}.") from None
    if not isinstance(fields, dict):
        raise TransportError("A frame's header must be a JSON object.")
    return fields, view[end:]


def message_fields(*, seq: int, round: int, phase: str, sender: str, receiver: str, tag: str,
                   kind: str, protection: str, key_id: str, dtype: str,
                   shape: tuple[int, ...], size: int, meta: Mapping[str, Any] | None
                   ) -> dict[str, Any]:
    """The header of a message frame: every field the transcript's chain covers."""
    return {"seq": seq, "round": round, "phase": phase, "sender": sender,
            "receiver": receiver, "tag": tag, "kind": kind, "protection": protection,
            "key_id": key_id, "dtype": dtype, "shape": list(shape), "size": size,
            "meta": dict(meta or {})}


def message_frame(message: Message) -> bytes:
    """The frame that carried a recorded message (what its sender's process sent)."""
    from fedsec.transcript.payload import encode

    kind, dtype, shape, raw = encode(message.payload)
    return pack(message_fields(
        seq=message.seq, round=message.round, phase=message.phase, sender=message.sender,
        receiver=message.receiver, tag=message.tag, kind=kind, protection=message.protection,
        key_id=message.key_id, dtype=dtype, shape=shape, size=message.size, meta=message.meta,
    ), raw)


def digest(frame: bytes | memoryview) -> str:
    """The BLAKE3 digest of a frame, in hex: what each end of a link computes and logs."""
    return blake3(frame).hexdigest()


def socket_bytes(frame_length: int) -> int:
    """Bytes a frame of ``frame_length`` takes on a :mod:`multiprocessing.connection` socket:
    the connection's own length prefix (4 bytes; 12 above 2 GiB) and the frame.

    Examples
    --------
    >>> socket_bytes(100)
    104
    """
    return frame_length + (4 if frame_length <= 0x7FFFFFFF else 12)


def send(sock: socket.socket, frame: bytes) -> int:
    """Write one frame to a control socket after its length (8 bytes); the bytes written.

    The socket's timeout, when it has one, bounds the whole write.
    """
    n = len(frame)
    if n <= _SMALL:
        sock.sendall(_SIZE.pack(n) + frame)
    else:  # no copy of a large frame
        sock.sendall(_SIZE.pack(n))
        sock.sendall(frame)
    return _SIZE.size + n


def receive(sock: socket.socket) -> bytearray:
    """Read one frame :func:`send` wrote; EOFError when the other end has closed."""
    (n,) = _SIZE.unpack(_exactly(sock, _SIZE.size))
    return _exactly(sock, n)


def _exactly(sock: socket.socket, n: int) -> bytearray:
    buffer = bytearray(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("the other end closed the connection")
        got += k
    return buffer
