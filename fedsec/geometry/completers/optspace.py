"""OptSpace: trimming, spectral projection, then descent on the Grassmann manifold.

Implements R. H. Keshavan, A. Montanari, S. Oh, "Matrix Completion from a Few
Entries", IEEE Transactions on Information Theory 56(6):2980-2998, 2010
("KMO10"), applied to the EDM with rank ``dim + 2`` as in seed paper 000
(Damiani, Rodina, Decherchi, 2024, section 4.1).

The three steps of KMO10:

1. Trimming: a row or column with more than twice the average number of
   known entries is over-represented; as in the authors' reference code, a
   random subset of its known entries (twice the average) is kept for the
   spectral step only.
2. Projection: the rank-r truncated SVD of the trimmed, rescaled matrix
   gives starting subspaces ``X`` (N x r) and ``Y`` (N x r).
3. Cleaning: minimise ``F(X, Y) = min_S 1/2 ||P_E(M - X S Y^T)||_F^2`` over
   pairs of r-dimensional subspaces. ``S`` is solved by least squares; the
   gradient is projected onto the horizontal space (``(I - X X^T) grad``) and
   the step retracted onto the manifold by QR, with an Armijo backtracking
   line search.

Compactness choices: the incoherence regulariser of KMO10 is left out (the
authors' code switches it off by default too), subspaces are kept orthonormal
(``X^T X = I``) rather than scaled by ``sqrt(N)``, and QR replaces the exact
geodesic. The estimate is the low-rank ``X S Y^T``, symmetrised; known entries
are fitted, not re-imposed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import svd

from fedsec.geometry._checks import (
    Progress,
    check_loop,
    check_progress,
    check_rng,
    completion_problem,
    finish_edm,
)
from fedsec.validation import check_int

OWNER = "optspace"


def optspace(
    D: Any, mask: Any, dim: int, *, rng: np.random.Generator, max_iter: int = 300,
    tol: float = 1e-7, rank: int | None = None, trim: bool = True, conjugate: bool = True,
    progress: Progress | None = None,
) -> np.ndarray:
    """Complete an EDM with OptSpace at rank ``dim + 2``.

    Parameters
    ----------
    D : array_like, shape (N, N)
        Partially known squared distances (unknown entries are ignored).
    mask : array_like of bool, shape (N, N)
        Symmetric; True where ``D`` is known. The diagonal counts as a known 0.
    dim : int
        Embedding dimension; the matrix rank used is ``dim + 2``.
    rng : numpy.random.Generator
        Chooses which entries of over-represented rows and columns trimming
        keeps.
    max_iter : int, default 300
        Maximum number of gradient steps.
    tol : float, default 1e-7
        Stop when the relative misfit on the known entries drops below
        ``tol``, or when a step improves the objective by less than ``tol``
        times its value.
    rank : int, optional
        Override the rank (default ``dim + 2``, the rank of an EDM).
    trim : bool, default True
        Apply KMO10's trimming before the spectral initialisation.
    progress : callable, optional
        Called each step with (step from 1, relative misfit
        ``||P_E(M - X S Y^T)|| / ||P_E(M)||``).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The symmetrised rank-r estimate, zero diagonal, clipped at 0.

    Examples
    --------
    >>> from fedsec.geometry import assemble_edm, edm, squared_distances
    >>> rng = np.random.default_rng(0)
    >>> X, W = rng.random((30, 2)), rng.random((6, 2))
    >>> D, mask = assemble_edm(None, squared_distances(X, W), squared_distances(W))
    >>> D_hat = optspace(D, mask, 2, rng=rng)
    >>> bool(np.linalg.norm(D_hat[:30, :30] - edm(X)) < 0.1 * np.linalg.norm(edm(X)))
    True
    """
    values, known, dim = completion_problem(D, mask, dim, owner=OWNER)
    rng = check_rng(rng, owner=OWNER)
    max_iter, tol = check_loop(max_iter, tol, owner=OWNER)
    progress = check_progress(progress, owner=OWNER)
    n_points = values.shape[0]
    rank = dim + 2 if rank is None else check_int(rank, owner=OWNER, name="rank", min_value=1,
                                                  max_value=n_points)
    rank = min(rank, n_points)
    observed = known | np.eye(n_points, dtype=bool)
    M = np.where(observed, values, 0.0)
    rows, cols = np.nonzero(observed)
    entries = M[rows, cols]
    norm_known = max(float(np.linalg.norm(entries)), 1e-300)

    X, Y = _spectral_start(M, observed, rank, rng, trim=bool(trim))
    S = _optimal_core(X, Y, rows, cols, entries)
    loss = _loss(X, S, Y, rows, cols, entries)
    step = 1.0
    dir_X = dir_Y = None
    old_gX = old_gY = None
    for iteration in range(1, max_iter + 1):
        grad_X, grad_Y = _gradient(M, X, S, Y, rows, cols, entries)
        if dir_X is None or not conjugate:
            beta = 0.0
        else:
            # Polak-Ribiere+, previous gradient and direction projected onto the new tangent space
            pX, pY = old_gX - X @ (X.T @ old_gX), old_gY - Y @ (Y.T @ old_gY)
            num = float(np.sum(grad_X * (grad_X - pX)) + np.sum(grad_Y * (grad_Y - pY)))
            den = float(np.sum(old_gX**2) + np.sum(old_gY**2))
            beta = max(num / den, 0.0) if den > 0 else 0.0
        if beta > 0:
            dir_X = -grad_X + beta * (dir_X - X @ (X.T @ dir_X))
            dir_Y = -grad_Y + beta * (dir_Y - Y @ (Y.T @ dir_Y))
        else:
            dir_X, dir_Y = -grad_X, -grad_Y
        slope = float(np.sum(grad_X * dir_X) + np.sum(grad_Y * dir_Y))
        if slope >= 0:
            dir_X, dir_Y = -grad_X, -grad_Y
            slope = -float(np.sum(grad_X**2) + np.sum(grad_Y**2))
        if slope == 0.0:
            break
        old_gX, old_gY = grad_X, grad_Y
        step *= 2.0
        while True:  # Armijo backtracking along the QR retraction, S held fixed
            X_new = _retract(X + step * dir_X)
            Y_new = _retract(Y + step * dir_Y)
            trial = _loss(X_new, S, Y_new, rows, cols, entries)
            if trial <= loss + 0.5 * step * slope or step < 1e-20:
                break
            step /= 2.0
        X, Y = X_new, Y_new
        S = _optimal_core(X, Y, rows, cols, entries)
        previous, loss = loss, _loss(X, S, Y, rows, cols, entries)
        misfit = float(np.sqrt(2.0 * loss)) / norm_known
        if progress is not None:
            progress(iteration, misfit)
        if misfit <= tol or previous - loss <= tol * previous:
            break
    return finish_edm(X @ S @ Y.T)


def _spectral_start(M: np.ndarray, observed: np.ndarray, rank: int,
                    rng: np.random.Generator, *, trim: bool) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1-2 of KMO10: trim over-represented rows/columns, rank-r SVD."""
    kept = observed.copy()
    if trim:
        for axis in (0, 1):  # columns, then rows, as the reference code does
            view = kept if axis == 0 else kept.T
            degree = view.sum(axis=0)
            limit = int(np.ceil(2.0 * degree.mean()))
            for line in np.flatnonzero(degree > limit):
                present = np.flatnonzero(view[:, line])
                drop = rng.permutation(present)[limit:]
                view[drop, line] = False
    trimmed = np.where(kept, M, 0.0) * (M.size / max(int(observed.sum()), 1))
    U, _, Vt = svd(trimmed, full_matrices=False)
    return U[:, :rank], Vt[:rank].T


def _gradient(M: np.ndarray, X: np.ndarray, S: np.ndarray, Y: np.ndarray, rows: np.ndarray,
              cols: np.ndarray, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Riemannian gradient of ``1/2 ||P_E(X S Y^T - M)||^2`` in X and Y (S fixed)."""
    residual = np.zeros_like(M)
    residual[rows, cols] = np.einsum("ij,jk,ik->i", X[rows], S, Y[cols]) - entries
    grad_X = residual @ Y @ S.T
    grad_Y = residual.T @ X @ S
    return grad_X - X @ (X.T @ grad_X), grad_Y - Y @ (Y.T @ grad_Y)


def _retract(A: np.ndarray) -> np.ndarray:
    """Orthonormal basis of span(A) by QR, signs fixed so it stays close to A."""
    Q, R = np.linalg.qr(A)
    signs = np.sign(np.diag(R))
    return Q * np.where(signs == 0, 1.0, signs)


def _optimal_core(X: np.ndarray, Y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                  entries: np.ndarray) -> np.ndarray:
    """``argmin_S ||P_E(M - X S Y^T)||``: least squares in the r^2 entries of S."""
    rank = X.shape[1]
    design = (X[rows][:, :, None] * Y[cols][:, None, :]).reshape(rows.size, rank * rank)
    core = np.linalg.lstsq(design, entries, rcond=None)[0]
    return core.reshape(rank, rank)


def _loss(X: np.ndarray, S: np.ndarray, Y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
          entries: np.ndarray) -> float:
    fitted = np.einsum("ij,jk,ik->i", X[rows], S, Y[cols])
    return 0.5 * float(np.sum((fitted - entries) ** 2))
