"""FDSKL's announcements: each picker draws ``l'`` for its new features and sends the indices.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically Partitioned
Data", Algorithm 2 (the picker sends the sample index down its tree T0) and Algorithm 3 (the
worker ``l'`` left out of T2, drawn among the others at random, keeps its offset: the
feature's phase). The workers draw their per-feature offsets as the features are announced.
Under a masking backend (:mod:`.backend_sums`) no offsets are drawn: ``l'`` only adds the phase,
and the party that decrypts the requester's sums is never drawn as ``l'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.plans import TreePlan
from fedsec.protocols.fdskl.sums import broadcast_down

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


class OffsetHolder(Protocol):
    """A worker as announcements see it: its per-feature offsets (NaN until drawn)."""

    offsets: np.ndarray


def announce(federation: Federation, workers: Mapping[str, OffsetHolder],
             active: Sequence[str], plans: Mapping[str, TreePlan], samples: np.ndarray,
             holders: np.ndarray, phases: np.ndarray, t0: int, t1: int, block: int, *,
             offsets: str, batch_size: int, features_per_iteration: int,
             excluded: Mapping[str, str | None] | None = None) -> None:
    """Each picker draws ``l'`` for its new features and sends the indices down T0.

    ``offsets`` is FDSKL's offsets mode; ``excluded`` (under a masking backend only) names,
    per requester, the worker never drawn as ``l'`` (None: none), and then no offsets are
    drawn.
    """
    B, r = batch_size, features_per_iteration
    names = tuple(workers)
    stride = len(active)
    for k, a in enumerate(active):
        its = np.arange(t0, t1)
        its = its[its % stride == k]
        if not its.size:
            continue
        feats = (its[:, None] * r + np.arange(r)).ravel()
        if offsets != "none":
            leave_out = {a} if excluded is None else {a, excluded[a]}
            others = [i for i, n in enumerate(names) if n not in leave_out]
            if not others:  # the decrypting party is the only other worker
                others = [i for i, n in enumerate(names) if n != a]
            holders[feats] = np.asarray(others)[
                federation.party(a).rng.integers(0, len(others), size=feats.size)]
            for n, w in workers.items():
                with federation.network.compute(n):
                    mine = holders[feats] == names.index(n)
                    if offsets == "per-feature" and excluded is None:
                        draws = federation.party(n).rng.uniform(0.0, 2 * np.pi,
                                                                size=feats.size)
                        w.offsets[feats] = np.where(mine, phases[feats], draws)
                    else:
                        w.offsets[feats[mine]] = phases[feats[mine]]
        else:
            if excluded is not None:  # the requester adds the phase to its own share
                holders[feats] = names.index(a)
            workers[a].offsets[feats] = phases[feats]
        # rows: the iterations, then their B samples, then the l' of their r features
        payload = np.vstack([its, samples[its[None, :] * B + np.arange(B)[:, None]],
                             holders[feats].reshape(its.size, r).T]).astype(np.int64)
        broadcast_down(federation.network, plans[a].t1, payload, tags.SAMPLE_INDEX,
                       {tags.PICKER: a, tags.BLOCK: block})
