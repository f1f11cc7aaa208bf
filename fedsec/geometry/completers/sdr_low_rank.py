"""The equality-constrained SDR of EDM completion, solved in low-rank factored form.

Implements

- A. Y. Alfakih, A. Khandani, H. Wolkowicz, "Solving Euclidean Distance
  Matrix Completion Problems via Semidefinite Programming", Computational
  Optimization and Applications 12:13-30, 1999: the relaxation
  ``min trace(G)  s.t.  G_ii + G_jj - 2 G_ij = D_ij on the known pairs,
  G PSD`` (the known distances imposed, not fitted);
- S. Burer, R. D. C. Monteiro, "A Nonlinear Programming Algorithm for Solving
  Semidefinite Programs via Low-Rank Factorization", Mathematical Programming
  95:329-357, 2003 (SDPLR): ``G = Y Y^T`` with ``Y`` of a few columns, the
  constraints handled by an augmented Lagrangian whose inner problems are
  smooth and unconstrained (solved here by L-BFGS, each warm-started from the
  last).

``Y`` has ``dim`` columns, the rank the answer is rounded to anyway, so the
program solved is the relaxation restricted to rank-``dim`` Gram matrices: a
nonconvex problem, solved locally from the shortest-path MDS start (the
warm start of :func:`~fedsec.geometry.completers.alternating_descent.alternating_descent`).
When the known distances fix the completion (landmarks affinely spanning the
space, the attack's usual case) the relaxation has one feasible point and
both forms find it; the tests and ``tests/benchmarks/bench_sdr.py`` check the
answer against the convex solve of
:func:`~fedsec.geometry.completers.sdr.semidefinite_relaxation` with SCS.
When they do not (fewer landmarks than dimensions), the dual certificate of
M. Journee, F. Bach, P.-A. Absil, R. Sepulchre ("Low-Rank Optimization on the
Cone of Positive Semidefinite Matrices", SIAM J. Optim. 20(5), 2010),
``S = I / N - sum_k lambda_k A_k`` PSD, proves the factored answer optimal
for the convex program (:func:`smallest_dual_eigenpair`; checked in the
tests); that optimum differs from the misfit form's, which trades the known
distances against the trace and recovers more there (FedCG's Figure 8 on
Ionosphere, m = 20: relative ``D_X`` errors 0.15/0.41/0.37 for P/U/N
landmarks against SCS's 0.07/0.30/0.26), which is why SCS stays the default up to
``AUTO_LIMIT`` points (:func:`~fedsec.geometry.completers.sdr.choose_solver`).
Adding columns along the dual's most negative eigenvector (their
rank-incremental scheme) was tried and left out: on
determined instances the dual optimum is not attained, so the certificate
fails on the optimum itself, and at 1,000 points each escape cost 25-35 times
the solve without lowering the trace.

Each function value costs ``O(K dim)`` for K known pairs; no N x N matrix is
formed but the start's shortest paths and the answer (measured with
``tests/benchmarks/bench_sdr.py``: 1,000 points, 50 landmarks, d = 3 in
1.0-1.2 s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.csgraph import shortest_path
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

# Augmented-Lagrangian schedule: start penalty, growth factor, largest penalty, and the
# factor by which the residual must fall in one outer iteration to keep the penalty.
PENALTY_START = 10.0
PENALTY_GROWTH = 5.0
PENALTY_MAX = 1e8
DECREASE = 0.25
INNER_ITER = 2000  # L-BFGS iterations at most per augmented-Lagrangian subproblem
STATIONARY = 1e-6  # converged: feasible and trace(G) changed by at most this fraction


class LowRankSolution(NamedTuple):
    """A factor ``Y`` (``G = Y Y^T`` on the scaled data) and how the solve ended."""

    factor: np.ndarray
    multipliers: np.ndarray
    """The augmented Lagrangian's estimate of the constraints' multipliers."""
    residual: float
    """Root-mean-square constraint residual at the end."""
    iterations: int
    """Augmented-Lagrangian (outer) iterations run."""
    status: str
    """"converged" (residual <= tol), "stalled" (the residual stopped falling at the
    largest penalty: the distances fit no rank-``dim`` Gram matrix) or "max_iter"."""
    history: tuple[float, ...] = ()
    """The root-mean-square constraint residual after each outer iteration."""


def incidence(rows: np.ndarray, cols: np.ndarray, n_points: int) -> sp.csr_matrix:
    """Sparse K x N map from points to pair differences: ``(B Y)_k = y_i - y_j``."""
    count = rows.size
    return sp.csr_matrix((np.tile([1.0, -1.0], count),
                          (np.repeat(np.arange(count), 2), np.stack([rows, cols], 1).ravel())),
                         shape=(count, n_points))


def constraint_residual(Y: np.ndarray, B: sp.csr_matrix, target: np.ndarray) -> np.ndarray:
    """``|y_i - y_j|^2 - target_k`` for every known pair k = (i, j)."""
    diff = B @ Y
    return np.einsum("ij,ij->i", diff, diff) - target


def augmented_lagrangian(Y: np.ndarray, B: sp.csr_matrix, BT: sp.csr_matrix,
                         target: np.ndarray, multipliers: np.ndarray, penalty: float
                         ) -> tuple[float, np.ndarray]:
    """Value and gradient of ``trace(Y Y^T) / N - lambda^T r + penalty / 2 |r|^2``.

    ``r`` is :func:`constraint_residual`; the gradient of the pair terms is
    ``B^T (2 (penalty r - lambda) * (B Y))``.
    """
    n_points = Y.shape[0]
    diff = B @ Y
    residual = np.einsum("ij,ij->i", diff, diff) - target
    weight = penalty * residual - multipliers
    value = (float(np.sum(Y * Y)) / n_points - float(multipliers @ residual)
             + 0.5 * penalty * float(residual @ residual))
    gradient = 2.0 * Y / n_points + BT @ (2.0 * weight[:, None] * diff)
    return value, gradient


def shortest_path_mds(rows: np.ndarray, cols: np.ndarray, target: np.ndarray, n_points: int,
                      dim: int, rng: np.random.Generator) -> np.ndarray:
    """The warm start: classical MDS of the known distances completed by shortest paths.

    As :func:`~fedsec.geometry.completers.descent_starts.shortest_path_start`
    (unreachable pairs get twice the longest path), with the ``dim`` leading
    eigenpairs from Lanczos (``eigsh``, started from an ``rng`` vector) instead
    of a full eigendecomposition.
    """
    lengths = np.sqrt(np.maximum(target, 0.0))
    floor = 1e-12 * max(float(lengths.max()), 1e-300)
    graph = sp.csr_matrix((np.maximum(lengths, floor), (rows, cols)), shape=(n_points, n_points))
    paths = shortest_path(graph, method="D", directed=False)
    finite = np.isfinite(paths)
    paths[~finite] = 2.0 * paths[finite].max()
    squared = paths**2
    gram = -0.5 * (squared - squared.mean(axis=0) - squared.mean(axis=1)[:, None]
                   + squared.mean())
    if n_points > 4 * dim + 20:
        try:
            values, vectors = eigsh(gram, k=dim, which="LA",
                                    v0=rng.uniform(-1.0, 1.0, n_points))
        except ArpackNoConvergence:  # pragma: no cover - dense fallback below
            values, vectors = np.linalg.eigh(gram)
    else:
        values, vectors = np.linalg.eigh(gram)
    order = np.argsort(-values, kind="stable")[:dim]
    return vectors[:, order] * np.sqrt(np.maximum(values[order], 0.0))


def solve_low_rank(rows: np.ndarray, cols: np.ndarray, target: np.ndarray, start: np.ndarray,
                   *, max_iter: int, tol: float,
                   progress: Callable[[int, float], None] | None = None) -> LowRankSolution:
    """``min trace(Y Y^T) / N`` subject to ``|y_i - y_j|^2 = target`` on the pairs.

    Runs the augmented Lagrangian from ``start`` until the constraints hold
    to ``tol`` and the trace is stationary. The multipliers it returns give
    the dual certificate (:func:`smallest_dual_eigenpair`).

    Parameters
    ----------
    rows, cols : numpy.ndarray of int
        The known pairs (i < j).
    target : numpy.ndarray
        Their squared distances, scaled to unit mean.
    start : numpy.ndarray, shape (N, p)
        The first factor; its column count is the rank of the solution.
    max_iter : int
        Augmented-Lagrangian (outer) iterations at most.
    tol : float
        Stop once the root-mean-square residual is at most ``tol``.
    progress : callable, optional
        Called after every outer iteration with (iteration, trace(G) / N).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> points = rng.random((6, 2))
    >>> rows, cols = np.triu_indices(6, 1)
    >>> target = np.sum((points[rows] - points[cols]) ** 2, axis=1)
    >>> solution = solve_low_rank(rows, cols, target, rng.random((6, 2)), max_iter=50,
    ...                           tol=1e-10)
    >>> solution.status, bool(solution.residual <= 1e-10)
    ('converged', True)
    """
    n_points = start.shape[0]
    B = incidence(rows, cols, n_points)
    BT = B.T.tocsr()
    state = _State(np.array(start, dtype=float), np.zeros(rows.size), PENALTY_START, np.inf,
                   np.inf, np.inf)
    history: list[float] = []
    for iteration in range(1, max_iter + 1):
        state = _outer_step(state, B, BT, target, tol)
        history.append(state.residual)
        if progress is not None:
            progress(iteration, state.trace)
        if (state.residual <= tol
                and abs(state.trace - state.last_trace) <= STATIONARY * state.trace):
            return LowRankSolution(state.factor, state.multipliers, state.residual, iteration,
                                   "converged", tuple(history))
        if state.penalty >= PENALTY_MAX and state.residual > (1.0 - DECREASE) * state.previous:
            return LowRankSolution(state.factor, state.multipliers, state.residual, iteration,
                                   "stalled", tuple(history))
        penalty = state.penalty
        if state.residual > DECREASE * state.previous:
            penalty = min(penalty * PENALTY_GROWTH, PENALTY_MAX)
        state = state._replace(penalty=penalty, previous=state.residual)
    return LowRankSolution(state.factor, state.multipliers, state.residual, max_iter,
                           "max_iter", tuple(history))


class _State(NamedTuple):
    factor: np.ndarray
    multipliers: np.ndarray
    penalty: float
    previous: float  # residual of the iteration before
    residual: float
    trace: float
    last_trace: float = np.inf


def _outer_step(state: _State, B: sp.csr_matrix, BT: sp.csr_matrix, target: np.ndarray,
                tol: float) -> _State:
    """One augmented-Lagrangian iteration: L-BFGS on the subproblem, then the multipliers."""
    shape = state.factor.shape

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = augmented_lagrangian(flat.reshape(shape), B, BT, target,
                                               state.multipliers, state.penalty)
        return value, gradient.ravel()

    result = minimize(objective, state.factor.ravel(), jac=True, method="L-BFGS-B",
                      options={"maxiter": INNER_ITER, "gtol": 1e-2 * tol, "ftol": 1e-16,
                               "maxcor": 20})
    Y = result.x.reshape(shape)
    residual = constraint_residual(Y, B, target)
    return state._replace(
        factor=Y, multipliers=state.multipliers - state.penalty * residual,
        residual=float(np.sqrt(residual @ residual / residual.size)),
        trace=float(np.sum(Y * Y)) / shape[0], last_trace=state.trace)


def smallest_dual_eigenpair(B: sp.csr_matrix, multipliers: np.ndarray,
                            rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """The most negative eigenpair of the dual matrix ``S = I / N - B^T diag(lambda) B``.

    ``S`` is PSD at an optimum of the relaxation (with ``S Y = 0``); found by
    Lanczos (``eigsh``, started from an ``rng`` vector) as the largest
    eigenvalue of ``c I - S`` with ``c`` a Gershgorin bound.
    """
    n_points = B.shape[1]
    S = (sp.identity(n_points, format="csr") / n_points
         - weighted_laplacian(B, multipliers)).tocsr()
    shift = float(np.max(np.asarray(abs(S).sum(axis=1)).ravel()))
    shifted = (shift * sp.identity(n_points, format="csr") - S).tocsr()
    try:
        values, vectors = eigsh(shifted, k=1, which="LA", v0=rng.uniform(-1.0, 1.0, n_points),
                                tol=1e-8)
        return shift - float(values[0]), vectors[:, 0]
    except ArpackNoConvergence:  # pragma: no cover - dense fallback
        dense_values, dense_vectors = np.linalg.eigh(S.toarray())
        return float(dense_values[0]), dense_vectors[:, 0]


def weighted_laplacian(B: sp.csr_matrix, weights: np.ndarray) -> sp.csr_matrix:
    """The weighted Laplacian ``B^T diag(weights) B`` of the known pairs."""
    return (B.T @ sp.diags(weights) @ B).tocsr()
