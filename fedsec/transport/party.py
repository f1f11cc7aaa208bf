"""A party's own process under ``--transport tcp``: the endpoint that sends, receives,
digests and logs the party's messages.

The coordinating process (:mod:`fedsec.transport.tcp`) runs the protocol's computation and
asks this process, over its control socket, to send a message frame to a peer, to receive
one from a peer, or to keep one it addressed to itself. Peers connect to each other
directly, on 127.0.0.1, with :mod:`multiprocessing.connection` and the run's authentication
key, on the first message between them; the first frame on a new connection names the party
that opened it. Every frame sent, received or kept is digested (BLAKE3) and logged as one
JSON line: ``{"seq", "event", "peer", "tag", "digest", "bytes"}``.

Any local process can connect to a listener. A connection is greeted in a thread of its own
(the authentication challenge, then the hello naming the party), which must end within
``handshake_timeout`` seconds and reads lengths of at most :data:`MAX_HELLO_BYTES`: a
stranger that connects and closes, announces a 2 GiB frame, or stays silent is dropped, and
the listener goes on taking the peers' connections. At most :data:`MAX_GREETINGS`
connections are greeted at once (more are closed at once; a peer whose connection was closed
so tries again until the transport's timeout). An authenticated peer's frame announces at most
:data:`MAX_FRAME_BYTES`.

This module imports neither numpy nor the transcript package: a party's process starts in a
fraction of the coordinator's start-up time.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, answer_challenge, deliver_challenge
from typing import Any

from fedsec.errors import TransportError
from fedsec.transport.frame import digest, pack_control, receive, send, socket_bytes, unpack

HOST = "127.0.0.1"
#: Seconds a new connection gets to authenticate and name its party.
HANDSHAKE_SECONDS = 10.0
#: The longest hello a connection may announce (it names a party).
MAX_HELLO_BYTES = 4096
#: Connections greeted at the same time; more are closed at once (a peer whose attempt is
#: closed tries again until the transport's timeout).
MAX_GREETINGS = 64
#: The longest frame an authenticated peer may announce (a message's header and payload).
MAX_FRAME_BYTES = 1 << 32


def serve(name: str, control: socket.socket, authkey: bytes, log_path: str,
          timeout: float, handshake_timeout: float = HANDSHAKE_SECONDS) -> None:
    """Serve the coordinator's requests until it says stop or goes away (the process's
    target). Interrupts go to the coordinator, which ends this process itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    endpoint = _Endpoint(name, authkey, timeout, log_path, handshake_timeout)
    try:
        send(control, pack_control({"op": "ready", "port": endpoint.port}))
        while True:
            try:
                request = receive(control)
            except (EOFError, OSError):
                return  # the coordinator went away: nothing is left to do
            fields, body = unpack(request)
            try:
                reply = endpoint.handle(fields, body)
            except Exception as error:  # reported to the coordinator, which stops the run
                reply = pack_control({"op": "failed",
                                      "error": f"{type(error).__name__}: {error}"})
            send(control, reply)
            if fields.get("op") == "stop":
                return
    finally:
        endpoint.close()


def _new_log(path: str) -> Any:
    """The party's log, created afresh and owner-only, never through a link planted there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o600)
    return open(fd, "w", encoding="utf-8", buffering=1)


class _Endpoint:
    """The party's listening socket, its connections to peers, and its log."""

    def __init__(self, name: str, authkey: bytes, timeout: float, log_path: str,
                 handshake_timeout: float = HANDSHAKE_SECONDS) -> None:
        self.name = name
        self.authkey = authkey
        self.timeout = timeout
        self.handshake_timeout = handshake_timeout
        self.listener = socket.create_server((HOST, 0), backlog=128)
        self.port = int(self.listener.getsockname()[1])
        self.closing = False
        self.greeting = threading.BoundedSemaphore(MAX_GREETINGS)
        #: strangers' connections dropped (for tests and the log)
        self.dropped = 0
        self.ports: dict[str, int] = {}
        self.outgoing: dict[str, Connection] = {}
        self.incoming: dict[str, Connection] = {}
        self.arrived = threading.Condition()
        self.log = _new_log(log_path)
        self.counts = {"sent": 0, "received": 0, "kept": 0, "socket_bytes_sent": 0,
                       "socket_bytes_received": 0, "connections_opened": 0}
        threading.Thread(target=self._accept, name=f"accept:{name}", daemon=True).start()

    def handle(self, fields: dict[str, Any], body: memoryview) -> bytes:
        """Carry out one request of the coordinator; the reply to send back."""
        op = fields.get("op")
        if op == "peers":
            self.ports = {str(k): int(v) for k, v in fields["ports"].items()}
            return pack_control({"op": "ok"})
        if op == "send":
            return self._send(body)
        if op == "receive":
            return self._receive(str(fields["from"]), int(fields["seq"]))
        if op == "keep":
            return self._keep(body)
        if op == "stop":
            self.log.close()
            return pack_control({"op": "stopped", **self.counts,
                                 "connections_dropped": self.dropped})
        raise TransportError(f"Unknown request {op!r} from the coordinator.")

    def _send(self, frame: memoryview) -> bytes:
        header, _ = unpack(frame)
        peer = str(header["receiver"])
        if header["sender"] != self.name:
            raise TransportError(f"Asked to send message {header['seq']} as "
                                 f"{header['sender']!r}, but this process is {self.name!r}.")
        connection = self.outgoing.get(peer)
        if connection is None:
            if peer not in self.ports:
                raise TransportError(f"No address for party {peer!r}.")
            connection = self._connect(peer)
            self.outgoing[peer] = connection
            self.counts["connections_opened"] += 1
        connection.send_bytes(frame)
        return self._logged(header, "sent", peer, frame)

    def _connect(self, peer: str) -> Connection:
        """An authenticated connection to ``peer`` that has named this party. An attempt the
        peer's listener closes (it is greeting :data:`MAX_GREETINGS` strangers already) is
        retried, with a growing pause, until the transport's timeout."""
        deadline = time.monotonic() + self.timeout
        pause = 0.05
        while True:
            try:
                connection = Client((HOST, self.ports[peer]), authkey=self.authkey)
                connection.send_bytes(pack_control({"from": self.name}))
                return connection
            except (EOFError, ConnectionError) as error:
                if time.monotonic() + pause > deadline:
                    raise TransportError(
                        f"Party {peer!r} took no connection within {self.timeout:g} s (last "
                        f"attempt: {type(error).__name__}: {error or 'closed'}).") from None
                time.sleep(pause)
                pause = min(2 * pause, 1.0)

    def _receive(self, peer: str, seq: int) -> bytes:
        with self.arrived:
            if not self.arrived.wait_for(lambda: peer in self.incoming, self.timeout):
                raise TransportError(f"Party {peer!r} opened no connection within "
                                     f"{self.timeout:g} s.")
            connection = self.incoming[peer]
        if not connection.poll(self.timeout):
            raise TransportError(f"Nothing arrived from party {peer!r} within "
                                 f"{self.timeout:g} s.")
        try:
            frame = connection.recv_bytes(MAX_FRAME_BYTES)
        except EOFError:
            raise TransportError(f"Party {peer!r} closed its connection.") from None
        except OSError as error:  # multiprocessing's "bad message length" among them
            raise TransportError(
                f"Party {peer!r} sent a frame fedsec refuses ({error}); a frame holds at most "
                f"{MAX_FRAME_BYTES:,} bytes.") from None
        header, _ = unpack(frame)
        if (header["seq"], header["sender"], header["receiver"]) != (seq, peer, self.name):
            raise TransportError(
                f"Expected message {seq} from {peer!r}; got message {header['seq']} from "
                f"{header['sender']!r} to {header['receiver']!r}.")
        return self._logged(header, "received", peer, frame, pack_control)

    def _keep(self, frame: memoryview) -> bytes:
        header, _ = unpack(frame)
        return self._logged(header, "kept", self.name, frame)

    def _logged(self, header: dict[str, Any], event: str, peer: str, frame: bytes | memoryview,
                echo: Any = None) -> bytes:
        """Log one frame; the reply (with the frame itself when ``echo`` packs it)."""
        value = digest(frame)
        n = 0 if event == "kept" else socket_bytes(len(frame))
        self.counts[event] += 1
        if event != "kept":
            self.counts[f"socket_bytes_{event}"] += n
        self.log.write(json.dumps({"seq": header["seq"], "event": event, "peer": peer,
                                   "tag": header["tag"], "digest": value, "bytes": n}) + "\n")
        reply = {"op": event, "digest": value, "bytes": n}
        return echo(reply, frame) if echo is not None else pack_control(reply)

    def _accept(self) -> None:
        """Take connections as they come (a thread); each is greeted in a thread of its own,
        so no connection can hold up the next."""
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                if self.closing:
                    return  # the listener was closed
                time.sleep(0.05)  # out of descriptors, a connection reset before accept ...
                continue
            if not self.greeting.acquire(blocking=False):
                self._drop(sock)
                continue
            threading.Thread(target=self._greet, args=(sock,), daemon=True,
                             name=f"greet:{self.name}").start()

    def _greet(self, sock: socket.socket) -> None:
        """Authenticate a new connection and read the hello naming its party, within the
        handshake deadline; anything else (a stranger) closes it."""
        try:
            greeted = self._handshake(sock)
        finally:
            self.greeting.release()
        if greeted is None:
            return
        peer, connection = greeted
        with self.arrived:
            self.incoming[peer] = connection
            self.arrived.notify_all()

    def _handshake(self, sock: socket.socket) -> tuple[str, Connection] | None:
        lock, over = threading.Lock(), [False]

        def expire() -> None:  # wakes a read blocked on a silent or slow connection
            with lock:
                if not over[0]:
                    over[0] = True
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(self.handshake_timeout, expire)
        timer.daemon = True
        connection = Connection(os.dup(sock.fileno()))
        timer.start()
        try:
            deliver_challenge(connection, self.authkey)
            answer_challenge(connection, self.authkey)
            hello, _ = unpack(connection.recv_bytes(MAX_HELLO_BYTES))
            peer = hello.get("from")
            if not isinstance(peer, str) or not peer:
                raise TransportError("a hello that names no party")
        except (AuthenticationError, EOFError, OSError, ValueError):
            # a stranger: no key, a closed or silent connection, a bad length or hello
            # (TransportError is an OSError)
            connection.close()
            self._drop(sock)
            return None
        finally:
            timer.cancel()
        with lock:
            late, over[0] = over[0], True
        sock.close()  # the connection holds its own descriptor
        if late:
            connection.close()
            self.dropped += 1
            return None
        return peer, connection

    def _drop(self, sock: socket.socket) -> None:
        self.dropped += 1
        with contextlib.suppress(OSError):
            sock.close()

    def close(self) -> None:
        if not self.log.closed:
            self.log.close()
        for connection in (*self.outgoing.values(), *self.incoming.values()):
            connection.close()
        self.closing = True
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept
        self.listener.close()
