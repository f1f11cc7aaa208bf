"""Multi-view learning (MVL, paper 002) as pure functions on numpy arrays.

The objective, over views ``k`` with data ``X_k`` (N x d_k), labels ``Y`` (N x C, one-hot)::

    sum_k ||X_k W_k - Z_k||^2 + beta_k ||W_k||_{2,1} + zeta_k ||Z_k - Z||^2 + eta ||Z - Y||^2

(``||W||_{2,1}`` is the sum of the row norms of W). It is solved by block updates: IRLS for
each ``W_k``, then ``Z_k = (X_k W_k + zeta_k Z) / (1 + zeta_k)``, then
``Z = (sum_k zeta_k Z_k + eta Y) / (sum_k zeta_k + eta)``. The paper calls the objective
non-convex; it is jointly convex (each term is a convex function of an affine map of
``(W, Z_k, Z)``), so the optimum does not depend on the start.

At test time ``Z_k = X_k W_k`` and the two averaging steps alternate; their fixed point is
``Z = sum_k a_k X_k W_k / sum_k a_k`` with ``a_k = zeta_k / (1 + zeta_k)``
(:func:`test_fixed_point`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

TINY = 1e-300


def l21_norm(W: np.ndarray) -> float:
    """The sum of the row norms of ``W``.

    Examples
    --------
    >>> l21_norm(np.array([[3.0, 4.0], [0.0, 1.0]]))
    6.0
    """
    return float(np.linalg.norm(W, axis=1).sum())


def solve_spd(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A^-1 B`` for a symmetric positive definite ``A`` (its upper triangle is read).

    LAPACK's ``posv`` (Cholesky factor, then two triangular solves; a division when ``A`` is
    1 x 1), called directly: the same bits as ``scipy.linalg.solve(A, B, assume_a="pos")``,
    without that function's argument checks and condition estimate, which cost three times
    the solve itself on IRLS's 32 x 32 systems. ``A`` and ``B`` must be finite float64
    arrays; an ill-conditioned ``A`` is not warned about.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite.

    Examples
    --------
    >>> solve_spd(np.array([[4.0, 2.0], [2.0, 3.0]]), np.array([[2.0], [1.0]])).ravel().tolist()
    [0.5, 0.0]
    """
    if A.shape == (1, 1):  # scipy divides (one rounding), where Cholesky would take a root
        if not A[0, 0] > 0:
            raise np.linalg.LinAlgError("The matrix is not positive definite.")
        return np.asarray(B / A[0, 0], dtype=np.float64)
    _, x, info = lapack.dposv(A, B)
    if info > 0:
        raise np.linalg.LinAlgError(f"The matrix is not positive definite (its leading minor "
                                    f"of order {info} is not).")
    if info < 0:
        raise ValueError(f"LAPACK dposv refused argument {-info}.")
    return np.ascontiguousarray(x)  # C order, as scipy returns it: later sums add in its order


def irls_weights(X: np.ndarray, Z: np.ndarray, beta: float, W0: np.ndarray, *,
                 eps: float = 1e-8, tol: float = 1e-8, max_iter: int = 50,
                 gram: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """``argmin_W ||X W - Z||^2 + beta ||W||_{2,1}`` by iteratively reweighted least squares.

    ``A = diag(1 / (2 (||W^(i)|| + eps)))``, ``W = (X^T X + beta A)^-1 X^T Z``, from ``W0``
    until the relative change of ``W`` is at most ``tol`` or ``max_iter`` steps. ``gram``
    is ``X^T X`` when the caller has it. Returns ``W`` and the steps taken.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)); Z = X @ np.array([[1.0], [0.0], [2.0]])
    >>> W, _ = irls_weights(X, Z, 0.0, np.ones((3, 1)))
    >>> bool(np.allclose(W.ravel(), [1.0, 0.0, 2.0]))
    True
    """
    G = X.T @ X if gram is None else gram
    B = X.T @ Z
    W = np.array(W0, dtype=np.float64)
    stride = G.shape[0] + 1  # between diagonal entries of the raveled matrix
    for step in range(1, max_iter + 1):
        a = 1.0 / (2.0 * (_row_norms(W) + eps))
        A = np.array(G, dtype=np.float64, order="C")  # G + beta diag(a): off the diagonal,
        A.ravel()[::stride] += beta * a                # G's own bits
        W_new = solve_spd(A, B)
        change = _norm(W_new - W) / max(_norm(W), TINY)
        W = W_new
        if change <= tol:
            return W, step
    return W, max_iter


def _row_norms(W: np.ndarray) -> np.ndarray:
    """The norms of ``W``'s rows (its last axis) as ``np.linalg.norm(W, axis=-1)`` computes
    them, without its dispatch: the same bits."""
    return np.sqrt(np.add.reduce(W * W, axis=-1))


def _norm(M: np.ndarray) -> float:
    """The Frobenius norm as ``np.linalg.norm(M)`` computes it (a dot of the raveled array)."""
    flat = M.ravel(order="K")
    return float(np.sqrt(flat.dot(flat)))


def view_estimate(XW: np.ndarray, Z: np.ndarray, zeta: float) -> np.ndarray:
    """``Z_k = (X_k W_k + zeta_k Z) / (1 + zeta_k)``."""
    return (XW + zeta * Z) / (1.0 + zeta)


def consensus(weighted_sum: np.ndarray, zeta_sum: float, eta: float,
              Y: np.ndarray | None) -> np.ndarray:
    """``Z = (sum_k zeta_k Z_k + eta Y) / (sum_k zeta_k + eta)`` from the two sums.

    Without ``Y`` (the test phase) ``eta`` is ignored: ``Z = sum_k zeta_k Z_k / sum_k zeta_k``.
    """
    if Y is None:
        return weighted_sum / zeta_sum
    return (weighted_sum + eta * Y) / (zeta_sum + eta)


def objective(Xs: Sequence[np.ndarray], Ws: Sequence[np.ndarray], Zs: Sequence[np.ndarray],
              Z: np.ndarray, Y: np.ndarray, betas: Sequence[float], zetas: Sequence[float],
              eta: float) -> float:
    """The MVL objective at ``(W_k, Z_k, Z)``."""
    total = eta * float(np.sum((Z - Y) ** 2))
    for X, W, Zk, beta, zeta in zip(Xs, Ws, Zs, betas, zetas, strict=True):
        total += float(np.sum((X @ W - Zk) ** 2)) + beta * l21_norm(W)
        total += zeta * float(np.sum((Zk - Z) ** 2))
    return total


def test_fixed_point(XWs: Sequence[np.ndarray], zetas: Sequence[float]) -> np.ndarray:
    """The test phase's fixed point ``sum_k a_k X_k W_k / sum_k a_k``, ``a_k = zeta_k/(1+zeta_k)``.

    Examples
    --------
    >>> test_fixed_point([np.ones((1, 2)), 3 * np.ones((1, 2))], [1.0, 1.0]).tolist()
    [[2.0, 2.0]]
    """
    a = [z / (1.0 + z) for z in zetas]
    return np.asarray(sum(ak * P for ak, P in zip(a, XWs, strict=True)) / sum(a))


def test_consensus(XWs: Sequence[np.ndarray], zetas: Sequence[float], *, tol: float = 1e-10,
                   max_iter: int = 1000) -> tuple[np.ndarray, int]:
    """The paper's test phase: ``Z_k = X_k W_k``, then alternate the two averaging steps.

    Returns the consensus and the steps taken (until its relative change is at most ``tol``).
    """
    Zs = [np.array(P, dtype=np.float64) for P in XWs]
    zeta_sum = float(sum(zetas))
    Z = consensus(np.asarray(sum(z * Zk for z, Zk in zip(zetas, Zs, strict=True))), zeta_sum,
                  0.0, None)
    for step in range(1, max_iter + 1):
        Zs = [view_estimate(P, Z, z) for P, z in zip(XWs, zetas, strict=True)]
        Z_new = consensus(np.asarray(sum(z * Zk for z, Zk in zip(zetas, Zs, strict=True))),
                          zeta_sum, 0.0, None)
        change = np.linalg.norm(Z_new - Z) / max(float(np.linalg.norm(Z)), TINY)
        Z = Z_new
        if change <= tol:
            return Z, step
    return Z, max_iter


def one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels ``0..C-1`` as an N x C indicator matrix.

    Examples
    --------
    >>> one_hot(np.array([0, 2]), 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    Y = np.zeros((len(y), n_classes))
    Y[np.arange(len(y)), np.asarray(y, dtype=np.int64)] = 1.0
    return Y


def orthonormal(rng: np.random.Generator, n_rows: int, n_cols: int) -> np.ndarray:
    """A random ``n_rows x n_cols`` matrix with orthonormal columns (as many as fit)."""
    Q, _ = np.linalg.qr(rng.normal(size=(n_rows, n_cols)))
    if Q.shape[1] < n_cols:
        Q = np.hstack([Q, np.zeros((n_rows, n_cols - Q.shape[1]))])
    return Q


@dataclass(frozen=True)
class Settings:
    """Iteration controls shared by every MVL solve."""

    tol: float = 1e-6
    max_rounds: int = 100
    inner_tol: float = 1e-8
    max_inner: int = 50
    eps: float = 1e-8


@dataclass(frozen=True)
class MVLFit:
    """A solved MVL problem: weights and estimates per view, the consensus, the rounds run."""

    Ws: tuple[np.ndarray, ...]
    Zs: tuple[np.ndarray, ...]
    Z: np.ndarray
    rounds: int
    converged: bool
    objectives: tuple[float, ...]


def mvl_round(Xs: Sequence[np.ndarray], grams: Sequence[np.ndarray], Y: np.ndarray,
              Ws: Sequence[np.ndarray], Z: np.ndarray, betas: Sequence[float],
              zetas: Sequence[float], eta: float, settings: Settings,
              Zs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """One round of block updates: each view's ``W_k`` then ``Z_k``, then ``Z``."""
    new_Ws, new_Zs = [], []
    for X, G, W, Zk, beta, zeta in zip(Xs, grams, Ws, Zs, betas, zetas, strict=True):
        W, _ = irls_weights(X, Zk, beta, W, eps=settings.eps, tol=settings.inner_tol,
                            max_iter=settings.max_inner, gram=G)
        new_Ws.append(W)
        new_Zs.append(view_estimate(X @ W, Z, zeta))
    weighted = np.asarray(sum(z * Zk for z, Zk in zip(zetas, new_Zs, strict=True)))
    return new_Ws, new_Zs, consensus(weighted, float(sum(zetas)), eta, Y)


def fit_mvl(Xs: Sequence[np.ndarray], Y: np.ndarray, *, betas: Sequence[float],
            zetas: Sequence[float], eta: float, Ws: Sequence[np.ndarray],
            Zs: Sequence[np.ndarray], Z: np.ndarray, settings: Settings = Settings(),
            track_objective: bool = False) -> MVLFit:
    """Algorithm 1: block updates from ``(Ws, Zs, Z)`` until ``Z`` changes by at most ``tol``
    (relative) or ``max_rounds`` rounds."""
    grams = [X.T @ X for X in Xs]
    Ws, Zs = list(Ws), list(Zs)
    objectives: list[float] = []
    for round_ in range(1, settings.max_rounds + 1):
        Ws, Zs, Z_new = mvl_round(Xs, grams, Y, Ws, Z, betas, zetas, eta, settings, Zs)
        change = np.linalg.norm(Z_new - Z) / max(float(np.linalg.norm(Z)), TINY)
        Z = Z_new
        if track_objective:
            objectives.append(objective(Xs, Ws, Zs, Z, Y, betas, zetas, eta))
        if change <= settings.tol:
            return MVLFit(tuple(Ws), tuple(Zs), Z, round_, True, tuple(objectives))
    return MVLFit(tuple(Ws), tuple(Zs), Z, settings.max_rounds, False, tuple(objectives))


def predict(Xs: Sequence[np.ndarray], Ws: Sequence[np.ndarray], zetas: Sequence[float], *,
            tol: float = 1e-10, max_iter: int = 1000) -> np.ndarray:
    """Class scores of test rows (the test phase's consensus); argmax gives the class."""
    Z, _ = test_consensus([X @ W for X, W in zip(Xs, Ws, strict=True)], zetas, tol=tol,
                          max_iter=max_iter)
    return Z


def single_view(X: np.ndarray, Y: np.ndarray, beta: float, *,
                settings: Settings = Settings()) -> np.ndarray:
    """The single-view baseline ``argmin_W ||X W - Y||^2 + beta ||W||_{2,1}``."""
    W0 = np.linalg.lstsq(X, Y, rcond=None)[0]
    W, _ = irls_weights(X, Y, beta, W0, eps=settings.eps, tol=settings.inner_tol,
                        max_iter=settings.max_inner)
    return W
