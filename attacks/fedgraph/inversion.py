"""Inverting an extractor: the inputs behind embeddings (pure torch on numpy in and out).

Two attacks of He, Zhang, Lee, "Model inversion attacks against collaborative inference"
(ACSAC 2019):

- white-box (their regularised maximum likelihood): given the extractor ``g`` (rebuilt by
  :func:`extractor_from`) and embeddings ``v``, the inputs in [-1, 1] minimising
  ``||g(x) - v||²``; solved by box-constrained Gauss–Newton in :mod:`.gauss_newton`.
- query-free inverse network (:func:`fit_inverse`, their black-box attack): an MLP ``f``
  trained on auxiliary pairs ``(g(x_aux), x_aux)`` to minimise ``||f(g(x_aux)) - x_aux||²``;
  ``f(v)`` is the estimate. It needs ``g`` only as a function to query (or the pairs
  themselves), never its weights' gradients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedsec.errors import CapabilityError
from fedsec.nn import require_torch, unflatten

WHAT = "attack 'embedding-inversion'"


def extractor_from(held: Mapping[str, Any], weights_key: str, layout_key: str) -> Any:
    """The extractor a coalition member holds, rebuilt as a torch ``Sequential`` of Linear and
    ReLU layers from its flattened weights and layout."""
    torch = require_torch(WHAT)
    if weights_key not in held or layout_key not in held:
        raise CapabilityError(f"{WHAT}: the member holds no extractor ({weights_key}).")
    layout = json.loads(bytes(np.asarray(held[layout_key], dtype=np.uint8)).decode())
    named = unflatten(np.asarray(held[weights_key], dtype=np.float64), layout)
    layers: list[Any] = []
    names = [name for name, _ in layout if name.endswith(".weight")]
    for name in names:
        W = named[name]
        layer = torch.nn.Linear(W.shape[1], W.shape[0])
        with torch.no_grad():
            layer.weight.copy_(torch.as_tensor(W, dtype=torch.float32))
            layer.bias.copy_(torch.as_tensor(named[name[:-len("weight")] + "bias"],
                                             dtype=torch.float32))
        layers += [layer, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def fit_inverse(embeddings: np.ndarray, inputs: np.ndarray, *, hidden: int, epochs: int,
                lr: float, batch_size: int, seed: int,
                on_epoch: Callable[[int], None] | None = None) -> tuple[Any, list[float]]:
    """An inverse network trained on pairs ``(embeddings[i], inputs[i])``: an MLP with two
    hidden ReLU layers of ``hidden`` units and a tanh output (inputs in [-1, 1]), Adam on the
    squared error, mini-batches in a seeded order. Call inside
    :func:`fedsec.nn.deterministic`; apply with :func:`apply_inverse`.

    Returns the network and its training loss per epoch (the mean over the epoch's rows of
    the per-row squared error, as the batches saw it)."""
    torch = require_torch(WHAT)
    E = torch.from_numpy(np.array(embeddings, dtype=np.float32))
    X = torch.from_numpy(np.array(inputs, dtype=np.float32))
    f = decoder_network(E.shape[1], hidden, X.shape[1], seed)
    optimizer = torch.optim.Adam(f.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed)
    losses = []
    for epoch in range(1, epochs + 1):
        total = 0.0
        for batch in torch.randperm(len(E), generator=order).split(batch_size):
            optimizer.zero_grad()
            loss = ((f(E[batch]) - X[batch]) ** 2).sum(dim=1).mean()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        losses.append(total / len(E))
        if on_epoch is not None:
            on_epoch(epoch)
    return f, losses


def decoder_network(n_in: int, hidden: int, n_out: int, seed: int) -> Any:
    """An MLP from embeddings to inputs: two hidden ReLU layers of ``hidden`` units and a tanh
    output (inputs in [-1, 1]), its initial weights drawn from ``seed`` (the global torch
    generator is left as it was)."""
    torch = require_torch(WHAT)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return torch.nn.Sequential(
            torch.nn.Linear(n_in, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, n_out), torch.nn.Tanh())


def apply_inverse(f: Any, embeddings: np.ndarray) -> np.ndarray:
    """The inverse network's estimates of the inputs behind ``embeddings``."""
    torch = require_torch(WHAT)
    with torch.no_grad():
        out = f(torch.from_numpy(np.array(embeddings, dtype=np.float32)))
    return np.asarray(out.numpy(), dtype=np.float64)


def embed(g: Any, inputs: np.ndarray) -> np.ndarray:
    """``g(inputs)``: a query of the extractor (no gradients)."""
    torch = require_torch(WHAT)
    with torch.no_grad():
        out = g(torch.from_numpy(np.array(inputs, dtype=np.float32)))
    return np.asarray(out.numpy(), dtype=np.float64)
