"""Building blocks protocols call instead of touching a backend's operations directly.

Each records what crosses the network, with public facts about the protected
payload in the message metadata and the time spent on protection (encoding,
masking, encryption, serialization) in the message's ``crypto_seconds``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.backends.api import DIRECT, SUM, MaskingBackend
from fedsec.errors import ValidationError
from fedsec.interfaces import check_operations

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

CONTRIBUTION_TAG = "secure_sum.contribution"


def secure_sum(
    federation: Federation, backend: MaskingBackend, vectors: Mapping[str, np.ndarray],
    aggregator: str, *, tag: str = CONTRIBUTION_TAG, meta: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Sum one vector per sender at ``aggregator``; only the sum is revealed to it.

    Each sender protects its vector with ``backend`` and sends it under
    ``tag``; the aggregator combines the protected contributions and reveals
    only their sum (through the key holders when it holds no key). How much
    one contribution reveals is the backend's property: ``plain`` reveals
    everything. A backend that simulates dropouts (``noise`` with a
    ``threshold``) leaves some senders out (:meth:`MaskingBackend.start_sum`):
    the sum is then the survivors'.

    Parameters
    ----------
    federation : Federation
        The run's parties and network.
    backend : MaskingBackend
        Protection in transit; must support ``sum``.
    vectors : Mapping[str, numpy.ndarray]
        Sender name to its vector (all of one length).
    aggregator : str
        The party that learns the sum.
    """
    check_operations(backend, {"sum"}, who="secure_sum")
    if not vectors:
        raise ValidationError("secure_sum needs at least one sender.")
    if aggregator in vectors:
        raise ValidationError(f"The aggregator {aggregator!r} cannot also be a sender.")
    lengths = {np.size(v) for v in vectors.values()}
    if len(lengths) != 1:
        raise ValidationError(f"secure_sum needs vectors of one length; got {sorted(lengths)}.")
    net = federation.network
    context = backend.setup(federation, senders=list(vectors), receiver=aggregator, mode=SUM)
    nonce = context.next_nonce(tag)
    length = lengths.pop()
    arriving = backend.start_sum(federation, context, nonce)  # all, unless some drop
    with net.stage("offline"):
        for party in [*arriving, aggregator]:
            with net.compute(party):
                backend.prepare(context, party, length)
    received = []
    for sender in arriving:
        received.append(_protect_and_send(federation, backend, context, sender, aggregator,
                                          np.asarray(vectors[sender]), nonce, tag, meta))
    with net.compute(aggregator):
        total = backend.sum(received)
    return backend.reveal(federation, context, total)


def masked_send(
    federation: Federation, backend: MaskingBackend, sender: str, receiver: str,
    values: np.ndarray, *, tag: str, meta: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Send ``values`` protected so that only ``receiver`` (the designated remover) opens them.

    Anyone else on the link sees only the protected payload. Returns the
    values as the receiver recovers them.
    """
    net = federation.network
    context = backend.setup(federation, senders=[sender], receiver=receiver, mode=DIRECT)
    nonce = context.next_nonce(tag)
    arrived = _protect_and_send(federation, backend, context, sender, receiver,
                                np.asarray(values), nonce, tag, meta)
    with net.compute(receiver):
        return backend.reveal(federation, context, arrived).reshape(np.shape(values))


def direct_send(
    federation: Federation, backend: MaskingBackend, sender: str, receiver: str,
    values: np.ndarray | bytes, *, tag: str, meta: Mapping[str, Any] | None = None,
) -> Any:
    """Send ``values`` that ``receiver`` reads itself, protected from everyone else on the link.

    Under ``plain`` one message carries the values as they are (their own type), as a protocol
    without a backend sends them. Under any other backend :func:`masked_send` carries them:
    encrypted to the receiver's key (``paillier``, ``ckks``: the receiver holds the secret key),
    or masked with a key only the sender and the receiver share (``noise``, its ``direct``
    mode): an eavesdropper sees only the protected payload. Returns the values as the receiver
    has them, in their own type: integers rounded (CKKS is approximate), ``bytes`` sent as one
    integer per byte.
    """
    if backend.name == "plain":
        return federation.network.send(sender, receiver, tag, values, meta=meta)
    raw = isinstance(values, bytes)
    arr = np.frombuffer(values, dtype=np.uint8) if raw else np.asarray(values)
    got = masked_send(federation, backend, sender, receiver, arr.astype(np.float64), tag=tag,
                      meta=meta)
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        got = np.rint(got).astype(arr.dtype)
        return got.tobytes() if raw else got
    return got.astype(arr.dtype, copy=False)


def _protect_and_send(federation: Federation, backend: MaskingBackend, context: Any, sender: str,
                      receiver: str, values: np.ndarray, nonce: str, tag: str,
                      meta: Mapping[str, Any] | None) -> Any:
    net = federation.network
    start = time.perf_counter()
    with net.compute(sender):
        wire = backend.to_wire(backend.protect(context, sender, values.ravel(), nonce=nonce))
    crypto = time.perf_counter() - start
    arrived = net.send(sender, receiver, tag, wire, meta=meta, crypto_seconds=crypto)
    start = time.perf_counter()
    with net.compute(receiver):
        protected = backend.from_wire(context, receiver, arrived)
    net.add_crypto_seconds(receiver, time.perf_counter() - start)
    return protected
