"""Inverting an extractor: the inputs behind embeddings (pure torch on numpy in and out).

Two attacks of He, Zhang, Lee, "Model inversion attacks against collaborative inference"
(ACSAC 2019):

- white-box (:func:`invert`, their regularised maximum likelihood): given the extractor ``g``
  and embeddings ``v``, find ``x = tanh(z)`` (inside the pixel range [-1, 1]) minimising
  ``||g(x) - v||² + tv * TV(x)`` by Adam from ``x = 0``. The total variation prior ``TV``
  reads the inputs as images only when ``positions`` places them on a grid; otherwise off.
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


def invert(g: Any, embeddings: np.ndarray, *, steps: int, lr: float, tv: float = 0.0,
           positions: np.ndarray | None = None,
           on_step: Callable[[int], None] | None = None) -> np.ndarray:
    """The inputs in [-1, 1] whose embeddings under ``g`` best match ``embeddings``.

    ``positions`` (optional, ``(d, 2)`` integer row/column of each input on an image grid)
    turns on the total-variation prior between inputs that are grid neighbours;
    ``on_step(steps_done)`` follows the steps.
    """
    torch = require_torch(WHAT)
    for p in g.parameters():
        p.requires_grad_(False)
    V = torch.from_numpy(np.array(embeddings, dtype=np.float32))
    d = g[0].in_features
    z = torch.zeros((len(V), d), requires_grad=True)
    pairs = _neighbours(positions) if (tv and positions is not None) else None
    optimizer = torch.optim.Adam([z], lr=lr)
    for step in range(1, steps + 1):
        optimizer.zero_grad()
        x = torch.tanh(z)
        loss = ((g(x) - V) ** 2).sum(dim=1).mean()
        if pairs is not None and len(pairs):
            loss = loss + tv * (x[:, pairs[:, 0]] - x[:, pairs[:, 1]]).abs().sum(dim=1).mean()
        loss.backward()
        optimizer.step()
        if on_step is not None:
            on_step(step)
    return np.tanh(z.detach().numpy().astype(np.float64))


def fit_inverse(embeddings: np.ndarray, inputs: np.ndarray, *, hidden: int, epochs: int,
                lr: float, batch_size: int, seed: int,
                on_epoch: Callable[[int], None] | None = None) -> Any:
    """An inverse network trained on pairs ``(embeddings[i], inputs[i])``: an MLP with two
    hidden ReLU layers of ``hidden`` units and a tanh output (inputs in [-1, 1]), Adam on the
    squared error, mini-batches in a seeded order. Call inside
    :func:`fedsec.nn.deterministic`; apply with :func:`apply_inverse`."""
    torch = require_torch(WHAT)
    E = torch.from_numpy(np.array(embeddings, dtype=np.float32))
    X = torch.from_numpy(np.array(inputs, dtype=np.float32))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        f = torch.nn.Sequential(
            torch.nn.Linear(E.shape[1], hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, X.shape[1]), torch.nn.Tanh())
    optimizer = torch.optim.Adam(f.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed)
    for epoch in range(1, epochs + 1):
        for batch in torch.randperm(len(E), generator=order).split(batch_size):
            optimizer.zero_grad()
            loss = ((f(E[batch]) - X[batch]) ** 2).sum(dim=1).mean()
            loss.backward()
            optimizer.step()
        if on_epoch is not None:
            on_epoch(epoch)
    return f


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


def _neighbours(positions: np.ndarray) -> np.ndarray:
    """Pairs of input indices that are horizontal or vertical neighbours on the grid."""
    where = {(int(r), int(c)): i for i, (r, c) in enumerate(np.asarray(positions))}
    pairs = [(i, where[(r + dr, c + dc)]) for (r, c), i in where.items()
             for dr, dc in ((0, 1), (1, 0)) if (r + dr, c + dc) in where]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)
