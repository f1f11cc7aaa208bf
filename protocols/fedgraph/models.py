"""Hybrid FedGraph's networks (PyTorch, imported lazily): the clients' MLPs and the server's GCN.

**Client MLP.** ``layers`` hidden layers of ``hidden`` units (Linear then ReLU) and a linear
head; Adam with weight decay on cross-entropy, mini-batches in a seeded order. Its extractor
``g^j`` is the first ``j`` hidden layers, so every depth gives ``hidden`` features.

**Server GCN** (the paper's equations (3)-(5), reconstructed; the text lost them). Nodes are
clients; an item (a training row, or a cluster) is held by some clients ``S``, each giving an
embedding ``e_c``. The first layer sums, over the neighbours ``c'`` of ``c`` that hold the
item (``c`` itself included: the self-loop carries ``c``'s own features), a fully connected
layer on ``[e_c' || f_cc']`` (``f_cc'``: the shared-feature indicator):

    h1_c = ReLU( sum_{c' in N(c) ∩ S} W1 [e_c' || f_cc'] + b1 )

Later layers are plain, ``h2_c = ReLU( sum_{c' in N(c) ∩ S} W2 h1_c' + b2 )``, and the readout
is the mean of the last layer over the clients in ``S``, then a linear head. Splitting
``W1 = [W_e, W_f]`` gives ``W_e sum e_c' + W_f sum f_cc'``: the edge term depends on ``c``
and on which neighbours hold the item, so when every client holds every item it is one
constant bias per client. Targets may be soft (a cluster's mean label): the loss is the
cross-entropy against the target distribution.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from fedsec.nn import require_torch, seeded_init

WHAT = "protocol 'fedgraph'"


@dataclass(frozen=True)
class Training:
    """Adam on cross-entropy: epochs, batch size, learning rate, weight decay."""

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float


@cache
def _mlp_class() -> Any:
    torch = require_torch(WHAT)

    class MLP(torch.nn.Module):  # type: ignore[name-defined]
        """``layers`` hidden ReLU layers and a linear head."""

        def __init__(self, inputs: int, hidden: int, layers: int, classes: int) -> None:
            super().__init__()
            sizes = [inputs] + [hidden] * layers
            self.hidden = torch.nn.ModuleList(
                torch.nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
            self.head = torch.nn.Linear(hidden, classes)

        def embed(self, x: Any, depth: int) -> Any:
            for layer in self.hidden[:depth]:
                x = torch.relu(layer(x))
            return x

        def forward(self, x: Any) -> Any:
            return self.head(self.embed(x, len(self.hidden)))

    return MLP


def build_mlp(inputs: int, hidden: int, layers: int, classes: int, seed: int) -> Any:
    """A new client MLP, its weights drawn deterministically from ``seed``."""
    with seeded_init(seed, WHAT):
        return _mlp_class()(inputs, hidden, layers, classes)


def extractor_module(model: Any, depth: int) -> Any:
    """The extractor ``g^depth``: the model's first ``depth`` hidden layers (shared weights)."""
    torch = require_torch(WHAT)
    layers: list[Any] = []
    for layer in model.hidden[:depth]:
        layers += [layer, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def _tensor(x: np.ndarray) -> Any:
    torch = require_torch(WHAT)
    return torch.from_numpy(np.array(x, dtype=np.float32))


def fit(model: Any, x: np.ndarray, targets: np.ndarray, training: Training, seed: int,
        forward: Any = None, on_epoch: Callable[[int], None] | None = None) -> float:
    """Train ``model`` on ``x`` against ``targets`` (class ids, or rows of class weights).

    ``forward(model, batch_index)`` computes the logits of a batch when the inputs are not a
    plain matrix (the GCN); by default ``model(x[batch])``. ``on_epoch(epoch)`` follows the
    epochs. Returns the last epoch's mean loss. Call inside :func:`fedsec.nn.deterministic`.
    """
    torch = require_torch(WHAT)
    X = _tensor(x) if forward is None else None
    soft = np.asarray(targets).ndim == 2
    T = _tensor(targets) if soft else torch.from_numpy(np.array(targets, dtype=np.int64))
    optimizer = torch.optim.Adam(model.parameters(), lr=training.lr,
                                 weight_decay=training.weight_decay)
    order_rng = torch.Generator().manual_seed(seed)
    n = len(targets)
    last = float("nan")
    model.train()
    for epoch in range(1, training.epochs + 1):
        order = torch.randperm(n, generator=order_rng)
        total = 0.0
        for start in range(0, n, training.batch_size):
            batch = order[start:start + training.batch_size]
            optimizer.zero_grad()
            if forward is not None:
                logits = forward(model, batch)
            else:
                assert X is not None  # built above when there is no forward function
                logits = model(X[batch])
            loss = (-(T[batch] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean() if soft
                    else torch.nn.functional.cross_entropy(logits, T[batch]))
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        last = total / n
        if on_epoch is not None:
            on_epoch(epoch)
    return last


def embed(model: Any, x: np.ndarray, depth: int) -> np.ndarray:
    """``g^depth(x)`` as float64 ``(n, hidden)``."""
    torch = require_torch(WHAT)
    model.eval()
    with torch.no_grad():
        return model.embed(_tensor(x), depth).numpy().astype(np.float64)


def predict(model: Any, x: np.ndarray) -> np.ndarray:
    """Class scores (logits) of ``x``."""
    torch = require_torch(WHAT)
    model.eval()
    with torch.no_grad():
        return model(_tensor(x)).numpy().astype(np.float64)


@cache
def _gcn_class() -> Any:
    torch = require_torch(WHAT)

    class ClientGCN(torch.nn.Module):  # type: ignore[name-defined]
        """The reconstructed FedGraph GCN (see the module docstring)."""

        def __init__(self, embedding: int, n_features: int, hidden: int, layers: int,
                     classes: int) -> None:
            super().__init__()
            self.first_e = torch.nn.Linear(embedding, hidden)
            self.first_f = torch.nn.Linear(n_features, hidden, bias=False)
            self.later = torch.nn.ModuleList(
                torch.nn.Linear(hidden, hidden) for _ in range(layers - 1))
            self.head = torch.nn.Linear(hidden, classes)

        def forward(self, E: Any, M: Any, A: Any, F: Any) -> Any:
            """``E`` (B, K, e) embeddings, ``M`` (B, K) holders, ``A`` (K, K), ``F`` (K, K, d)."""
            weights = A.unsqueeze(0) * M.unsqueeze(1)          # (B, K, K): c' of c, holds
            edge = torch.einsum("bck,ckh->bch", weights, self.first_f(F))
            h = torch.relu(weights @ self.first_e(E) + edge) * M.unsqueeze(2)
            for layer in self.later:
                h = torch.relu(weights @ layer(h)) * M.unsqueeze(2)
            pooled = h.sum(1) / M.sum(1, keepdim=True).clamp(min=1.0)
            return self.head(pooled)

    return ClientGCN


@dataclass(frozen=True)
class GraphData:
    """What the server trains its GCN on: items × clients."""

    embeddings: np.ndarray  # (B, K, e), zero where a client does not hold the item
    holders: np.ndarray     # (B, K) 0/1
    adjacency: np.ndarray   # (K, K)
    edges: np.ndarray       # (K, K, d)


def build_gcn(data: GraphData, hidden: int, layers: int, classes: int, seed: int) -> Any:
    """A new GCN for ``data``'s shapes, its weights drawn from ``seed``."""
    with seeded_init(seed, WHAT):
        return _gcn_class()(data.embeddings.shape[2], data.edges.shape[2], hidden, layers,
                            classes)


def fit_gcn(model: Any, data: GraphData, targets: np.ndarray, training: Training,
            seed: int, on_epoch: Callable[[int], None] | None = None) -> float:
    """Train the GCN on ``data`` against ``targets`` (class ids or class weights)."""
    E, M = _tensor(data.embeddings), _tensor(data.holders)
    A, F = _tensor(data.adjacency), _tensor(data.edges)
    return fit(model, np.zeros((len(targets), 0)), targets, training, seed,
               forward=lambda m, batch: m(E[batch], M[batch], A, F), on_epoch=on_epoch)


def predict_gcn(model: Any, data: GraphData) -> np.ndarray:
    """Class scores of every item of ``data``."""
    torch = require_torch(WHAT)
    model.eval()
    with torch.no_grad():
        return model(_tensor(data.embeddings), _tensor(data.holders), _tensor(data.adjacency),
                     _tensor(data.edges)).numpy().astype(np.float64)
