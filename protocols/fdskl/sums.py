"""FDSKL's messages: tree sums, Algorithm 3 over a batch of (sample, feature) pairs, broadcasts.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Algorithm 3. One call computes ``w_j^T x_i + b``
for many pairs at once: every payload is a vector with one entry per pair, so
the transcript holds one message per tree edge per batch, with the pairs named
in the metadata (``pairs``: ``[sample, first feature, stop]`` segments, taking
the requester's features in that range in increasing order; with several
features per iteration the requester's are those of its iterations, see
:func:`fedsec.protocols.fdskl.batches.owned`).

Offsets (``offsets`` parameter of FDSKL):

* ``per-feature`` (the paper: worker ``l`` draws ``b^l`` "with the seed
  ``sigma^l(j)``" of the feature): one offset per worker and feature, reused for
  every sample; T2 then runs once per feature, when it is created, and the
  requester keeps the total it removes (Algorithm 2, line 4: values already
  computed are reused).
* ``fresh``: every worker except the one left in draws a new offset for every
  pair, and T2 runs for every pair. The worker left in (``l'``) must keep one
  offset per feature: it is the feature's phase ``b``, the same at every sample.
* ``none``: the raw partial products travel along T1; no T2.

Either way the phase of feature ``j`` is the offset of its ``l'``; it is drawn
from a stream derived from the run's secret seed (the one DSG draws ``b_j`` from), so
FDSKL and DSG use identical features. No message carries it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.network import Network
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.batches import owned, owned_slice
from fedsec.protocols.fdskl.trees import Tree, edges, holder, leaves

OFFSET_MODES = ("per-feature", "fresh", "none")


def tree_sum(net: Network, tree: Tree,
             values: Mapping[str, np.ndarray] | Callable[[str], np.ndarray], tag: str,
             meta: Mapping[str, Any], *, deliver_to: str | None = None) -> np.ndarray:
    """Sum the workers' vectors along ``tree``: one message per edge, in round order.

    ``values`` maps each worker to its vector, or is a function that makes a worker's vector
    when the tree first needs it (when the worker sends or first receives), so that a worker's
    vector exists only from then until it has been sent on. Returns the total as the root's
    holder has it; with ``deliver_to`` (a worker other than the root's holder) the holder sends
    it there, one more message.
    """
    make = values if callable(values) else values.__getitem__
    partial: dict[str, np.ndarray] = {}
    for e in edges(tree):
        with net.compute(e.sender):
            payload = partial.pop(e.sender, None)
        if payload is None:  # a leaf: its vector made now (its own work, timed by ``make``)
            payload = _leaf(make, e.sender)
        got = net.send(e.sender, e.receiver, tag, payload,
                       meta={**meta, tags.COVERS: list(e.covers), tags.ROUND: e.round})
        del payload  # sent on: the sender keeps nothing of it
        mine = partial[e.receiver] if e.receiver in partial else _leaf(make, e.receiver)
        with net.compute(e.receiver):
            partial[e.receiver] = mine + got
        del mine, got
    root = holder(tree)
    total = partial[root] if root in partial else _leaf(make, root)
    if deliver_to is not None and deliver_to != root:
        total = net.send(root, deliver_to, tag, total,
                         meta={**meta, tags.COVERS: list(leaves(tree)), tags.DELIVERY: True})
    return np.asarray(total)


def _leaf(make: Callable[[str], np.ndarray], worker: str) -> np.ndarray:
    return np.asarray(make(worker), dtype=np.float64)


def broadcast_down(net: Network, tree: Tree, payload: Any, tag: str,
                   meta: Mapping[str, Any]) -> None:
    """Send ``payload`` from the root's holder to every worker along ``tree`` reversed."""
    for e in reversed(edges(tree)):
        net.send(e.receiver, e.sender, tag, payload, meta={**meta, tags.TREE: tags.TREE_DOWN})


@dataclass
class Pairs:
    """The (sample, feature) pairs one requester needs in one batch, in payload order: each
    pair's feature, and the ``[sample, start, stop]`` segments that name them."""

    features: np.ndarray
    segments: list[list[int]]

    @property
    def size(self) -> int:
        """How many pairs."""
        return int(self.features.size)


def pairs_of(segments: Sequence[tuple[int, int, int]], residue: int, stride: int,
             group: int = 1) -> Pairs:
    """A requester's pairs from a batch's ``(sample, start, stop)`` segments (``group``:
    features per iteration, see :func:`owned`)."""
    features, kept = [], []
    for s, start, stop in segments:
        js = owned(start, stop, residue, stride, group)
        if js.size:
            features.append(js)
            kept.append([int(s), int(start), int(stop)])
    if not features:
        return Pairs(np.zeros(0, dtype=int), [])
    return Pairs(np.concatenate(features), kept)


def partial_products(W: np.ndarray, X: np.ndarray, pairs: Pairs, residue: int, stride: int,
                     offsets: np.ndarray | None = None, group: int = 1) -> np.ndarray:
    """One worker's ``(w_j)_{G_l}^T (x_i)_{G_l}`` for every pair (``W``: its columns of w).

    With per-feature ``offsets``, each value comes out masked: ``+ offsets[j]``.
    """
    out = np.empty(pairs.size)
    at = 0
    for s, start, stop in pairs.segments:
        js = owned_slice(start, stop, residue, stride, group)
        block = W[js]
        m = block.shape[0]
        np.dot(block, X[s], out=out[at:at + m])
        if offsets is not None:
            out[at:at + m] += offsets[js]
        at += m
    return out


@dataclass
class Algorithm3:
    """Runs Algorithm 3 for one requester over batches of pairs.

    ``offsets[w]`` holds worker ``w``'s per-feature offsets (filled as
    features are created); ``phase_holder[j]`` is feature ``j``'s ``l'`` as an
    index into ``workers``; ``rngs[w]`` draws fresh offsets.
    """

    net: Network
    workers: tuple[str, ...]
    requester: str
    t1: Tree
    t2: Mapping[str, Tree]
    mode: str
    offsets: Mapping[str, np.ndarray]
    phase_holder: np.ndarray
    phases: np.ndarray
    rngs: Mapping[str, np.random.Generator]
    transform: Callable[[str, np.ndarray], np.ndarray]
    removed: np.ndarray  # per feature: the offsets' total T2 returned (per-feature mode)

    def run(self, pairs: Pairs, partials: Callable[[str], np.ndarray],
            new_features: np.ndarray, meta: Mapping[str, Any], *,
            masked: bool = False) -> np.ndarray:
        """``w_j^T x_i + b_j`` at the requester for every pair.

        ``partials(w)`` computes worker ``w``'s partial products (called once per worker,
        when T1 needs them); ``masked``: the per-feature offsets are already in them (see
        :func:`partial_products`).
        """
        mode = self.mode
        base = {**meta, tags.REQUESTER: self.requester, tags.OFFSETS: mode}
        fresh: dict[str, np.ndarray] = {}

        def leaf(w: str) -> np.ndarray:
            value = partials(w)
            with self.net.compute(w):
                if mode == "per-feature" and not masked:
                    value = value + self.offsets[w][pairs.features]
                elif mode == "fresh":
                    mine = self.phase_holder[pairs.features] == self.workers.index(w)
                    draws = self.rngs[w].uniform(0.0, 2 * np.pi, size=pairs.size)
                    fresh[w] = np.where(mine, self.phases[pairs.features], draws)
                    value = value + fresh[w]
                return self.transform(w, value)

        pair_meta = {**base, tags.PAIRS: pairs.segments}
        xi = tree_sum(self.net, self.t1, leaf, tags.PARTIAL_DOT,
                      {**pair_meta, tags.TREE: tags.TREE_SUMS})
        if mode == "per-feature" and new_features.size:  # T2 once per feature, when created
            self._remove_per_feature(new_features, base)
        with self.net.compute(self.requester):  # each result into its second operand's copy
            if mode == "none":
                shifted = self.phases[pairs.features]
                return np.add(xi, shifted, out=shifted)
            if mode == "per-feature":
                removed = self.removed[pairs.features]
                return np.subtract(xi, removed, out=removed)
        removed = self._remove_fresh(pairs, fresh, pair_meta)
        return np.subtract(xi, removed, out=removed)

    def _remove_per_feature(self, features: np.ndarray, meta: Mapping[str, Any]) -> None:
        excluded = self.phase_holder[features]
        for k in np.unique(excluded).tolist():
            name = self.workers[k]
            group = features[excluded == k]
            tree = self.t2[name]
            values = {w: self.offsets[w][group] for w in leaves(tree)}
            self.removed[group] = tree_sum(
                self.net, tree, values, tags.OFFSET_SUM,
                {**meta, tags.TREE: tags.TREE_OFFSETS, tags.EXCLUDED: name,
                 tags.FEATURES: group.tolist()},
                deliver_to=self.requester)

    def _remove_fresh(self, pairs: Pairs, fresh: Mapping[str, np.ndarray],
                      meta: Mapping[str, Any]) -> np.ndarray:
        out = np.zeros(pairs.size)
        excluded = self.phase_holder[pairs.features]
        for k in np.unique(excluded).tolist():
            name = self.workers[k]
            rows = excluded == k
            tree = self.t2[name]
            values = {w: fresh[w][rows] for w in leaves(tree)}
            out[rows] = tree_sum(self.net, tree, values, tags.OFFSET_SUM,
                                 {**meta, tags.TREE: tags.TREE_OFFSETS, tags.EXCLUDED: name},
                                 deliver_to=self.requester)
        return out
