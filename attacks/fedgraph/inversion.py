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

from fedsec.convergence import Convergence, judge
from fedsec.errors import CapabilityError, ValidationError
from fedsec.nn import require_torch, seeded_init, unflatten

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
                lr: float, batch_size: int, validation: float, patience: int, seed: int,
                on_epoch: Callable[[int], None] | None = None) -> tuple[Any, list[float]]:
    """An inverse network trained on pairs ``(embeddings[i], inputs[i])``: an MLP with two
    hidden ReLU layers of ``hidden`` units and a tanh output (inputs in [-1, 1]) trained by
    :func:`train_early_stopped`. Call inside :func:`fedsec.nn.deterministic`; apply with
    :func:`apply_inverse`.

    Returns the network (at its best held-out epoch) and its held-out error per epoch."""
    E = np.asarray(embeddings, dtype=np.float64)
    X = np.asarray(inputs, dtype=np.float64)
    f = decoder_network(E.shape[1], hidden, X.shape[1], seed)
    history = train_early_stopped(f, E, X, held_out_split(len(E), validation, seed),
                                  epochs=epochs, lr=lr, batch_size=batch_size,
                                  patience=patience, seed=seed, on_epoch=on_epoch)
    return f, history


def held_out_split(n: int, validation: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(train, held)`` row indices: a seeded ``validation`` share of ``n`` rows held out (at
    least one row, and at least one left to train on)."""
    if n < 2:
        raise ValidationError(f"{WHAT}: a decoder needs at least 2 pairs (one held out to "
                              f"stop its training); got {n}.")
    held = np.random.default_rng(seed).permutation(n)[:min(n - 1, max(1, int(validation * n)))]
    return np.setdiff1d(np.arange(n), held), np.sort(held)


def train_early_stopped(f: Any, embeddings: np.ndarray, inputs: np.ndarray,
                        split: tuple[np.ndarray, np.ndarray], *, epochs: int, lr: float,
                        batch_size: int, patience: int, seed: int,
                        on_epoch: Callable[[int], None] | None = None) -> list[float]:
    """Train the network ``f`` from ``embeddings`` to ``inputs`` by Adam on the squared error
    (mini-batches in a seeded order) on the ``split``'s training rows, judged on its held-out
    rows (:func:`held_out_split`); stop once the held-out error has not improved for ``patience``
    epochs (or after ``epochs``) and leave ``f`` at its best held-out epoch.

    Returns the held-out mean squared error per epoch: the objective history that says
    whether training converged (:func:`fedsec.convergence.judge` with the last ``patience``
    epochs as its tail)."""
    torch = require_torch(WHAT)
    train, held = split
    E = torch.from_numpy(np.asarray(embeddings, dtype=np.float32))
    X = torch.from_numpy(np.asarray(inputs, dtype=np.float32))
    optimizer = torch.optim.Adam(f.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed)
    train_t, held_t = torch.from_numpy(train), torch.from_numpy(held)
    history: list[float] = []
    best_state = {k: v.clone() for k, v in f.state_dict().items()}
    for epoch in range(1, epochs + 1):
        for batch in train_t[torch.randperm(len(train_t), generator=order)].split(batch_size):
            optimizer.zero_grad()
            loss = ((f(E[batch]) - X[batch]) ** 2).sum(dim=1).mean()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            history.append(float(((f(E[held_t]) - X[held_t]) ** 2).mean()))
        if on_epoch is not None:
            on_epoch(epoch)
        best = int(np.argmin(history))
        if best == len(history) - 1:
            best_state = {k: v.clone() for k, v in f.state_dict().items()}
        elif len(history) - 1 - best >= patience:
            break
    f.load_state_dict(best_state)
    return history


def early_stop_judged(history: list[float], *, epochs: int, patience: int) -> Convergence:
    """How an early-stopped training ended: ``converged`` when the held-out error did not
    improve over its last ``patience`` epochs, ``budget`` when it was still improving at the
    last allowed epoch.

    Examples
    --------
    >>> early_stop_judged([3.0, 2.0, 1.0, 1.5, 1.2], epochs=100, patience=2).stopped
    'converged'
    >>> early_stop_judged([3.0, 2.0, 1.0], epochs=3, patience=2).stopped
    'budget'
    >>> early_stop_judged([2.0] * 50 + [1.0] + [1.5] * 100, epochs=3000, patience=100).stopped
    'converged'
    """
    # half an epoch short of ``patience``: the window must not reach back to the best epoch
    # through rounding (100 / 151 * 151 > 100)
    tail = min(1.0, (patience - 0.5) / max(1, len(history)))
    return judge(history, budget=epochs, tail=tail, stopped_early=len(history) < epochs)


def decoder_network(n_in: int, hidden: int, n_out: int, seed: int) -> Any:
    """An MLP from embeddings to inputs: two hidden ReLU layers of ``hidden`` units and a tanh
    output (inputs in [-1, 1]), its initial weights drawn from ``seed`` (the global torch
    generator is left as it was)."""
    torch = require_torch(WHAT)
    with seeded_init(seed, WHAT):
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
