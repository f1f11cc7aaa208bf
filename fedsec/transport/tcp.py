"""Messages between party processes over TCP on 127.0.0.1 (``fedsec run --transport tcp``).

The protocol's computation stays in the coordinating process, which calls
:meth:`fedsec.network.Network.send` as it always does. With this transport each party is
also a process of its own (:mod:`fedsec.transport.party`, started with the ``spawn``
method) listening on an ephemeral port of 127.0.0.1, and each message makes this trip:

1. the coordinator hands the message's frame (:mod:`fedsec.transport.frame`: canonical JSON
   header and raw payload bytes, never pickle) to the sender's process over its control
   socket;
2. the sender's process writes it to its own connection to the receiver's process (opened
   directly between the two, on their first message, and authenticated with the run's key)
   and digests what it sent (BLAKE3);
3. the receiver's process reads it, digests what it read, and returns the bytes and its
   digest to the coordinator;
4. the coordinator compares the two digests (a mismatch stops the run, naming the link and
   the message), decodes the payload from the bytes the receiver got, and records it in the
   transcript as the in-process network would: the same seed gives the same chain.

Every party process logs what it sent and received; :meth:`TcpTransport.finish` checks
those logs against the run (:mod:`fedsec.transport.logs`). Every wait is bounded by
``timeout``: a party process that dies or stops answering stops the run with a
:class:`~fedsec.errors.TransportError` naming the party, and every party process is ended.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedsec.errors import TransportError
from fedsec.transcript.payload import decode, encode
from fedsec.transport.frame import (
    digest,
    message_fields,
    pack,
    pack_control,
    receive,
    send,
    unpack,
)
from fedsec.transport.logs import Entry, check_party_logs, log_file
from fedsec.transport.party import HANDSHAKE_SECONDS, HOST, serve
from fedsec.validation import check_float

if TYPE_CHECKING:  # pragma: no cover
    from multiprocessing.process import BaseProcess

    import numpy as np

    from fedsec.transcript import TranscriptWriter

#: Seconds a party process gets to end after the coordinator closes its control socket.
GRACE_SECONDS = 2.0


class TcpTransport:
    """Carries a run's messages between party processes over TCP (see the module's text).

    Parameters
    ----------
    timeout : float
        Seconds the coordinator waits for any party process's answer (and a party process
        for its peer) before the run fails.
    start_timeout : float
        Seconds the party processes get to start and listen.
    handshake_timeout : float
        Seconds a new connection to a party's listener gets to authenticate and name its
        party; a stranger's connection is dropped then, without harm to the run
        (:mod:`fedsec.transport.party`).
    on_delivered : callable, optional
        Called as ``on_delivered(transport, n)`` after the ``n``-th message is recorded; a
        hook for fault-injection tests (:attr:`pids` names each party's process).

    Examples
    --------
    >>> TcpTransport(timeout=0)
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The 'timeout' parameter of the tcp transport must be a \
finite number > 0.0. Got 0.0 instead.
    """

    kind = "tcp"

    def __init__(self, *, timeout: float = 60.0, start_timeout: float = 60.0,
                 handshake_timeout: float = HANDSHAKE_SECONDS,
                 on_delivered: Callable[[TcpTransport, int], None] | None = None) -> None:
        owner = "the tcp transport"
        self.timeout = check_float(timeout, owner=owner, name="timeout", min_value=0.0,
                                   min_inclusive=False)
        self.handshake_timeout = check_float(handshake_timeout, owner=owner,
                                             name="handshake_timeout", min_value=0.0,
                                             min_inclusive=False)
        #: Each party's listening port on 127.0.0.1, once open.
        self.ports: dict[str, int] = {}
        self.start_timeout = check_float(start_timeout, owner=owner, name="start_timeout",
                                         min_value=0.0, min_inclusive=False)
        self.on_delivered = on_delivered
        self.log_dir: Path | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._processes: dict[str, BaseProcess] = {}
        self._controls: dict[str, socket.socket] = {}
        self._entries: list[Entry] = []
        self._stopped: dict[str, dict[str, Any]] = {}
        self._lines_checked = 0
        self.socket_bytes = 0
        self.control_bytes = 0

    @property
    def pids(self) -> dict[str, int]:
        """Each party's process id."""
        return {name: int(p.pid) for name, p in self._processes.items() if p.pid is not None}

    def open(self, parties: Iterable[str], log_dir: str | os.PathLike[str] | None = None
             ) -> None:
        """Start one process per party, wait until each listens, and tell each its peers'
        addresses. Party logs go to ``log_dir`` (a temporary folder when None)."""
        if self._processes:
            raise TransportError("This transport is already open; use one per run.")
        if log_dir is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="fedsec-parties-")
            log_dir = self._scratch.name
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("spawn")
        authkey = os.urandom(32)
        names = list(parties)
        for name in names:
            ours, theirs = socket.socketpair()
            process = context.Process(
                target=serve, name=f"fedsec-party:{name}", daemon=True,
                args=(name, theirs, authkey, str(log_file(self.log_dir, name)), self.timeout,
                      self.handshake_timeout),
            )
            self._processes[name] = process
            self._controls[name] = ours
            process.start()
            theirs.close()
            ours.settimeout(self.timeout)
        ready = self._await(names, self.start_timeout, "starting")
        ports = {name: int(fields["port"]) for name, (fields, _) in ready.items()}
        self.ports = dict(ports)
        for name in names:
            self._request(name, {"op": "peers", "ports": ports}, what="learning its peers")
        self._await(names, self.timeout, "learning its peers")

    def deliver(
        self, writer: TranscriptWriter, *, round: int, phase: str, sender: str, receiver: str,
        tag: str, payload: Any, protection: str, key_id: str, meta: Mapping[str, Any] | None,
        size: int | None, crypto_seconds: float,
    ) -> np.ndarray | bytes:
        """Carry one message between the party processes, check it, record it in ``writer``,
        and return the payload as the receiver got it (as :meth:`TranscriptWriter.record`)."""
        kind, dtype, shape, raw = encode(payload)
        seq = writer.n_messages
        fields = message_fields(
            seq=seq, round=round, phase=phase, sender=sender, receiver=receiver, tag=tag,
            kind=kind, protection=protection, key_id=key_id, dtype=dtype, shape=shape,
            size=len(raw) if size is None else int(size), meta=meta)
        frame = pack(fields, raw)
        what = f"message {seq} ({tag}, {sender} -> {receiver})"
        if sender == receiver:  # a party's own record: logged by its process, never sent
            self._request(sender, {"op": "keep"}, frame, what=what)
            got: bytes | memoryview = frame
            sent = received = self._await([sender], self.timeout, what)[sender][0]
        else:
            self._request(receiver, {"op": "receive", "from": sender, "seq": seq}, what=what)
            self._request(sender, {"op": "send"}, frame, what=what)
            replies = self._await([receiver, sender], self.timeout, what)
            sent = replies[sender][0]
            received, got = replies[receiver]
            self.socket_bytes += int(sent["bytes"])
        value = digest(got)
        if not sent["digest"] == received["digest"] == value:
            raise TransportError(
                f"The digests of {what} differ: the sender's {sent['digest'][:16]}, the "
                f"receiver's {received['digest'][:16]}, of the bytes returned {value[:16]}. "
                f"The frame was altered on the way; the run stops.")
        header, body = unpack(got)
        if header != fields:
            raise TransportError(f"The sender's process sent another frame than {what}: "
                                 f"{header!r}.")
        self._entries.append(Entry(seq, sender, receiver, tag, value))
        delivered = writer.record(
            round=header["round"], phase=header["phase"], sender=header["sender"],
            receiver=header["receiver"], tag=header["tag"],
            payload=decode(header["kind"], header["dtype"], tuple(header["shape"]), body),
            protection=header["protection"], key_id=header["key_id"], meta=header["meta"],
            size=header["size"], crypto_seconds=crypto_seconds,
        )
        if self.on_delivered is not None:
            self.on_delivered(self, seq + 1)
        return delivered

    def finish(self) -> None:
        """Stop every party process and check their logs against the run."""
        names = list(self._processes)
        for name in names:
            self._request(name, {"op": "stop"}, what="stopping")
        self._stopped = {name: fields
                         for name, (fields, _) in self._await(names, self.timeout,
                                                              "stopping").items()}
        assert self.log_dir is not None  # open() set it
        self._lines_checked = check_party_logs(self._entries, self.log_dir, names)

    def shutdown(self) -> None:
        """End every party process (those still running are killed) and free the sockets."""
        for control in self._controls.values():
            control.close()  # a waiting party process reads the end and exits
        deadline = time.monotonic() + GRACE_SECONDS
        for process in self._processes.values():
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self._processes.values():
            if process.is_alive():
                process.kill()  # works on a stopped (SIGSTOP) process too
                process.join(GRACE_SECONDS)
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def describe(self) -> dict[str, Any]:
        """What crossed the sockets, for ``result.json``."""
        stopped = self._stopped.values()
        return {
            "kind": self.kind, "host": HOST, "timeout": self.timeout,
            "party_processes": len(self._processes),
            "messages_on_sockets": sum(int(s.get("sent", 0)) for s in stopped),
            "messages_kept": sum(int(s.get("kept", 0)) for s in stopped),
            "socket_bytes": self.socket_bytes,
            "connections": sum(int(s.get("connections_opened", 0)) for s in stopped),
            "connections_dropped": sum(int(s.get("connections_dropped", 0)) for s in stopped),
            "control_bytes": self.control_bytes,
            "digests_matched": len(self._entries),
            "log_lines_checked": self._lines_checked,
        }

    def _request(self, name: str, fields: Mapping[str, Any], raw: bytes = b"", *,
                 what: str) -> None:
        try:
            self.control_bytes += send(self._controls[name], pack_control(fields, raw))
        except TimeoutError:
            raise self._hung([name], self.timeout, what) from None
        except OSError:
            raise self._died(name, what) from None

    def _await(self, names: Sequence[str], timeout: float, what: str
               ) -> dict[str, tuple[dict[str, Any], memoryview]]:
        """One reply from each of ``names``, or the error naming who died or hung."""
        deadline = time.monotonic() + timeout
        waiting = {self._controls[n]: n for n in names}
        sentinels = {self._processes[n].sentinel: n for n in names}
        replies: dict[str, tuple[dict[str, Any], memoryview]] = {}
        while waiting:
            ready = wait([*waiting, *sentinels], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise self._hung(sorted(waiting.values()), timeout, what)
            ended = {sentinels.pop(item) for item in ready if isinstance(item, int)}
            for name in ended:  # a process that replied and then ended (stop) is not dead
                control = self._controls[name]
                if control in waiting and control not in ready and not wait([control], 0):
                    raise self._died(name, what)
            for item in [*ready, *(self._controls[n] for n in ended)]:
                if not isinstance(item, socket.socket) or item not in waiting:
                    continue
                name = waiting.pop(item)
                sentinels = {k: v for k, v in sentinels.items() if v != name}
                replies[name] = self._reply(item, name, what)
        return replies

    def _reply(self, control: socket.socket, name: str, what: str
               ) -> tuple[dict[str, Any], memoryview]:
        try:
            data = receive(control)
        except TimeoutError:
            raise self._hung([name], self.timeout, what) from None
        except (EOFError, OSError):
            raise self._died(name, what) from None
        self.control_bytes += 8 + len(data)
        fields, body = unpack(data)
        if fields.get("op") == "failed":
            raise self._failed(name, str(fields.get("error")), what)
        return fields, body

    def _died(self, name: str, what: str) -> TransportError:
        process = self._processes[name]
        process.join(GRACE_SECONDS)  # an ended process reports its exit code after a moment
        code = process.exitcode
        if code is None:
            how = "closed its control socket"
        elif code < 0:
            how = f"was killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        return TransportError(
            f"The process of party {name!r} (pid {process.pid}) {how} during {what}; the run "
            "cannot go on without it. The transcript keeps the messages recorded before, "
            "marked aborted.")

    def _hung(self, names: Sequence[str], timeout: float, what: str) -> TransportError:
        who = ", ".join(f"{n!r} (pid {self._processes[n].pid})" for n in names)
        return TransportError(
            f"The process of party {who} did not answer within {timeout:g} s during {what}: "
            "it hangs or is stopped. The run stops (raise --transport-timeout for slow "
            "machines); the transcript keeps the messages recorded before, marked aborted.")

    def _failed(self, name: str, error: str, what: str) -> TransportError:
        for other, process in self._processes.items():  # a failure often follows a death
            process.join(0.2)
            if other != name and process.exitcode is not None:
                return self._died(other, what)
        return TransportError(f"The process of party {name!r} failed during {what}: {error}")
