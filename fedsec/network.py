"""The only channel between parties: delivers payloads, records them, counts cost."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from fedsec.errors import UnknownNameError, ValidationError
from fedsec.transcript import Transcript, TranscriptWriter
from fedsec.transcript.message import check_name
from fedsec.wire import Wire

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.transport.tcp import TcpTransport


class Network:
    """Delivers messages between named parties and records each in the transcript.

    Every ``send`` is one message on one link; ``broadcast`` and ``gather``
    are conveniences that send one message per link. Cost (bytes on the wire,
    message counts) is derived from the recorded messages; local compute time
    is measured with :meth:`compute`.

    Parameters
    ----------
    writer : TranscriptWriter
        Where messages are recorded.
    parties : Mapping[str, str]
        Party name to role.
    transport : TcpTransport, optional
        Carries each message between party processes before it is recorded
        (:mod:`fedsec.transport.tcp`; open it before the first send). Without one,
        delivery is a function call in this process.

    Examples
    --------
    >>> import numpy as np
    >>> net = Network(TranscriptWriter({}), {"a": "client", "b": "server"})
    >>> with net.stage("upload", round=0):
    ...     got = net.send("a", "b", "vector", np.ones(3))
    >>> got.tolist(), net.writer.n_messages
    ([1.0, 1.0, 1.0], 1)
    """

    def __init__(self, writer: TranscriptWriter, parties: Mapping[str, str], *,
                 transport: TcpTransport | None = None) -> None:
        self.writer = writer
        self.transport = transport
        self.parties = dict(parties)
        for name in self.parties:
            check_name(name, "party name")
        self.round = 0
        self.phase = "setup"
        self._checked: set[str] = set()
        self._compute: dict[tuple[str, int, str], float] = defaultdict(float)
        self._crypto: dict[tuple[str, int, str], float] = defaultdict(float)
        self._clock = time.perf_counter

    @contextmanager
    def stage(self, phase: str, round: int | None = None) -> Iterator[None]:
        """Record messages sent inside the block under ``phase`` (and ``round``)."""
        self._check(phase, "phase")
        saved = (self.round, self.phase)
        self.phase = phase
        if round is not None:
            if isinstance(round, bool) or not isinstance(round, int) or round < 0:
                raise ValidationError(f"A round must be an int >= 0. Got {round!r} instead.")
            self.round = round
        try:
            yield
        finally:
            self.round, self.phase = saved

    def compute(self, party: str) -> _ComputeTimer:
        """Count the time spent inside the ``with`` block as ``party``'s local computation."""
        self._party(party)
        return _ComputeTimer(self, party)

    def send(
        self, sender: str, receiver: str, tag: str, payload: Any, *, protection: str = "plain",
        key_id: str = "", meta: Mapping[str, Any] | None = None, size: int | None = None,
        crypto_seconds: float = 0.0,
    ) -> Any:
        """Deliver ``payload`` from ``sender`` to ``receiver`` and return what arrives.

        The value returned is decoded from the recorded wire bytes (arrays are
        read-only), so the receiver gets exactly what the transcript shows. A
        :class:`~fedsec.wire.Wire` from a masking backend carries its own
        protection, key id and metadata, and arrives as a Wire.
        """
        if isinstance(payload, Wire):
            got = self.send(
                sender, receiver, tag, payload.payload, protection=payload.protection,
                key_id=payload.key_id, meta={**payload.meta, **(meta or {})}, size=size,
                crypto_seconds=crypto_seconds,
            )
            return Wire(got, payload.protection, payload.key_id, payload.meta)
        parties, checked = self.parties, self._checked  # (inline: this runs per message)
        if sender not in parties or receiver not in parties:
            self._party(sender)
            self._party(receiver)
        if tag not in checked or protection not in checked:
            self._check(tag, "tag")
            self._check(protection, "protection")
        if self.transport is not None:
            return self.transport.deliver(
                self.writer, round=self.round, phase=self.phase, sender=sender,
                receiver=receiver, tag=tag, payload=payload, protection=protection,
                key_id=key_id, meta=meta, size=size, crypto_seconds=crypto_seconds,
            )
        return self.writer.record(
            round=self.round, phase=self.phase, sender=sender, receiver=receiver, tag=tag,
            payload=payload, protection=protection, key_id=key_id, meta=meta, size=size,
            crypto_seconds=crypto_seconds,
        )

    def broadcast(
        self, sender: str, receivers: Iterable[str], tag: str, payload: Any, **options: Any
    ) -> dict[str, Any]:
        """Send the same payload to each receiver (one message per link)."""
        return {r: self.send(sender, r, tag, payload, **options) for r in receivers}

    def gather(
        self, payloads: Mapping[str, Any], receiver: str, tag: str, **options: Any
    ) -> dict[str, Any]:
        """Each sender in ``payloads`` sends its payload to ``receiver``."""
        return {s: self.send(s, receiver, tag, p, **options) for s, p in payloads.items()}

    def add_crypto_seconds(self, party: str, seconds: float) -> None:
        """Count cryptographic work a party did on something it received (decryption, parsing)."""
        self._crypto[(party, self.round, self.phase)] += seconds

    def crypto_seconds(self) -> dict[tuple[str, int, str], float]:
        """Cryptographic time per (party, round, phase) not attached to a sent message."""
        return dict(self._crypto)

    def compute_seconds(self) -> dict[tuple[str, int, str], float]:
        """Measured local computation time per (party, round, phase)."""
        return dict(self._compute)

    def close(self, error: BaseException | None = None) -> Transcript:
        """Finish the transcript (as aborted when ``error`` is given).

        With a transport, its party processes are stopped and their logs checked first (a
        failure there aborts the transcript and is raised), and they are ended in any case.
        """
        if self.transport is not None:
            try:
                if error is None:
                    self.transport.finish()
            except BaseException as failure:
                self.writer.abort(failure)
                raise
            finally:
                self.transport.shutdown()
        return self.writer.close() if error is None else self.writer.abort(error)

    def _party(self, name: str) -> None:
        if name not in self.parties:
            raise UnknownNameError("party", name, self.parties)

    def _check(self, value: str, what: str) -> None:
        if value not in self._checked:
            check_name(value, what)
            self._checked.add(value)


class _ComputeTimer:
    """The context manager :meth:`Network.compute` returns (a class: it runs per message)."""

    __slots__ = ("network", "party", "start")

    def __init__(self, network: Network, party: str) -> None:
        self.network = network
        self.party = party

    def __enter__(self) -> None:
        self.start = self.network._clock()

    def __exit__(self, *_exc: object) -> None:
        net = self.network
        net._compute[(self.party, net.round, net.phase)] += net._clock() - self.start
