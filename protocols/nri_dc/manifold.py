"""Riemannian BFGS on a product of fixed-rank matrix manifolds (RDP's optimiser).

Nosaka and Yoshise (arXiv:2403.02780), section 3.3.3, minimise the RDP
objective "over the Riemannian full-rank (fixed-rank) matrix manifold, defined
in [Vandereycken 2013] ... implemented in Manopt as ``fixedrankembeddedfactory``"
with "the Riemannian BFGS algorithm [Huang, Absil and Gallivan, SIAM J. Optim.
28(1), 2018], also available in Manopt". This module is that pair, with
points held as dense matrices rather than Manopt's ``(U, S, V)`` triplets (the
blocks are a few rows by a few columns):

* **Manifold**: the product over workers of ``M_i = {G_i in R^{m_i x n}:
  rank G_i = k}`` (:class:`FixedRankProduct`; RDP has ``n = k = m_hat <=
  m_i``). The paper does not say how it combined the workers' factors; we take
  the product manifold (Manopt's ``productmanifold``: all ``G_i`` optimised
  jointly, the metric the sum of the factors').
* **Metric**: the embedded one, ``<A, B> = sum_i tr(A_i^T B_i)`` (Manopt's
  fixed-rank embedded geometry is a Riemannian submanifold of ``R^{m x n}``
  with the Frobenius inner product; the paper names no other).
* **Tangent space and Riemannian gradient**: ``P_X(Z) = Z - U_perp U_perp^T
  Z V_perp V_perp^T`` (Vandereycken's projection, written through the normal
  space: ``U_perp``, ``V_perp`` complete the singular vectors of ``X``); the
  Riemannian gradient is ``P_X`` of the Euclidean gradient
  (:func:`riemannian_gradient`, Manopt's ``egrad2rgrad``).
* **Retraction**: the metric projection of ``X + xi`` onto rank ``k``
  (truncated SVD; second order, Absil and Malick 2012; Manopt's ``retr``).
* **Vector transport**: projection onto the new tangent space (Absil, Mahony
  and Sepulchre 2008, section 8.1.3; Manopt's ``transp``).
* **Optimiser**: :func:`rbfgs`, ``rlbfgs`` as Manopt 7.1 ships it (the paper
  gives no version; 7.1, of September 2022, was the current release until
  July 2024, after the paper): limited-memory BFGS
  two-loop recursion in the current tangent space (memory 30, every stored
  pair transported at each step, each pair scaled to a unit step), initial
  operator ``I / ||grad f(x_0)||`` then the Barzilai-Borwein scaling
  ``<s, y> / <y, y>``, the *cautious* update of Huang et al. (a pair
  ``(s, y)`` is stored only if ``<s, y> / <s, s> >= 1e-4 ||grad f(x_k)||``,
  which keeps the operator positive definite without Wolfe's curvature
  condition; the step is taken either way), and Manopt's Armijo
  backtracking from step 1 (``linesearch_hint``: halve up to 25 times,
  sufficient decrease 1e-4, reject the step if nothing decreases). It stops
  on the gradient norm (Manopt's ``tolgradnorm``, 1e-6), on a relative
  objective change ``(f_k - f_{k+1}) <= tol max(|f_k|, |f_{k+1}|, 1)`` (not
  in Manopt, the rule SciPy's L-BFGS-B applies, so both optimisers stop
  alike), at ``max_iterations``, or when a step is shorter than 1e-10 twice
  in a row (the first time the memory is erased, as Manopt does).

At RDP's full rank (``k = n <= m_i``) ``V_perp`` is empty: the manifold is an
open subset of ``R^{m_i x n}``, the projection and the transport are the
identity and the retraction is ``X + xi``; the geometry is Euclidean and what
is Riemannian BFGS in the paper is Manopt's quasi-Newton method on the entries.
It differs from SciPy's L-BFGS-B by its line search (Armijo backtracking
against Moré-Thuente's Wolfe search), its memory (30 against 10) and the
cautious update. A step that leaves the manifold (a rank-deficient ``X + xi``)
is outside the retraction's domain; the RDP objective is infinite there and
the line search backtracks. The general rank ``k < min(m, n)`` is implemented
(and tested) so the geometry is the paper's and not only its special case.
RDP is not convex, and the two optimisers can settle in different local minima
from the same start (on Pima-like problems, from 5 to 10% of the starts, either
one ending lower, by up to a few per cent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from fedsec.errors import ValidationError

#: A cost: its value and its Euclidean gradient at a point (inf off the manifold).
CostAndGradient = Callable[[np.ndarray], tuple[float, np.ndarray]]
#: Per block, the normal-space factors ``(U_perp, V_perp)`` of a point.
Normals = tuple[tuple[np.ndarray, np.ndarray], ...]


@dataclass(frozen=True)
class FixedRankProduct:
    """The product over blocks of ``{X_i in R^{m_i x n_columns}: rank X_i = rank}``.

    A point is the blocks stacked vertically, block ``i`` in rows ``spans[i]``.

    Examples
    --------
    >>> manifold = FixedRankProduct(spans=((0, 3), (3, 5)), n_columns=2, rank=2)
    >>> manifold.dimension
    10
    """

    spans: tuple[tuple[int, int], ...]
    n_columns: int
    rank: int

    def __post_init__(self) -> None:
        smallest = min([self.n_columns] + [b - a for a, b in self.spans])
        if not self.spans or not 1 <= self.rank <= smallest:
            raise ValidationError(
                f"A fixed-rank manifold needs blocks and a rank in [1, {smallest}] (the smallest "
                f"block dimension). Got rank {self.rank} and spans {self.spans} instead.")

    @property
    def dimension(self) -> int:
        """``sum_i (m_i + n - k) k``."""
        return sum((b - a + self.n_columns - self.rank) * self.rank for a, b in self.spans)


def normal_factors(X: np.ndarray, manifold: FixedRankProduct) -> Normals:
    """Per block, ``U_perp`` and ``V_perp``: the singular vectors beyond the ``rank`` first.

    When ``rank`` equals a block's smaller side one factor is empty and no SVD is needed.
    """
    factors = []
    for a, b in manifold.spans:
        rows, k = b - a, manifold.rank
        if k == min(rows, manifold.n_columns):
            factors.append((np.zeros((rows, rows - k)),
                            np.zeros((manifold.n_columns, manifold.n_columns - k))))
            continue
        U, _, Vt = np.linalg.svd(X[a:b], full_matrices=True)
        factors.append((U[:, k:], Vt[k:].T))
    return tuple(factors)


def project(normals: Normals, Z: np.ndarray, spans: tuple[tuple[int, int], ...]) -> np.ndarray:
    """``P_X(Z)``, block by block: ``Z_i - U_perp U_perp^T Z_i V_perp V_perp^T``.

    ``Z`` may carry leading batch axes (``(..., rows, n)``): a stack of vectors at once.
    """
    out = np.array(Z, dtype=np.float64, copy=True)
    for (a, b), (U_perp, V_perp) in zip(spans, normals, strict=True):
        if U_perp.shape[1] and V_perp.shape[1]:
            out[..., a:b, :] -= U_perp @ (U_perp.T @ out[..., a:b, :] @ V_perp) @ V_perp.T
    return out


def riemannian_gradient(X: np.ndarray, euclidean: np.ndarray,
                        manifold: FixedRankProduct) -> np.ndarray:
    """The Riemannian gradient under the embedded metric: ``P_X(euclidean gradient)``."""
    return project(normal_factors(X, manifold), euclidean, manifold.spans)


def retract(X: np.ndarray, xi: np.ndarray, manifold: FixedRankProduct) -> np.ndarray:
    """``R_X(xi)``: each block of ``X + xi`` truncated to rank ``rank`` (metric projection).

    At a block's full rank the truncation changes nothing and is skipped. The
    result is on the manifold whenever ``X + xi`` keeps ``rank`` non-zero
    singular values per block, so for every small enough ``xi`` (check with
    :func:`on_manifold`).

    Examples
    --------
    >>> manifold = FixedRankProduct(spans=((0, 2),), n_columns=2, rank=1)
    >>> retract(np.diag([1.0, 0.0]), np.array([[0.0, 0.0], [0.0, 0.1]]), manifold)
    array([[1., 0.],
           [0., 0.]])
    """
    Y = np.asarray(X, dtype=np.float64) + xi
    for a, b in manifold.spans:
        if manifold.rank < min(b - a, manifold.n_columns):
            U, s, Vt = np.linalg.svd(Y[a:b], full_matrices=False)
            k = manifold.rank
            Y[a:b] = (U[:, :k] * s[:k]) @ Vt[:k]
    return Y


def on_manifold(X: np.ndarray, manifold: FixedRankProduct, rtol: float = 1e-12) -> bool:
    """Whether every block has rank ``rank``: its ``rank``-th singular value above ``rtol``
    times its largest (and nothing beyond, up to the same tolerance)."""
    for a, b in manifold.spans:
        s = np.linalg.svd(X[a:b], compute_uv=False)
        k = manifold.rank
        if s[0] == 0 or s[k - 1] <= rtol * s[0] or (s.size > k and s[k] > 1e3 * rtol * s[0]):
            return False
    return True


def inner(A: np.ndarray, B: np.ndarray) -> float:
    """The embedded metric ``sum_i tr(A_i^T B_i)``."""
    return float(np.vdot(A, B))


@dataclass(frozen=True)
class OptimizerResult:
    """What :func:`rbfgs` (or :func:`lbfgs_b`) found and how it stopped.

    Attributes
    ----------
    point : numpy.ndarray
        The last iterate (never worse than the start: rejected steps do not move).
    value : float
        The cost there.
    iterations : int
        Steps taken (accepted or rejected), Manopt's ``iter``.
    converged : bool
        Whether it stopped on the gradient norm or the relative objective change.
    reason : str
        ``gradient``, ``objective``, ``max_iterations`` or ``step`` (twice too short).
    history : tuple of float
        The cost at the start and after each iteration (never increasing).
    gradient_norms : tuple of float
        The Riemannian gradient's norm at the same points.
    evaluations : int
        Calls of the cost.
    """

    point: np.ndarray
    value: float
    iterations: int
    converged: bool
    reason: str
    history: tuple[float, ...]
    gradient_norms: tuple[float, ...]
    evaluations: int


def _direction(gradient: np.ndarray, steps: list[np.ndarray], changes: list[np.ndarray],
               rhos: list[float], scale: float) -> np.ndarray:
    """``-H grad``: the L-BFGS two-loop recursion, every pair in the current tangent space."""
    q = gradient.copy()
    coefficients = []
    for s, y, rho in zip(reversed(steps), reversed(changes), reversed(rhos), strict=True):
        coefficient = rho * inner(s, q)
        q -= coefficient * y
        coefficients.append(coefficient)
    r = scale * q
    for s, y, rho, coefficient in zip(steps, changes, rhos, reversed(coefficients),
                                      strict=True):
        r += (coefficient - rho * inner(y, r)) * s
    return -r


def armijo(cost: CostAndGradient, X: np.ndarray, direction: np.ndarray, value: float,
           slope: float, manifold: FixedRankProduct, *, sufficient_decrease: float = 1e-4,
           contraction: float = 0.5, max_evaluations: int = 25,
           ) -> tuple[float, np.ndarray, float, np.ndarray, int]:
    """Manopt's ``linesearch_hint``: backtrack from ``alpha = 1`` until Armijo holds.

    Returns ``(alpha, point, value, euclidean gradient, evaluations)``; ``alpha``
    is 0 (and the point ``X``) when no trial decreased the cost. A trial off the
    manifold, or with a cost that is not finite, fails the test.
    """
    alpha, evaluations = 1.0, 0
    while True:
        trial = retract(X, alpha * direction, manifold)
        trial_value, trial_gradient = cost(trial)
        evaluations += 1
        if not np.isfinite(trial_value):
            trial_value = np.inf
        if (trial_value <= value + sufficient_decrease * alpha * slope
                or evaluations >= max_evaluations):
            break
        alpha *= contraction
    if not trial_value < value:
        return 0.0, X, value, np.zeros_like(X), evaluations
    return alpha, trial, float(trial_value), trial_gradient, evaluations


def rbfgs(cost: CostAndGradient, start: np.ndarray, manifold: FixedRankProduct, *,
          memory: int = 30, max_iterations: int = 1000, gradient_tol: float = 1e-6,
          tol: float = 0.0, min_step: float = 1e-10, cautious: float = 1e-4) -> OptimizerResult:
    """Minimise ``cost`` over ``manifold`` from ``start`` by cautious Riemannian L-BFGS.

    Manopt's ``rlbfgs`` (Huang, Absil and Gallivan 2018) with the geometry of this
    module; see its docstring for every rule. ``cost`` returns the value and the
    *Euclidean* gradient; ``tol`` is the relative objective change that counts
    as converged (0: never); ``cautious`` is the slope of Manopt's
    ``strict_inc_func`` (a pair is stored if ``<s, y> / <s, s> >= cautious ||grad f||``).

    Examples
    --------
    >>> manifold = FixedRankProduct(spans=((0, 2),), n_columns=2, rank=2)
    >>> target = np.array([[2.0, 1.0], [0.0, 3.0]])
    >>> found = rbfgs(lambda X: (float(np.sum((X - target) ** 2)), 2 * (X - target)),
    ...               np.eye(2), manifold)
    >>> found.converged, bool(np.allclose(found.point, target))
    (True, True)
    """
    X = np.array(start, dtype=np.float64, copy=True)
    value, euclidean = cost(X)
    if not np.isfinite(value) or not on_manifold(X, manifold):
        raise ValidationError("Riemannian BFGS must start on the manifold, at a finite cost.")
    gradient = riemannian_gradient(X, euclidean, manifold)
    history, norms = [float(value)], [float(np.sqrt(inner(gradient, gradient)))]
    steps: list[np.ndarray] = []
    changes: list[np.ndarray] = []
    rhos: list[float] = []
    scale = 1.0 / norms[0] if norms[0] > 0 else 1.0  # ls_initial_scale: a first step of length 1
    last_step, ultimatum, evaluations, iterations = np.inf, False, 1, 0
    reason = ""
    while not reason:
        if norms[-1] <= gradient_tol:
            reason = "gradient"
            break
        if iterations >= max_iterations:
            reason = "max_iterations"
            break
        if last_step < min_step:
            if ultimatum:
                reason = "step"
                break
            steps, changes, rhos, ultimatum = [], [], [], True  # restart as steepest descent
        else:
            ultimatum = False
        direction = _direction(gradient, steps, changes, rhos, scale)
        slope = inner(gradient, direction)
        alpha, new, new_value, new_euclidean, used = armijo(cost, X, direction, value, slope,
                                                            manifold)
        evaluations += used
        iterations += 1
        last_step = alpha * float(np.sqrt(inner(direction, direction)))
        if alpha == 0.0:  # rejected: stay, keep the memory (Manopt: s = 0 is not stored)
            history.append(value)
            norms.append(norms[-1])
            continue
        new_normals = normal_factors(new, manifold)
        new_gradient = project(new_normals, new_euclidean, manifold.spans)
        s = project(new_normals, alpha * direction, manifold.spans)
        y = new_gradient - project(new_normals, gradient, manifold.spans)
        length = float(np.sqrt(inner(s, s)))
        s, y = s / length, y / length  # Manopt scales the pair to a unit step
        if steps:  # transport the memory to the new tangent space
            steps = list(project(new_normals, np.stack(steps), manifold.spans))
            changes = list(project(new_normals, np.stack(changes), manifold.spans))
        sy, ss = inner(s, y), inner(s, s)
        if ss > 0 and sy / ss >= cautious * norms[-1]:  # the cautious update
            if len(steps) >= memory:
                steps, changes, rhos = steps[1:], changes[1:], rhos[1:]
            if memory > 0:
                steps.append(s)
                changes.append(y)
                rhos.append(1.0 / sy)
            scale = sy / inner(y, y)
        change = value - new_value
        X, value, gradient = new, new_value, new_gradient
        history.append(value)
        norms.append(float(np.sqrt(inner(gradient, gradient))))
        if tol > 0 and change <= tol * max(abs(history[-2]), abs(value), 1.0):
            reason = "objective"
    return OptimizerResult(point=X, value=float(value), iterations=iterations,
                           converged=reason in ("gradient", "objective"), reason=reason,
                           history=tuple(history), gradient_norms=tuple(norms),
                           evaluations=evaluations)


def lbfgs_b(cost: CostAndGradient, start: np.ndarray, manifold: FixedRankProduct, *,
            max_iterations: int = 1000, tol: float = 0.0) -> OptimizerResult:
    """For comparison: SciPy's L-BFGS-B on the ambient entries (``ftol = tol``, ``gtol`` 1e-8).

    Valid only where the manifold is open in the ambient space (full rank,
    ``rank == n_columns``), with ``cost`` infinite off it. ``history`` and
    ``gradient_norms`` hold the start and the end; if L-BFGS-B ends worse than
    it started (its line search can fail on the infinite barrier) the start is kept.
    """
    if manifold.rank != manifold.n_columns:
        raise ValidationError("L-BFGS-B works on the entries: only on a full-rank manifold.")
    shape = np.shape(start)

    def flat(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = cost(x.reshape(shape))
        return value, gradient.ravel()

    first, gradient = cost(np.asarray(start, dtype=np.float64))
    result = scipy.optimize.minimize(flat, np.ravel(start), jac=True, method="L-BFGS-B",
                                     options={"maxiter": max_iterations, "ftol": tol,
                                              "gtol": 1e-8})
    value, point = float(result.fun), result.x.reshape(shape)
    end_gradient = result.jac
    if not np.isfinite(value) or value > first:
        value, point, end_gradient = first, np.asarray(start, dtype=np.float64), gradient
    return OptimizerResult(point=point, value=value, iterations=int(result.nit),
                           converged=bool(result.success), reason=str(result.message),
                           history=(float(first), value),
                           gradient_norms=(float(np.linalg.norm(gradient)),
                                           float(np.linalg.norm(end_gradient))),
                           evaluations=int(result.nfev))
