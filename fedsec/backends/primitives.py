"""Building blocks protocols call instead of touching a backend's operations directly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.errors import ValidationError
from fedsec.interfaces import MaskingBackend, check_operations

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

CONTRIBUTION_TAG = "secure_sum.contribution"


def secure_sum(
    federation: Federation, backend: MaskingBackend, vectors: Mapping[str, np.ndarray],
    aggregator: str, *, tag: str = CONTRIBUTION_TAG, meta: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Sum one vector per sender at ``aggregator``; only the sum is revealed to it.

    Each sender protects its vector with ``backend`` and sends it under
    ``tag``; the aggregator combines the protected contributions and opens
    only their sum. How much an individual contribution reveals is the
    backend's property (``plain`` reveals everything).

    Parameters
    ----------
    federation : Federation
        The run's parties and network.
    backend : MaskingBackend
        Protection in transit; must support ``sum``.
    vectors : Mapping[str, numpy.ndarray]
        Sender name to its vector (all the same shape).
    aggregator : str
        The party that learns the sum.
    """
    check_operations(backend, {"sum"}, who="secure_sum")
    if not vectors:
        raise ValidationError("secure_sum needs at least one sender.")
    if aggregator in vectors:
        raise ValidationError(f"The aggregator {aggregator!r} cannot also be a sender.")
    net = federation.network
    backend.setup(federation, senders=list(vectors), receiver=aggregator)
    received = []
    for sender, values in vectors.items():
        with net.compute(sender):
            wire = backend.protect(federation, sender, np.asarray(values), receiver=aggregator)
        received.append(net.send(sender, aggregator, tag, wire, meta=meta))
    with net.compute(aggregator):
        total = backend.aggregate(federation, aggregator, received)
        return backend.reveal(federation, aggregator, total)
