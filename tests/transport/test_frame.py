"""Frames on the links between party processes: exact, pickle-free, and counted as the
socket carries them."""

from __future__ import annotations

import socket
import threading
from multiprocessing.connection import Connection

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedsec.errors import TransportError
from fedsec.transcript import TranscriptWriter
from fedsec.transcript.message import canonical_json
from fedsec.transport.frame import (
    message_frame,
    pack,
    pack_control,
    receive,
    send,
    socket_bytes,
    unpack,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**60, 2**60)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10,
)


@given(fields=st.dictionaries(st.text(max_size=6), JSON, max_size=4), raw=st.binary(max_size=64))
def test_a_frame_gives_back_its_header_and_bytes(fields: dict, raw: bytes) -> None:
    for packed in (pack(fields, raw), pack_control(fields, raw)):
        header, body = unpack(packed)
        assert header == fields and bytes(body) == raw
    # canonical: the header of a message frame is what the transcript hashes as its metadata
    assert canonical_json(unpack(pack(fields))[0]) == canonical_json(fields)


@pytest.mark.parametrize("frame", [b"", b"\x00\x00", b"\x00\x00\x00\x09{}",
                                   b"\x00\x00\x00\x02[]", b"\x00\x00\x00\x02\xff\xfe"])
def test_a_malformed_frame_is_refused(frame: bytes) -> None:
    with pytest.raises(TransportError, match="frame"):
        unpack(frame)


def test_the_frame_of_a_recorded_message_is_rebuilt_from_the_transcript() -> None:
    writer = TranscriptWriter({})
    writer.record(round=2, phase="up", sender="a", receiver="b", tag="t",
                  payload=np.arange(6.0).reshape(2, 3), meta={"w": 0.5, "k": [1, 2]})
    (message,) = writer.close().messages
    header, body = unpack(message_frame(message))
    assert header == {"seq": 0, "round": 2, "phase": "up", "sender": "a", "receiver": "b",
                      "tag": "t", "kind": "array", "protection": "plain", "key_id": "",
                      "dtype": "<f8", "shape": [2, 3], "size": 48,
                      "meta": {"k": [1, 2], "w": 0.5}}
    assert bytes(body) == np.arange(6.0).tobytes()


@pytest.mark.parametrize("n", [0, 100, 70_000])
def test_socket_bytes_is_what_a_connection_writes_to_its_socket(n: int) -> None:
    ours, theirs = socket.socketpair()
    connection = Connection(ours.detach())

    def write() -> None:  # a thread: a large frame fills the socket's buffer
        connection.send_bytes(b"x" * n)
        connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    with theirs:
        theirs.settimeout(10)
        seen = 0
        while chunk := theirs.recv(1 << 16):
            seen += len(chunk)
    writer.join(10)
    assert seen == socket_bytes(n)


def test_control_frames_cross_a_socket_whole() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.settimeout(10)
        big = pack_control({"op": "send"}, bytes(range(256)) * 1000)
        written: list[int] = []
        writer = threading.Thread(target=lambda: written.append(send(ours, big)))
        writer.start()
        assert bytes(receive(theirs)) == big
        writer.join(10)
        assert written == [8 + len(big)]
        ours.close()
        with pytest.raises(EOFError):
            receive(theirs)
