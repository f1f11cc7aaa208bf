"""Hybrid FedGraph (paper 004): clients' MLP extractors, cluster means, a client-graph GCN.

Each client holds some training rows and some features (partition ``random``: shares drawn
per client, so features and rows overlap). The run, as the paper describes it:

1. Each client sends the server its feature indices (:data:`.tags.FEATURES`); the server
   joins clients that share a feature, with the shared-feature indicator as edge feature.
2. Each client trains its MLP on its rows, computes the privacy score of each extractor depth
   (:mod:`.privacy_score`) and keeps the depth the paper's rule picks (or ``depth``).
3. Training embeddings go to the server per sample group (the rows held by the same clients;
   sample ids are aligned beforehand, as the paper assumes). Under ``crc`` or ``random``
   the group's first client draws a seed and sends it, with the group's row ids and its
   cluster size ``s`` (fixed, or chosen by its own validation: :mod:`.cluster_size`), to the
   group's other clients (never to the server); every client of the group then forms the
   same clusters from the sample ids and labels and sends its cluster-mean embeddings, and
   the first client the mean labels. A group of fewer than ``s`` rows is withheld (no client
   sends the mean of fewer than ``s`` rows); with ``redraws`` the group draws that many
   clusterings, each from a fresh seed, and sends every draw's means.
   Under ``none`` or ``kmeans`` embeddings travel raw, with the labels from the group's first
   client; for ``kmeans`` the server clusters the concatenated embeddings itself.
4. The server trains the GCN (:mod:`.models`) on the items and, at test time, predicts from
   each client's raw embeddings of the test rows (:data:`.tags.TEST_EMBEDDINGS`).

Baselines (the paper's Table 2): ``local_accuracy``, the mean of the clients' own MLPs' test
accuracies; with ``compare``, ``accuracy_none``, ``accuracy_random``, ``accuracy_kmeans`` and
``accuracy_crc``: the server's GCN trained offline on the same embeddings under each other
clustering (no messages: a comparison, not something to attack; the chosen clustering's
column is the run's own accuracy). The reference is an MLP of
the same shape on every feature of every training row (the ceiling), and no agreement is
claimed. Under the ``plain`` backend (the paper's setting) embeddings and means travel as they
are; under any other backend every message is the backend's direct send to the party that reads
it (:mod:`.uploads`): the server still reads every embedding, mean and label (it trains on them),
an eavesdropper on the links reads none.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec import nn
from fedsec.data.dataset import Dataset
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, MaskingBackend, Protocol
from fedsec.outcomes import Outcome
from fedsec.protocols.fedgraph import clustering, graph, models, tags
from fedsec.protocols.fedgraph.client import Client
from fedsec.protocols.fedgraph.cluster_size import choose_size
from fedsec.protocols.fedgraph.graph_model import GraphModel, MLPModel, client_extractor
from fedsec.protocols.fedgraph.items import (
    GroupItems,
    clusterable,
    clustered,
    select_rows,
    stack_items,
)
from fedsec.protocols.fedgraph.privacy_score import choose_depth, diameter_score
from fedsec.protocols.fedgraph.setup import (
    CLUSTERINGS,
    PAPER,
    SERVER,
    FedGraphParams,
    classification_metrics,
    scale_inputs,
)
from fedsec.protocols.fedgraph.uploads import send, send_items
from fedsec.registry import register
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation


@register("protocol", "fedgraph")
class FedGraph(Protocol):
    """Hybrid FedGraph: clients send (cluster-mean) embeddings of their MLP extractors; the server
    trains a GCN whose nodes are clients.

    Hybrid FedGraph: client MLP extractors, cluster means, a GCN over the client graph.
    """

    paper = PAPER
    default_dataset = "fashion_mnist_1k"
    default_partition = "random:parties=10,features=0.1"
    partition_kinds = ("random", "vertical")
    coordinators = ((SERVER, "server"),)
    scalings = ("none",)
    exposes = frozenset({tags.FEATURES, tags.CLUSTER_SEED, tags.LABELS, tags.TRAIN_EMBEDDINGS,
                         tags.CLUSTER_EMBEDDINGS, tags.CLUSTER_LABELS, tags.TEST_EMBEDDINGS})
    renamed_tags = tags.RENAMED
    Params = FedGraphParams

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """No agreement is claimed: the GCN over extractors is not the pooled MLP."""
        return float("inf")

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p, net, test = self.params, federation.network, federation.test
        if test is None:
            raise ValidationError("fedgraph evaluates on the run's test rows and needs them.")
        C = len(test.class_names)
        clients = [Client(party, p.inputs, test) for party in federation.data_parties()]
        names = [c.name for c in clients]
        with net.stage("setup"):
            got = {c.name: send(federation, backend, c.name, SERVER, c.columns.astype(np.int64),
                                tags.FEATURES) for c in clients}
            with net.compute(SERVER):
                edges = graph.edge_features([np.asarray(got[n]) for n in names],
                                            test.n_features)
        with nn.deterministic(0):
            local = self._train_clients(federation, clients, test)
            groups = graph.sample_groups({c.name: c.rows for c in clients}, names)
            embeddings = {c.name: c.embeddings for c in clients}
            raw = _raw_groups(clients, embeddings, groups, C)
            sizes = {c.name: c.cluster_size for c in clients}
            if p.clustering in ("crc", "random"):
                withheld = sum(len(rows) for members, rows in groups
                               if len(rows) < sizes[members[0]])
                groups, raw = clusterable(groups, raw, sizes)
                for c in clients:  # the truth behind the means (float32, as the GCN reads it)
                    sent_rows = np.isin(c.rows, np.concatenate(
                        [rows for members, rows in groups if c.name in members]
                        or [np.empty(0, dtype=np.int64)]))
                    c.party.private[tags.TRAIN_EMBEDDINGS_HELD] = embeddings[c.name][
                        sent_rows].astype(np.float32)
            with net.stage("embeddings"):
                items = send_items(federation, backend, p, clients, groups, raw, _kmeans)
            E, M, targets = stack_items(names, items)
            data = models.GraphData(E, M, graph.adjacency(edges), edges)
            with net.compute(SERVER):
                gcn = self._train_gcn(federation.secret_seed, data, targets, C,
                                      on_epoch=lambda epoch: federation.advance(
                                          "fedgraph server GCN", epoch, p.gcn_epochs, "epoch"))
            with net.stage("test"):
                sent = {c.name: models.embed(c.model, c.test_X, c.depth) for c in clients}
                got = {n: send(federation, backend, n, SERVER, v, tags.TEST_EMBEDDINGS)
                       for n, v in sent.items()}
                with net.compute(SERVER):
                    test_data = _test_data(names, got, data)
                    scores = models.predict_gcn(gcn, test_data)
            metrics: dict[str, Any] = classification_metrics(test.y, scores)
            metrics.update(local)
            metrics[f"accuracy_{p.clustering}"] = metrics["accuracy"]
            if p.compare:
                metrics.update(self._compare(federation.secret_seed, names, groups, raw, sizes,
                                             data, test_data, test.y, C))
        metrics.update(clustering=p.clustering, n_items=len(targets), n_groups=len(groups),
                       n_edges=int((data.adjacency.sum() - len(names)) // 2))
        if p.clustering in ("crc", "random"):
            metrics["rows_withheld"] = withheld
        model = GraphModel(
            n_features=test.n_features, inputs=p.inputs, classes=C,
            clients=tuple(client_extractor(c.columns, c.model, p.hidden, p.layers, C, c.depth)
                          for c in clients),
            gcn=nn.flatten(gcn), gcn_hidden=p.gcn_hidden, gcn_layers=p.gcn_layers,
            adjacency=data.adjacency, edges=data.edges)
        return Outcome(metrics=metrics, values={"test_scores": scores}, model=model)

    def _train_clients(self, federation: Federation, clients: list[Client],
                       test: Dataset) -> dict[str, Any]:
        """Step 2: local MLPs, privacy scores, depths; the local baseline."""
        p = self.params
        C = len(test.class_names)
        accuracies, depths, sizes = [], [], []
        all_scores = []
        for i, c in enumerate(clients):
            with federation.network.compute(c.name):
                seed = nn.torch_seed(c.party.rng)
                c.model = models.build_mlp(len(c.columns), p.hidden, p.layers, C, seed)
                models.fit(c.model, c.X, c.y, p.local, seed,
                           on_epoch=functools.partial(federation.advance,
                                                      f"fedgraph {c.name} MLP",
                                                      total=p.epochs, unit="epoch"))
                if p.depth == 0 or p.scores:
                    picked = c.party.rng.choice(len(c.y), min(p.score_samples, len(c.y)),
                                                replace=False)
                    c.scores = [diameter_score(c.model, c.X[np.sort(picked)], j,
                                               p.score_settings, c.party.rng)
                                for j in range(1, p.layers + 1)]
                c.depth = p.depth or choose_depth(c.scores, p.score_keep)
                c.embeddings = models.embed(c.model, c.X, c.depth)
                c.cluster_size = p.cluster_size or choose_size(
                    c.embeddings, c.y, C, depth=c.depth,
                    layers=p.layers, training=p.size_training, keep=p.score_keep,
                    rng=c.party.rng, seed=nn.torch_seed(c.party.rng))[0]
                self._keep_private(c, test)
                scores = models.predict(c.model, c.test_X)
            accuracies.append(classification_metrics(test.y, scores)["accuracy"])
            depths.append(c.depth)
            sizes.append(c.cluster_size)
            all_scores.append(c.scores or [float("nan")] * p.layers)
            federation.advance("fedgraph clients trained", i + 1, len(clients), "client")
        out: dict[str, Any] = {"local_accuracy": float(np.mean(accuracies)),
                               "local_accuracy_min": float(np.min(accuracies)),
                               "local_accuracy_max": float(np.max(accuracies)),
                               "depth_mean": float(np.mean(depths)),
                               "depth_min": int(np.min(depths)), "depth_max": int(np.max(depths))}
        if p.cluster_size == 0:
            out.update(cluster_size_mean=float(np.mean(sizes)),
                       cluster_size_min=int(np.min(sizes)),
                       cluster_size_max=int(np.max(sizes)))
        if p.depth == 0 or p.scores:
            mean = np.mean(np.array(all_scores), axis=0)
            out.update({f"privacy_score_{j + 1}": float(s) for j, s in enumerate(mean)})
        return out

    def _keep_private(self, c: Client, test: Dataset) -> None:
        """What a client keeps: its extractor, its inputs (ground truth), its scores."""
        extractor = models.extractor_module(c.model, c.depth)
        c.party.private[tags.EXTRACTOR_WEIGHTS] = nn.flatten(extractor)
        layout = [[name, list(shape)] for name, shape in nn.layout_of(extractor)]
        c.party.private[tags.EXTRACTOR_LAYOUT] = np.frombuffer(
            json.dumps(layout).encode(), dtype=np.uint8)
        c.party.private[tags.TRAIN_INPUTS] = c.X
        c.party.private[tags.TEST_INPUTS] = c.test_X
        c.party.private[tags.PRIVACY_SCORES] = np.array(c.scores or [np.nan] * self.params.layers)

    def _train_gcn(self, seed: int, data: models.GraphData, targets: np.ndarray,
                   C: int, on_epoch: Callable[[int], None] | None = None) -> Any:
        """The server's GCN trained on ``data`` (the same seeds for every clustering)."""
        p = self.params
        gcn = models.build_gcn(data, p.gcn_hidden, p.gcn_layers, C,
                               nn.torch_seed(generator(seed, "fedgraph/server/gcn")))
        models.fit_gcn(gcn, data, targets, p.server,
                       nn.torch_seed(generator(seed, "fedgraph/server/order")), on_epoch=on_epoch)
        return gcn

    def _compare(self, seed: int, names: list[str],
                 groups: list[tuple[tuple[str, ...], np.ndarray]], raw: list[GroupItems],
                 sizes: dict[str, int], data: models.GraphData, test_data: models.GraphData,
                 test_y: np.ndarray, C: int) -> dict[str, float]:
        """Table 2 offline: the server's GCN on the same embeddings under every clustering."""
        p = self.params
        out = {}
        for mode in CLUSTERINGS:
            if mode == p.clustering:  # the federated run's own accuracy
                continue
            items = []
            for g, group in enumerate(raw):
                size = sizes[group.members[0]]
                if mode == "kmeans":
                    group = clustered(group, _kmeans(group, size, seed))
                elif mode != "none":
                    if len(group.targets) < size:
                        continue  # withheld, as the federated run's clients do
                    labels = np.argmax(group.targets, axis=1)
                    group_seed = generator(seed, f"fedgraph/compare/{g}").bytes(32)
                    group = clustered(group, clustering.draw_clusters(
                        mode, labels, size, p.in_class, group_seed))
                items.append(group)
            E, M, T = stack_items(names, items)
            gcn = self._train_gcn(seed, models.GraphData(E, M, data.adjacency, data.edges),
                                  T, C)
            out[f"accuracy_{mode}"] = classification_metrics(
                test_y, models.predict_gcn(gcn, test_data))["accuracy"]
        return out

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        """The ceiling: an MLP of the same shape on every feature of every training row."""
        p = self.params
        C = len(train.class_names)
        with nn.deterministic(0):
            torch_seed = nn.torch_seed(generator(seed, "fedgraph/centralized"))
            model = models.build_mlp(train.n_features, p.hidden, p.layers, C, torch_seed)
            models.fit(model, scale_inputs(train.X, p.inputs), train.y, p.local, torch_seed)
            scores = models.predict(model, scale_inputs(test.X, p.inputs))
        trained = MLPModel(inputs=p.inputs, weights=nn.flatten(model),
                           n_features=train.n_features, hidden=p.hidden, layers=p.layers,
                           classes=C)
        return Outcome(metrics=classification_metrics(test.y, scores),
                       values={"test_scores": scores}, model=trained)


def _raw_groups(clients: list[Client], embeddings: dict[str, np.ndarray],
                groups: list[tuple[tuple[str, ...], np.ndarray]], C: int) -> list[GroupItems]:
    """Every sample group as raw items: its clients' embeddings of its rows, one-hot labels
    (the clients of a group agree on its labels; the first one's are used)."""
    by_name = {c.name: c for c in clients}
    out = []
    for members, rows in groups:
        first = by_name[members[0]]
        out.append(GroupItems(
            members, {m: select_rows(embeddings[m], by_name[m].rows, rows) for m in members},
            clustering.one_hot(select_rows(first.y, first.rows, rows), C)))
    return out


def _kmeans(group: GroupItems, size: int, seed: int) -> list[np.ndarray]:
    """K-means on the group's concatenated embeddings (the server's, for ``kmeans``)."""
    joined = np.concatenate([group.embeddings[m] for m in group.members], axis=1)
    return clustering.kmeans_clusters(joined, size, seed % 2**31)


def _test_data(names: list[str], got: dict[str, Any], train: models.GraphData
               ) -> models.GraphData:
    """The test rows as GCN items: every client holds (its features of) every test row."""
    E = np.stack([np.asarray(got[n], dtype=np.float32) for n in names], axis=1)
    return models.GraphData(E, np.ones(E.shape[:2], dtype=np.float32), train.adjacency,
                            train.edges)
