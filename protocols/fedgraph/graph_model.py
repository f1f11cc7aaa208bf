"""The models Hybrid FedGraph trains: client extractors feeding the server's GCN, and the
centralized MLP of its reference.

At test time (step 4 of :mod:`.protocol`) every client embeds its features of each test row
with its extractor ``g^depth`` (the first ``depth`` hidden layers of its MLP), and the server's
GCN reads the embeddings of all clients as one item held by every client; the class is the
argmax of its logits. The evaluator keeps the networks' weights as numpy vectors in their own
layouts; predicting rebuilds them (PyTorch, imported lazily by :mod:`.models`) and runs them
deterministically, as the run did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec import nn
from fedsec.estimators import check_features
from fedsec.protocols.fedgraph import models
from fedsec.protocols.fedgraph.setup import scale_inputs


@dataclass(frozen=True, kw_only=True)
class ClientExtractor:
    """One client's columns of the dataset, its MLP's shape and flattened weights, its depth."""

    columns: np.ndarray
    weights: np.ndarray
    hidden: int
    layers: int
    classes: int
    depth: int

    def embed(self, X: np.ndarray, inputs: str) -> np.ndarray:
        """``g^depth`` of the client's columns of ``X`` (call inside ``nn.deterministic``)."""
        network = models.build_mlp(self.columns.size, self.hidden, self.layers, self.classes, 0)
        nn.load_flat(network, self.weights)
        return models.embed(network, scale_inputs(X[:, self.columns], inputs), self.depth)


@dataclass(frozen=True, kw_only=True)
class GraphModel:
    """The clients' extractors and the server's GCN (its weights, shape and client graph)."""

    n_features: int
    inputs: str
    clients: tuple[ClientExtractor, ...]
    gcn: np.ndarray
    gcn_hidden: int
    gcn_layers: int
    classes: int
    adjacency: np.ndarray
    edges: np.ndarray

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The GCN's class logits for every row of ``X``."""
        X = check_features(X, self.n_features, model="GraphModel")
        with nn.deterministic(0):
            E = np.stack([c.embed(X, self.inputs).astype(np.float32) for c in self.clients],
                         axis=1)
            data = models.GraphData(E, np.ones(E.shape[:2], dtype=np.float32), self.adjacency,
                                    self.edges)
            network = models.build_gcn(data, self.gcn_hidden, self.gcn_layers, self.classes, 0)
            nn.load_flat(network, self.gcn)
            return models.predict_gcn(network, data)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes ``0 .. n_classes - 1`` (the dataset's label encoding)."""
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class MLPModel:
    """An MLP on every column (the reference's): its shape and flattened weights."""

    inputs: str
    weights: np.ndarray
    n_features: int
    hidden: int
    layers: int
    classes: int

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """The MLP's class logits for every row of ``X``."""
        X = check_features(X, self.n_features, model="MLPModel")
        with nn.deterministic(0):
            network = models.build_mlp(self.n_features, self.hidden, self.layers, self.classes,
                                       0)
            nn.load_flat(network, self.weights)
            return models.predict(network, scale_inputs(X, self.inputs))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class codes ``0 .. n_classes - 1`` (the dataset's label encoding)."""
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)


def client_extractor(columns: np.ndarray, network: Any, hidden: int, layers: int,
                     classes: int, depth: int) -> ClientExtractor:
    """A client's trained MLP ``network`` and chosen depth, as numpy arrays."""
    return ClientExtractor(columns=np.array(columns, dtype=np.int64), weights=nn.flatten(network),
                           hidden=hidden, layers=layers, classes=classes, depth=depth)
