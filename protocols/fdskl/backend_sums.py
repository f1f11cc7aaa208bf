"""FDSKL's sums through a masking backend, in place of the paper's offsets and trees.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically Partitioned
Data", Algorithm 3 hides each worker's partial dot product ``(w_j)_{G_l}^T (x_i)_{G_l}`` with
offsets summed along a tree T1 and removed along a totally different tree T2. Under a masking
backend other than ``plain`` the backend does that work instead
(:class:`BackendAlgorithm3`):

* every worker but the requester protects its partial products for the batch's pairs (the
  feature's phase holder ``l'`` adds the phase ``b_j`` to its own) and sends them to the
  requester, which opens only their sum (:func:`~fedsec.backends.primitives.secure_sum`; with
  one other worker, :func:`~fedsec.backends.primitives.masked_send`, whose value is then the
  sum) and adds its own partial products: ``w_j^T x_i + b_j``, what Algorithm 3 delivers. No
  offsets are drawn and T2 does not run; a worker on the way sees only protected values.
* ``l'`` is drawn among the other workers as in the paper, leaving out the party that decrypts
  the requester's sums when the backend has one (``paillier``, ``ckks``: one sender holds the
  key, :func:`decrypting_parties`), so that party, which sees the sum of the other workers'
  shares, never also knows its phase. With ``offsets="none"`` the requester holds the phase,
  as it does without a backend.
* the partial predictions ``f^l(x_i)`` of the active workers go to the picker the same way
  (:func:`sum_to`).

What the requester opens is what the paper's requester computes (``w_j^T x_i + b_j``, with
the phase unknown to it); under ``noise`` it unmasks that sum itself, so no message shows it.
The kernel width's statistics and the median heuristic's distances still travel as the paper
sends them (along T1, with offsets), as do the tree plans and announcements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.backends.api import SUM, MaskingBackend
from fedsec.backends.primitives import masked_send, secure_sum
from fedsec.errors import CapabilityError
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.sums import Pairs

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


def uses_masking(backend: MaskingBackend) -> bool:
    """Whether FDSKL sums through ``backend`` (anything but ``plain``) instead of its trees."""
    return backend.name != "plain"


def check_complete_sums(backend: MaskingBackend) -> None:
    """Refuse a backend configured to drop senders: every worker's share is needed."""
    params = getattr(backend, "params", None)
    if getattr(params, "dropout", 0.0) > 0 or getattr(params, "dropped", ""):
        raise CapabilityError(
            f"FDSKL needs every worker's partial products in each sum, so the {backend.name!r} "
            "backend cannot drop senders (dropout or dropped); run it without them.")


def sum_to(federation: Federation, backend: MaskingBackend, shares: Mapping[str, np.ndarray],
           receiver: str, tag: str, meta: Mapping[str, Any]) -> np.ndarray:
    """The sum of ``shares`` (sender → vector), opened by ``receiver`` alone; one sender's
    vector goes by :func:`masked_send` (the sum is then that vector)."""
    if len(shares) == 1:
        ((sender, value),) = shares.items()
        return masked_send(federation, backend, sender, receiver, value, tag=tag, meta=meta)
    return secure_sum(federation, backend, shares, receiver, tag=tag, meta=meta)


def decrypting_parties(federation: Federation, backend: MaskingBackend,
                       workers: Sequence[str], active: Sequence[str]) -> dict[str, str | None]:
    """Per requester, the other worker that decrypts its sums (None when none does).

    Sets up the keys of each requester's sum now (the same group as :func:`sum_to` uses
    later); a backend whose sum needs a key holder names it in its context.
    """
    out: dict[str, str | None] = {}
    for a in active:
        senders = [n for n in workers if n != a]
        if len(senders) < 2:
            out[a] = None
            continue
        context = backend.setup(federation, senders=senders, receiver=a, mode=SUM)
        holder = context.state.get("keyholder")
        out[a] = holder if holder in senders else None
    return out


@dataclass
class BackendAlgorithm3:
    """Algorithm 3's result for one requester, summed by the masking backend.

    ``phase_holder[j]`` is feature ``j``'s ``l'`` (an index into ``workers``): the worker that
    adds the phase ``phases[j]`` to its partial products.
    """

    federation: Federation
    backend: MaskingBackend
    workers: tuple[str, ...]
    requester: str
    phase_holder: np.ndarray
    phases: np.ndarray
    transform: Callable[[str, np.ndarray], np.ndarray]

    def run(self, pairs: Pairs, partials: Callable[[str], np.ndarray],
            new_features: np.ndarray, meta: Mapping[str, Any], *,
            masked: bool = False) -> np.ndarray:
        """``w_j^T x_i + b_j`` at the requester for every pair (``partials(w)``: worker ``w``'s
        partial products, without offsets; ``new_features`` and ``masked`` are unused: no
        offsets exist to remove)."""
        net = self.federation.network
        holders = self.phase_holder[pairs.features]
        shares = {}
        for i, w in enumerate(self.workers):
            value = partials(w)
            with net.compute(w):
                mine = holders == i
                if mine.any():
                    value = np.where(mine, value + self.phases[pairs.features], value)
                shares[w] = self.transform(w, value)
        own = shares.pop(self.requester)
        sent = {**meta, tags.REQUESTER: self.requester, tags.PAIRS: pairs.segments,
                tags.TREE: tags.BACKEND_SUM}
        total = sum_to(self.federation, self.backend, shares, self.requester, tags.PARTIAL_DOT,
                       sent)
        with net.compute(self.requester):
            return np.asarray(total, dtype=np.float64) + own
