"""What FedGraph's clients send: embeddings (raw or cluster means), labels, clustering seeds.

Step 3 of the run (:mod:`.protocol`): per sample group, the clients' embeddings and the group's
labels go to the server, raw or as the means of clusters drawn from a seed the group's first
client sends its other clients. Every message goes from one party to the one that must read it
(the server trains on the embeddings, a client draws its clusters from the seed), so a masking
backend protects each on its link only: under ``plain`` (the paper's setting) they travel as
they are; under any other backend each is the backend's direct send to its receiver
(:func:`fedsec.backends.primitives.direct_send`), read by the receiver and by no one else on the
link, its array shape then in the metadata (:data:`.tags.SHAPE`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.backends.primitives import direct_send
from fedsec.protocols.fedgraph import clustering, tags
from fedsec.protocols.fedgraph.client import Client
from fedsec.protocols.fedgraph.items import GroupItems, clustered, positions
from fedsec.protocols.fedgraph.setup import SERVER, FedGraphParams

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation
    from fedsec.interfaces import MaskingBackend

Groups = list[tuple[tuple[str, ...], np.ndarray]]


def send(federation: Federation, backend: MaskingBackend, sender: str, receiver: str,
         values: Any, tag: str, meta: Mapping[str, Any] | None = None) -> Any:
    """One of FedGraph's messages: as it is under ``plain``, else read by ``receiver`` alone."""
    meta = dict(meta or {})
    if backend.name != "plain" and not isinstance(values, bytes):
        meta[tags.SHAPE] = list(np.shape(values))
    return direct_send(federation, backend, sender, receiver, values, tag=tag,
                       meta=meta or None)


def send_items(federation: Federation, backend: MaskingBackend, p: FedGraphParams,
               clients: list[Client], groups: Groups, raw: list[GroupItems],
               kmeans: Any) -> list[GroupItems]:
    """Every group's embeddings (raw or cluster means) and labels, to the server
    (``kmeans(group, size, seed)``: the server's clusters under ``kmeans``)."""
    net = federation.network
    by_name = {c.name: c for c in clients}
    items = []
    for (members, rows), group in zip(groups, raw, strict=True):
        leader = by_name[members[0]]
        labels = np.argmax(group.targets, axis=1)
        if p.clustering in ("crc", "random"):
            for draw in range(p.redraws):
                items.append(send_means(federation, backend, p, [by_name[m] for m in members],
                                        rows, group, draw))
            continue
        sent = {m: send(federation, backend, m, SERVER, group.embeddings[m],
                        tags.TRAIN_EMBEDDINGS,
                        {tags.ROWS: rows.tolist(), tags.DEPTH: by_name[m].depth})
                for m in members}
        got_labels = send(federation, backend, leader.name, SERVER, labels, tags.LABELS,
                          {tags.ROWS: rows.tolist()})
        received = GroupItems(members, {m: np.asarray(v) for m, v in sent.items()},
                              clustering.one_hot(np.asarray(got_labels),
                                                 group.targets.shape[1]))
        if p.clustering == "kmeans":
            with net.compute(SERVER):
                received = clustered(received, kmeans(received, p.cluster_size,
                                                      federation.secret_seed))
        items.append(received)
    return items


def send_means(federation: Federation, backend: MaskingBackend, p: FedGraphParams,
               members: list[Client], rows: np.ndarray, group: GroupItems,
               draw: int) -> GroupItems:
    """One draw of a group's clusters: the seed among its clients, their means to the
    server (every cluster holds at least ``s`` rows: smaller groups were withheld)."""
    net = federation.network
    leader = members[0]
    size = leader.cluster_size  # the group's first client's s holds for the group
    meta = {tags.GROUP: [c.name for c in members], tags.CLUSTER_SIZE: size, tags.DRAW: draw}
    seed = leader.party.rng.bytes(32)
    seed_meta = {**meta, tags.ROWS: rows.tolist(), tags.CLUSTERING: p.clustering,
                 tags.IN_CLASS: p.in_class}
    got = {c.name: send(federation, backend, leader.name, c.name, seed, tags.CLUSTER_SEED,
                        seed_meta)
           for c in members[1:]}
    got[leader.name] = seed
    labels = np.argmax(group.targets, axis=1)
    means: dict[str, np.ndarray] = {}
    for c in members:
        with net.compute(c.name):
            clusters = clustering.draw_clusters(p.clustering, labels, size, p.in_class,
                                                got[c.name])
            assert min(len(k) for k in clusters) >= size  # groups under s were withheld
            means[c.name] = np.asarray(send(
                federation, backend, c.name, SERVER,
                clustering.cluster_means(group.embeddings[c.name], clusters),
                tags.CLUSTER_EMBEDDINGS, {**meta, tags.DEPTH: c.depth}))
            keep_clusters(p, c, rows, clusters, draw)
    targets = send(federation, backend, leader.name, SERVER,
                   clustering.cluster_means(group.targets, clusters), tags.CLUSTER_LABELS, meta)
    return GroupItems(group.members, means, np.asarray(targets))


def keep_clusters(p: FedGraphParams, c: Client, rows: np.ndarray, clusters: list[np.ndarray],
                  draw: int) -> None:
    """A client's record of one draw: each row's cluster, and each cluster's mean input
    (the truth behind the mean embedding it sent)."""
    private = c.party.private
    held = private.setdefault(tags.CLUSTERS, np.full((p.redraws, len(c.rows)), -1,
                                                     dtype=np.int64))
    where = positions(c.rows, rows)
    held[draw, where] = clustering.membership(len(rows), clusters)
    means = clustering.cluster_means(c.X[where], clusters)
    before = private.get(tags.CLUSTER_INPUTS)
    private[tags.CLUSTER_INPUTS] = means if before is None else np.concatenate([before, means])
