"""H-FedMV's optimality conditions: linear in a client's Gram blocks and class sums.

A client's local MVL optimum (its weights ``W_k`` for every view, which it sends) satisfies,
for each view k (eliminating ``Z_k`` and ``Z``; ``a = zeta / (1 + zeta)``, K views)::

    G_kk W_k - (a sum_j G_kj W_j + eta B_k) / (K a + eta) = -(beta / (2 a)) D_k W_k

with ``G = X^T X`` (the Gram matrix of all its columns, blocks ``G_kj = X_k^T X_j``),
``B = X^T Y`` (its per-class column sums) and ``D_k = diag(1 / (||W_k^(i)|| + eps))`` (IRLS's
weights). Given the weights, these are linear equations in ``(G, B)``: ``D x C`` equations for
``D (D + 1) / 2 + D C`` unknowns. One run leaves them underdetermined (with a prior on ``G``
they give ``B``, hence the class-conditional means); runs under several ``(zeta, eta, beta)``
stack into a system whose rank grows with each configuration until ``(G, B)`` is identified.

Pure functions; ``tests/benchmarks/fedmv_conditions.py`` runs the sweep on real transcripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Conditions:
    """The linear system ``A u = b`` of one configuration; ``u`` packs ``(G, B)``
    (:func:`unpack`)."""

    A: np.ndarray
    b: np.ndarray
    n_features: int
    n_classes: int


def n_unknowns(n_features: int, n_classes: int) -> int:
    """``D (D + 1) / 2`` Gram entries (upper triangle) plus ``D C`` class sums."""
    return n_features * (n_features + 1) // 2 + n_features * n_classes


def _gram_index(n_features: int) -> np.ndarray:
    """``index[i, l]``: the unknown holding ``G[i, l] = G[l, i]``."""
    index = np.zeros((n_features, n_features), dtype=np.int64)
    rows, cols = np.triu_indices(n_features)
    index[rows, cols] = np.arange(rows.size)
    index[cols, rows] = np.arange(rows.size)
    return index


def conditions(Ws: Sequence[np.ndarray], *, beta: float, zeta: float, eta: float,
               eps: float) -> Conditions:
    """The optimality conditions of one client's local optimum ``Ws`` (one ``d_k x C`` per view).

    Examples
    --------
    >>> system = conditions([np.ones((2, 3)), np.ones((1, 3))], beta=4.0, zeta=1.0, eta=1.0,
    ...                     eps=1e-8)
    >>> system.A.shape, n_unknowns(3, 3)
    ((9, 15), 15)
    """
    Ws = [np.asarray(W, dtype=np.float64) for W in Ws]
    K, C = len(Ws), Ws[0].shape[1]
    sizes = [W.shape[0] for W in Ws]
    D = sum(sizes)
    starts = np.cumsum([0, *sizes])
    a = zeta / (1.0 + zeta)
    scale = K * a + eta
    gram = _gram_index(D)
    n_gram = D * (D + 1) // 2
    A = np.zeros((D * C, n_unknowns(D, C)))
    b = np.zeros(D * C)
    W_all = np.vstack(Ws)  # D x C
    for k, Wk in enumerate(Ws):
        # M^(k): rows of G in block k multiply M^(k) = (delta_kj - a / scale) W_j, stacked over j
        M = -(a / scale) * W_all
        M[starts[k]:starts[k + 1]] += Wk
        right = -(beta / (2 * a)) * Wk / (np.linalg.norm(Wk, axis=1, keepdims=True) + eps)
        for i_local in range(sizes[k]):
            i = starts[k] + i_local
            for c in range(C):
                row = i * C + c
                np.add.at(A[row], gram[i], M[:, c])
                A[row, n_gram + i * C + c] = -eta / scale
                b[row] = right[i_local, c]
    return Conditions(A=A, b=b, n_features=D, n_classes=C)


def stacked_rank(systems: Sequence[Conditions]) -> int:
    """The rank of the stacked systems (identified when it equals :func:`n_unknowns`)."""
    return int(np.linalg.matrix_rank(np.vstack([s.A for s in systems])))


def solve(systems: Sequence[Conditions]) -> tuple[np.ndarray, np.ndarray]:
    """``(G, B)`` by least squares on the stacked systems (minimum norm when underdetermined)."""
    A = np.vstack([s.A for s in systems])
    b = np.concatenate([s.b for s in systems])
    return unpack(np.linalg.lstsq(A, b, rcond=None)[0], systems[0].n_features,
                  systems[0].n_classes)


def class_sums_given_gram(system: Conditions, G: np.ndarray) -> np.ndarray:
    """``B`` from one configuration when ``G`` is known (a prior): its equations in ``B`` alone."""
    D, C = system.n_features, system.n_classes
    n_gram = D * (D + 1) // 2
    known = pack(G, np.zeros((D, C)))[:n_gram]
    rhs = system.b - system.A[:, :n_gram] @ known
    B, *_ = np.linalg.lstsq(system.A[:, n_gram:], rhs, rcond=None)
    return B.reshape(D, C)


def record_from_difference(G: np.ndarray, B: np.ndarray, G_more: np.ndarray,
                           B_more: np.ndarray) -> tuple[np.ndarray, int]:
    """The record ``(x, class)`` one dataset has more than the other: ``G_more - G = x x^T``
    and ``B_more - B = x y^T`` (``y`` one-hot), both recovered by sweeps.

    Examples
    --------
    >>> x = np.array([1.0, -2.0]); G = np.eye(2); B = np.zeros((2, 3))
    >>> B_more = B.copy(); B_more[:, 1] = x
    >>> found, label = record_from_difference(G, B, G + np.outer(x, x), B_more)
    >>> np.round(found, 12).tolist(), label
    ([1.0, -2.0], 1)
    """
    dB = np.asarray(B_more) - np.asarray(B)
    label = int(np.argmax(np.linalg.norm(dB, axis=0)))
    values, vectors = np.linalg.eigh((np.asarray(G_more) - np.asarray(G) + (
        np.asarray(G_more) - np.asarray(G)).T) / 2)
    x = np.sqrt(max(values[-1], 0.0)) * vectors[:, -1]
    if x @ dB[:, label] < 0:  # the sign the class sums fix
        x = -x
    return x, label


def pack(G: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``(G, B)`` as the unknown vector (upper triangle of ``G``, then ``B`` row by row)."""
    rows, cols = np.triu_indices(G.shape[0])
    return np.concatenate([G[rows, cols], np.asarray(B).ravel()])


def unpack(u: np.ndarray, n_features: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The unknown vector back to ``(G, B)``.

    Examples
    --------
    >>> G, B = np.array([[2.0, 1.0], [1.0, 3.0]]), np.arange(4.0).reshape(2, 2)
    >>> G2, B2 = unpack(pack(G, B), 2, 2)
    >>> bool(np.array_equal(G, G2) and np.array_equal(B, B2))
    True
    """
    D = n_features
    n_gram = D * (D + 1) // 2
    G = np.zeros((D, D))
    rows, cols = np.triu_indices(D)
    G[rows, cols] = u[:n_gram]
    G[cols, rows] = u[:n_gram]
    return G, u[n_gram:].reshape(D, n_classes)
