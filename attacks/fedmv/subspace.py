"""V-FedMV's exchanged estimates read back as linear images of the private views.

The paper argues that ``Z_k`` "leaks nothing". But the server sent ``Z`` (round r's
consensus before the update) and receives ``zeta_k`` and ``Z_k``, so it computes
``U_k = (1 + zeta_k) Z_k - zeta_k Z = X_k W_k`` every round: a linear image of view k under a
new ``W_k`` each time. Stacked, the images span the column space of ``X_k`` after about
``d_k / C`` informative rounds (``subspace-accumulation``).

The client holding the labels (``curious-client``) receives every consensus and knows its
own ``Z_j`` and ``Y``; from ``Z = (sum_k zeta_k Z_k + eta Y) / (sum_k zeta_k + eta)`` it
subtracts what it knows and reads ``sum_{k != j} a_k X_k W_k`` (``a_k = zeta_k/(1+zeta_k)``)
each round: the joint column space of the other views.

Both return, per attacked view, an orthonormal basis of what they span (score it with
``column-space``); with a few known rows a basis gives every row
(:func:`fedsec.scoring.subspace.align_known_rows`). The recovered rank after each round is
in the reconstruction's ``info``.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from typing import Any

import numpy as np

from fedsec.attacks.fedmv.family import ConsensusAttack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import shard_key
from fedsec.protocols.fedmv import maths, tags
from fedsec.protocols.fedmv.setup import SERVER
from fedsec.registry import register
from fedsec.scoring.subspace import RANK_TOL
from fedsec.view import View


def estimates_by_round(view: View, tag: str) -> dict[str, dict[int, tuple[float, np.ndarray]]]:
    """Each sender's ``(zeta_k, Z_k)`` per round, from the readable ``[zeta, zeta Z_k]`` sums."""
    out: dict[str, dict[int, tuple[float, np.ndarray]]] = defaultdict(dict)
    for message in view.select(tag=tag):
        if not view.can_open(message):
            continue
        vector = np.asarray(view.open(message), dtype=np.float64)
        zeta = float(vector[0])
        shape = tuple(int(s) for s in message.meta[tags.SHAPE])
        out[message.sender][int(message.round)] = (zeta, vector[1:].reshape(shape) / zeta)
    return dict(out)


def consensus_by_round(view: View, receiver: str) -> dict[int, np.ndarray]:
    """The consensus sent to ``receiver`` at the start of each training round."""
    return {int(m.round): np.asarray(view.open(m), dtype=np.float64)
            for m in view.select(tag=tags.CONSENSUS, receiver=receiver) if view.can_open(m)}


def accumulate(images: list[np.ndarray], *, rtol: float = RANK_TOL) -> tuple[np.ndarray, list[int]]:
    """An orthonormal basis of the stacked images, and the rank after each of them.

    The rank after each image is tracked incrementally: the image's part outside the
    current basis (projected out twice) adds the directions whose singular values exceed
    ``rtol`` times the largest image norm seen, O(N r C) per round. The returned basis is
    the one of the whole stack, computed once from the first image and the differences of
    consecutive ones (the same span, better conditioned: late rounds differ little), with
    numpy's rank tolerance (``max(shape) * eps`` times the largest singular value).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 4))
    >>> _, ranks = accumulate([X @ rng.normal(size=(4, 2)) for _ in range(3)])
    >>> ranks
    [2, 4, 4]
    """
    if not images:
        return np.zeros((0, 0)), []
    Q = np.zeros((images[0].shape[0], 0))
    ranks, scale = [], 0.0
    for image in images:
        image = np.asarray(image, dtype=np.float64)
        scale = max(scale, float(np.linalg.norm(image, 2)))
        residual = image - Q @ (Q.T @ image)
        residual -= Q @ (Q.T @ residual)
        U, s, _ = np.linalg.svd(residual, full_matrices=False)
        Q = np.hstack([Q, U[:, s > rtol * scale]]) if scale > 0 else Q
        ranks.append(int(Q.shape[1]))
    steps = [images[0]] + [b - a for a, b in pairwise(images)]
    U, s, _ = np.linalg.svd(np.hstack(steps), full_matrices=False)
    tol = max(U.shape[0], len(steps) * images[0].shape[1]) * np.finfo(np.float64).eps
    return U[:, s > tol * s[0]] if s.size and s[0] > 0 else U[:, :0], ranks


def nothing_known(estimates: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The naive guess: an empty basis (no direction of the view known)."""
    return {key: np.zeros((Q.shape[0], 0)) for key, Q in estimates.items()}


def replay(view: View, me: str, received: dict[int, np.ndarray],
           params: dict[str, Any]) -> dict[int, tuple[float, np.ndarray]]:
    """A client's own ``(zeta, Z_k)`` per round, recomputed from its data, its starting point and
    the consensus it received (what it computed itself, when a mask hides its own messages
    from the transcript)."""
    held = view.own(me)
    X = next(np.asarray(v, dtype=np.float64) for k, v in held.items() if k.endswith("/X"))
    W = next((np.asarray(v) for k, v in held.items() if k.endswith(tags.INITIAL_WEIGHTS)), None)
    Zk = next((np.asarray(v) for k, v in held.items() if k.endswith(tags.INITIAL_ESTIMATE)),
              None)
    if W is None or Zk is None:
        return {}
    zeta, gram = float(params["zeta"]), X.T @ X
    out = {}
    for r in sorted(received):
        W, _ = maths.irls_weights(X, Zk, float(params["beta"]), W, eps=float(params["eps"]),
                                  tol=float(params["inner_tol"]),
                                  max_iter=int(params["max_inner"]), gram=gram)
        Zk = maths.view_estimate(X @ W, received[r], zeta)
        out[r] = (zeta, Zk)
    return out


class ColumnSpaceAttack(ConsensusAttack):
    """A V-FedMV attack whose estimate is a column space, accumulated in closed form from the
    images of the views it reads each round."""

    closed_form = True
    default_scorer = "column-space"


@register("attack", "subspace-accumulation")
class SubspaceAccumulation(ColumnSpaceAttack):
    """V-FedMV's server computes (1+zeta_k) Z_k - zeta_k Z = X_k W_k every round; the stacked images
    span the column space of view k.

    The server stacks ``X_k W_k`` over rounds: the column space of each view.
    """

    def unmet(self, view: View) -> str | None:
        if not estimates_by_round(view, tags.VIEW_ESTIMATE):
            return (f"{view.threat} cannot read any client's view estimate (the backend "
                    "protects them; only their sum is opened)")
        return None

    def run(self, view: View) -> Reconstruction:
        estimates: dict[str, np.ndarray] = {}
        ranks: dict[str, list[int]] = {}
        for client, by_round in sorted(estimates_by_round(view, tags.VIEW_ESTIMATE).items()):
            if client in view.knowledge:
                continue  # the coalition's own view
            sent = consensus_by_round(view, client)
            images = [(1 + zeta) * Zk - zeta * sent[r]
                      for r, (zeta, Zk) in sorted(by_round.items()) if r in sent]
            if images:
                estimates[shard_key(client, 0, "X")], ranks[client] = accumulate(images)
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=nothing_known(estimates),
                              info={"rank_by_round": ranks,
                                    "curve": {"label": "recovered rank of the view's columns",
                                              "series": ranks},
                                    "method": "stacked (1+zeta) Z_k - zeta Z over rounds"})


@register("attack", "curious-client")
class CuriousClient(ColumnSpaceAttack):
    """V-FedMV's client holding Y subtracts its own Z_j and eta Y from each consensus: sum over the
    other views of a_k X_k W_k, their joint column space.

    The label-holding client reads a linear image of the other views every round.
    """

    def unmet(self, view: View) -> str | None:
        if self._holder(view) is None:
            return f"{view.threat} holds no labels: it is not the client that holds Y"
        return None

    @staticmethod
    def _holder(view: View) -> str | None:
        for member, held in view.knowledge.items():
            if member != SERVER and any(k.endswith("/y") for k in held):
                return member
        return None

    def run(self, view: View) -> Reconstruction:
        me = self._holder(view)
        assert me is not None
        params: dict[str, Any] = dict(view.header.get("protocol", {}).get("params", {}))
        zeta, eta = float(params["zeta"]), float(params["eta"])
        clients = sorted(name for name in view.parties if name != SERVER)  # public roster
        others = [c for c in clients if c != me]
        received = consensus_by_round(view, me)
        own = estimates_by_round(view, tags.VIEW_ESTIMATE).get(me) or replay(view, me, received,
                                                                            params)
        y = next(np.asarray(v) for k, v in view.own(me).items() if k.endswith("/y"))
        images = []
        for r in sorted(own):
            if r not in received or r + 1 not in received:
                continue  # needs the consensus before and after round r
            after, before = received[r + 1], received[r]
            Y = maths.one_hot(y, after.shape[1])
            total = (zeta * len(clients) + eta) * after - eta * Y - zeta * own[r][1]
            images.append(total - len(others) * zeta**2 / (1 + zeta) * before)
        estimates: dict[str, np.ndarray] = {}
        ranks: list[int] = []
        if images:
            joint, ranks = accumulate(images)
            estimates = {shard_key(c, 0, "X"): joint for c in others}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=nothing_known(estimates),
                              info={"rank_by_round": ranks, "label_holder": me,
                                    "curve": {"label": "recovered rank of the other views' "
                                                       "columns", "series": ranks},
                                    "method": "joint span of the other views from each consensus"})
