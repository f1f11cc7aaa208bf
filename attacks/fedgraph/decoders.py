"""Learned decoders from embeddings back to inputs, fitted on the adversary's own pairs.

Both fit ``(g(x), x)`` pairs a colluder holds (its own training rows through its extractor)
and choose their capacity on held-out pairs of the same colluder, never on the rows attacked:

- :func:`fit_ridge`: ridge regression ``x ≈ W (e - ē) + x̄`` in closed form (one SVD per
  fold), its regularisation ``alpha`` chosen by ``folds``-fold cross-validation over a grid
  relative to the embeddings' scale (:data:`ALPHAS`);
- :func:`fit_mlp`: an MLP (standardised embeddings, two hidden ReLU layers, tanh output)
  trained by Adam on all but a held-out ``validation`` share of the pairs until the held-out
  error stops improving for ``patience`` epochs; the weights of the epoch with the lowest
  held-out error are kept (early stopping), and the held-out error per epoch is its
  objective history.

Predictions are clipped to the pixel box [-1, 1] (:func:`decode`): a projection onto the box
can only move an estimate closer to any point inside it.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, size=(200, 3))
>>> E = X @ rng.normal(size=(3, 6))
>>> model = fit_ridge(E, X, folds=5, seed=0)
>>> bool(np.abs(decode(model, E) - X).max() < 1e-2)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fedsec.attacks.fedgraph.inversion import (
    decoder_network,
    held_out_split,
    train_early_stopped,
)
from fedsec.errors import ValidationError
from fedsec.nn import require_torch

WHAT = "attack 'learned-decoder'"
#: Ridge penalties tried, as multiples of the mean squared singular value of the centred
#: embeddings (so the grid follows the embeddings' scale).
ALPHAS = tuple(float(a) for a in np.logspace(-8, 2, 21))


@dataclass(frozen=True)
class Decoder:
    """A fitted decoder: ``kind`` (``ridge`` or ``mlp``), what it needs to predict, the
    validation error of each candidate (``alpha`` per penalty, or per epoch) and the chosen
    one."""

    kind: str
    embedding_mean: np.ndarray
    embedding_scale: np.ndarray
    input_mean: np.ndarray
    weights: Any
    validation: tuple[float, ...]
    chosen: float


def _ridge_weights(E: np.ndarray, X: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """``(len(alphas), m, d)``: ridge weights of centred ``E`` on centred ``X`` per penalty."""
    U, s, Vt = np.linalg.svd(E, full_matrices=False)
    UtX = U.T @ X
    shrink = s[None, :] / (s[None, :] ** 2 + alphas[:, None])
    return (Vt.T[None, :, :] * shrink[:, None, :]) @ UtX


def fit_ridge(embeddings: np.ndarray, inputs: np.ndarray, *, folds: int, seed: int) -> Decoder:
    """Ridge regression from embeddings to inputs, ``alpha`` by cross-validation on the pairs.

    Rows are dealt into ``folds`` folds in a seeded order; each penalty of :data:`ALPHAS`
    (times the mean squared singular value of the centred embeddings) is scored by its mean
    squared error on the held-out folds, and the best is refitted on every pair.
    """
    E = np.asarray(embeddings, dtype=np.float64)
    X = np.asarray(inputs, dtype=np.float64)
    if len(E) < max(2, folds) or len(E) != len(X):
        raise ValidationError(f"{WHAT}: ridge needs at least {max(2, folds)} pairs of "
                              f"embeddings and inputs; got {len(E)} and {len(X)}.")
    scale = float(np.mean(np.linalg.svd(E - E.mean(0), compute_uv=False) ** 2)) or 1.0
    alphas = np.asarray(ALPHAS) * scale
    fold = np.random.default_rng(seed).permutation(len(E)) % folds
    errors = np.zeros(len(alphas))
    for k in range(folds):
        train, held = fold != k, fold == k
        e_mean, x_mean = E[train].mean(0), X[train].mean(0)
        W = _ridge_weights(E[train] - e_mean, X[train] - x_mean, alphas)
        guess = np.clip((E[held] - e_mean) @ W + x_mean, -1, 1)
        errors += ((guess - X[held]) ** 2).sum(axis=(1, 2))
    errors /= X.size
    best = int(np.argmin(errors))
    e_mean, x_mean = E.mean(0), X.mean(0)
    W = _ridge_weights(E - e_mean, X - x_mean, alphas[best:best + 1])[0]
    return Decoder("ridge", e_mean, np.ones(E.shape[1]), x_mean, W,
                   tuple(float(e) for e in errors), float(alphas[best]))


def fit_mlp(embeddings: np.ndarray, inputs: np.ndarray, *, hidden: int, epochs: int,
            lr: float, batch_size: int, validation: float, patience: int,
            seed: int) -> Decoder:
    """An MLP decoder on standardised embeddings, trained by
    :func:`~fedsec.attacks.fedgraph.inversion.train_early_stopped` (held-out share
    ``validation``, stopped after ``patience`` epochs without improvement) and kept at its
    best held-out epoch (``validation`` of the result: the held-out error per epoch). Call
    inside :func:`fedsec.nn.deterministic`."""
    E = np.asarray(embeddings, dtype=np.float64)
    X = np.asarray(inputs, dtype=np.float64)
    if len(E) != len(X):
        raise ValidationError(f"{WHAT}: {len(E)} embeddings for {len(X)} inputs.")
    split = held_out_split(len(E), validation, seed)
    train = split[0]
    e_mean, e_scale = E[train].mean(0), E[train].std(0) + 1e-8
    f = decoder_network(E.shape[1], hidden, X.shape[1], seed)
    history = train_early_stopped(f, (E - e_mean) / e_scale, X, split, epochs=epochs, lr=lr,
                                  batch_size=batch_size, patience=patience, seed=seed)
    return Decoder("mlp", e_mean, e_scale, X[train].mean(0), f, tuple(history),
                   float(int(np.argmin(history)) + 1))


def decode(model: Decoder, embeddings: np.ndarray) -> np.ndarray:
    """The decoder's estimates of the inputs behind ``embeddings``, in [-1, 1]."""
    E = (np.asarray(embeddings, dtype=np.float64) - model.embedding_mean) / model.embedding_scale
    if model.kind == "ridge":
        return np.clip(E @ model.weights + model.input_mean, -1.0, 1.0)
    torch = require_torch(WHAT)
    with torch.no_grad():
        out = model.weights(torch.from_numpy(E.astype(np.float32)))
    return np.clip(np.asarray(out.numpy(), dtype=np.float64), -1.0, 1.0)
