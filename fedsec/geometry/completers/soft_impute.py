"""Soft-Impute: iterative singular-value soft-thresholding of the filled-in matrix.

Implements R. Mazumder, T. Hastie, R. Tibshirani, "Spectral Regularization
Algorithms for Learning Large Incomplete Matrices", Journal of Machine
Learning Research 11:2287-2322, 2010 ("MHT10"), Algorithm 1, the general
matrix-completion method of seed paper 000's comparison (Damiani, Rodina,
Decherchi, 2024, section 4.1).

For a shrinkage ``lambda`` the iteration ``Z <- S_lambda(P_E(M) + P_E^perp(Z))``
(``S_lambda`` soft-thresholds the singular values) converges to the minimiser
of ``1/2 ||P_E(M - Z)||_F^2 + lambda ||Z||_*``. Along a decreasing path of
``lambda`` values each solve starts from the previous one (warm starts). The
EDM and the mask are symmetric, so every iterate is symmetric and the SVD is
computed as an eigendecomposition (singular values are the absolute
eigenvalues).

The method knows nothing about EDMs and does not use ``dim`` by default. It
completes a missing diagonal block poorly unless the landmarks are many: with
``D_X`` hidden for n = 40 points in 2-D (uniform in the unit square), its
error divided by the mean-fill baseline's was 0.9-1.4 for m = 10 landmarks
and 0.05-0.5 for m = 40 (ten instances each), which matches seed paper 000's
observation that Soft-Impute only did well with many landmarks. Two options
go beyond MHT10 Algorithm 1:

- ``max_rank`` stops the path before the first solution of higher rank (MHT10
  report paths up to a rank bound; an EDM in ``R^dim`` has rank <= dim + 2),
  and lets large problems use a partial eigendecomposition;
- ``center=True`` fits unpenalised row and column effects ``a_i + a_j`` and
  shrinks only the double-centred remainder, the centring of T. Hastie,
  R. Mazumder, J. Lee, R. Zadeh, "Matrix Completion and Low-Rank SVD via Fast
  Alternating Least Squares", JMLR 16:3367-3402, 2015. An EDM is exactly such
  a sum, ``D = g 1^T + 1 g^T - 2 G`` with ``G`` of rank ``dim``. On the
  instances above the ratio became 0.35-0.9 (m = 10) and 0.01-0.08 (m = 40).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedsec.convergence import judge
from fedsec.geometry._checks import (
    Progress,
    Report,
    completer_inputs,
    finish_edm,
)
from fedsec.geometry.completers._spectral import blas_threads, leading_eigenpairs
from fedsec.validation import check_float, check_int

OWNER = "soft_impute"


def soft_impute(
    D: Any, mask: Any, dim: int, *, rng: np.random.Generator, max_iter: int = 500,
    tol: float = 1e-6, shrinkage: float | None = None, n_lambdas: int = 30,
    min_ratio: float = 1e-4, max_rank: int | None = None, center: bool = False,
    progress: Progress | None = None, on_convergence: Report | None = None,
) -> np.ndarray:
    """Complete an EDM with Soft-Impute along a path of shrinkage values.

    Parameters
    ----------
    D : array_like, shape (N, N)
        Partially known squared distances (unknown entries are ignored).
    mask : array_like of bool, shape (N, N)
        Symmetric; True where ``D`` is known. The diagonal counts as a known 0.
    dim : int
        Embedding dimension (validated; the algorithm itself does not use it).
    rng : numpy.random.Generator
        Starts the Lanczos iteration of the partial eigendecomposition used
        for large matrices (N > 400) with a ``max_rank``.
    max_iter : int, default 500
        Maximum iterations per shrinkage value.
    tol : float, default 1e-6
        Stop a solve when ``||Z_new - Z||_F^2 / ||Z||_F^2 < tol`` (MHT10's
        criterion).
    shrinkage : float, optional
        A fixed ``lambda`` (in the units of ``D``) instead of the path.
    n_lambdas : int, default 30
        Length of the geometric path from the largest singular value of
        ``P_E(M)`` down to ``min_ratio`` times it; the last solution is
        returned.
    min_ratio : float, default 1e-4
        Smallest ``lambda`` of the path relative to the largest.
    max_rank : int, optional
        Stop the path before the first solution of higher rank, and compute
        only ``max_rank + 1`` eigenpairs per iteration (with a fixed
        ``shrinkage`` this truncates the thresholding). No bound by default.
    center : bool, default False
        Fit unpenalised row/column effects and shrink the double-centred
        remainder (Hastie et al. 2015); see the module notes.
    progress : callable, optional
        Called each iteration with (iteration counted over the whole path
        from 1, objective ``1/2 ||P_E(M - Z)||^2 + lambda ||Z||_*``).
    on_convergence : callable, optional
        Called once at the end with the :class:`~fedsec.convergence.Convergence` of the
        solve whose estimate is returned (the last shrinkage level kept; the earlier levels
        are its warm starts): its objective per iteration, judged against ``max_iter``.

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The known entries of ``D`` with the unknown ones filled from the
        estimate (MHT10's fill-in step), symmetric, zero diagonal, clipped at 0.

    Examples
    --------
    >>> from fedsec.geometry import landmark_problem
    >>> rng = np.random.default_rng(0)
    >>> problem = landmark_problem(10, 20, rng=rng)
    >>> D_hat = soft_impute(problem.D, problem.mask, 2, rng=rng)
    >>> bool(problem.error(D_hat) < 0.1)
    True
    """
    values, known, dim, rng, max_iter, tol, progress, on_convergence = completer_inputs(
        D, mask, dim, rng, max_iter, tol, progress, on_convergence, owner=OWNER)
    n_points = values.shape[0]
    n_lambdas = check_int(n_lambdas, owner=OWNER, name="n_lambdas", min_value=1)
    min_ratio = check_float(min_ratio, owner=OWNER, name="min_ratio", min_value=0.0,
                            max_value=1.0, min_inclusive=False)
    if max_rank is not None:
        max_rank = check_int(max_rank, owner=OWNER, name="max_rank", min_value=1,
                             max_value=n_points)
    if shrinkage is not None:
        shrinkage = check_float(shrinkage, owner=OWNER, name="shrinkage", min_value=0.0)
    observed = known | np.eye(n_points, dtype=bool)
    M = np.where(observed, values, 0.0)
    with blas_threads(n_points):
        if shrinkage is None:
            top = float(np.abs(leading_eigenpairs(_centred(M) if center else M, 1, rng)[0][0]))
            path = top * np.geomspace(1.0, min_ratio, n_lambdas)
        else:
            path = np.array([shrinkage])
        solver = _Solver(M, observed, max_rank, bool(center), rng, progress,
                         track=on_convergence is not None)
        estimate = best = np.zeros_like(M)
        kept: tuple[list[float], bool] = ([], False)
        for level in path:
            estimate, rank = solver.solve(estimate, float(level), max_iter, tol)
            if shrinkage is None and max_rank is not None and rank > max_rank:
                break
            best, kept = estimate, (solver.history, solver.stopped_early)
    if on_convergence is not None:
        on_convergence(judge(kept[0], budget=max_iter, stopped_early=kept[1], stationary=True))
    return finish_edm(np.where(observed, M, best))


class _Solver:
    """Soft-Impute iterations at one shrinkage level, with warm starts."""

    def __init__(self, M: np.ndarray, observed: np.ndarray, max_rank: int | None,
                 center: bool, rng: np.random.Generator, progress: Progress | None,
                 track: bool = False) -> None:
        self.M, self.observed, self.center = M, observed, center
        self.rng, self.progress, self.track = rng, progress, track
        self.history: list[float] = []  # the objective per iteration of the last level
        self.stopped_early = False  # whether the last level met tol before max_iter
        # One eigenpair beyond the cap tells whether the rank exceeds it.
        self.n_pairs = M.shape[0] if max_rank is None else min(max_rank + 1, M.shape[0])
        self.counter = 0

    def solve(self, estimate: np.ndarray, level: float, max_iter: int, tol: float
              ) -> tuple[np.ndarray, int]:
        """Iterate ``Z <- S_level(fill(M, estimate))`` to convergence; (estimate, rank)."""
        rank = 0
        self.history, self.stopped_early = [], False
        for _ in range(max_iter):
            self.counter += 1
            filled = np.where(self.observed, self.M, estimate)
            offsets = filled - _centred(filled) if self.center else 0.0
            eigenvalues, vectors = leading_eigenpairs(filled - offsets, self.n_pairs, self.rng)
            shrunk = np.sign(eigenvalues) * np.maximum(np.abs(eigenvalues) - level, 0.0)
            rank = int(np.count_nonzero(shrunk))
            updated = offsets + (vectors * shrunk) @ vectors.T
            change = float(np.sum((updated - estimate) ** 2))
            size = float(np.sum(estimate**2))
            estimate = updated
            if self.progress is not None or self.track:
                fit = 0.5 * float(np.sum((self.M - estimate)[self.observed] ** 2))
                objective = fit + level * float(np.abs(shrunk).sum())
                self.history.append(objective)
                if self.progress is not None:
                    self.progress(self.counter, objective)
            if change <= tol * max(size, 1e-300):
                self.stopped_early = True
                break
        return estimate, rank


def _centred(A: np.ndarray) -> np.ndarray:
    """``J A J``: A without its row and column effects (A symmetric)."""
    out = A - A.mean(axis=0, keepdims=True)
    return out - out.mean(axis=1, keepdims=True)
