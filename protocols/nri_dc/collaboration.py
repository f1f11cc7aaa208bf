"""Collaboration functions of data collaboration analysis: LS, GEP, OPP, GOPP and RDP.

Nosaka and Yoshise, "Data Collaboration Analysis Over Matrix Manifolds"
(arXiv:2403.02780), section 3. Every worker ``i`` shares the anchor's
intermediate representation ``A_i = X_anc F_i`` (``r x m_i``); the master
looks for maps ``G_i`` (``m_i x m_hat``) with ``A_i G_i ≈ A_j G_j`` for
every pair, without distorting the structure of ``A_i``:

* **LS** (Imakura and Sakurai 2020): target ``Z`` = the first ``m_hat`` left
  singular vectors of ``[A_1 .. A_c]``, ``G_i = pinv(A_i) Z``;
* **GEP** (Kawakami 2022): minimise ``sum_{i<j} ||A_i g_i - A_j g_j||^2``
  column by column under ``sum_i ||A_i g_i||^2 = 1``; the stationary points
  solve ``A^T A g = mu D g`` with ``A = [A_1 .. A_c]`` and
  ``D = blockdiag(A_i^T A_i)`` and the best ``m_hat`` are the largest ``mu``;
* **OPP** (the paper's proposal): the same target ``Z``, ``G_i`` orthogonal:
  ``G_i = U V^T`` from the SVD ``A_i^T Z = U S V^T`` (Schönemann 1966);
* **GOPP**: ``Z`` free too; alternate the Procrustes step and ``Z`` = the mean
  of the ``A_i G_i`` until ``Z`` settles;
* **RDP**: relax orthogonality into a penalty on rank deficiency,
  ``sum_{i<j} ||A_i G_i - A_j G_j||^2 + weight sum_i p(log det(G_i^T G_i))``,
  minimised by Riemannian BFGS over full-rank matrices (:mod:`.manifold`).

The paper's equation for the RDP penalty is not in our copy of the text; its
description ("exponential penalties when the Gram determinant decreases from 1
towards 0, logarithmic penalties as it increases away from 1", built on the
log-determinant) is met by ``p(l) = exp(-l) + l``, which is smallest (1) at
``det = 1`` (every orthogonal ``G_i``) and is what this module uses.

Nothing here knows about parties: these are pure functions on arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache, wraps
from itertools import pairwise
from typing import Any, TypeVar

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

from fedsec.errors import ValidationError
from fedsec.protocols.nri_dc import manifold

METHODS = ("ls", "gep", "opp", "gopp", "rdp")
#: RDP's optimisers: the paper's Riemannian BFGS (:mod:`.manifold`) and SciPy's L-BFGS-B.
OPTIMIZERS = ("rbfgs", "lbfgs")
T = TypeVar("T", bound=Callable[..., Any])


@cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_blas_thread() -> AbstractContextManager[Any]:
    """A context with one BLAS thread (restored on exit).

    Data collaboration works on small dense problems (a few thousand rows,
    tens of columns; quasi-Newton steps on vectors of a few hundred entries):
    BLAS threads only synchronise, and on a busy machine they contend for the
    cores, which made RDP and the logistic regressions 10-100x slower in our
    measurements. scikit-learn limits its threads the same way (``threadpoolctl``).
    """
    return _controller().limit(limits=1, user_api="blas")


def one_blas_thread(function: T) -> T:
    """Decorate ``function`` to run inside :func:`single_blas_thread`."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with single_blas_thread():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class Collaboration:
    """Collaboration functions ``G_i`` and how they were found.

    Attributes
    ----------
    functions : tuple of numpy.ndarray
        One ``m_i x m_hat`` matrix per worker, in the order of the anchors.
    iterations : int
        Iterations of the iterative methods (0 for the closed forms).
    history : tuple of float
        The method's objective, first to last (empty for the closed forms).
    converged : bool
        Whether the iterative method met its stopping rule before its iteration limit
        (true for the closed forms).
    """

    functions: tuple[np.ndarray, ...]
    iterations: int = 0
    history: tuple[float, ...] = ()
    converged: bool = True


def _check(anchors: Sequence[np.ndarray], n_dims: int) -> list[np.ndarray]:
    blocks = [np.asarray(A, dtype=np.float64) for A in anchors]
    if not blocks:
        raise ValidationError("Collaboration functions need at least one anchor representation.")
    rows = {A.shape[0] for A in blocks}
    if len(rows) != 1 or any(A.ndim != 2 for A in blocks):
        raise ValidationError(
            "Every anchor representation must be a matrix over the same anchor rows; got shapes "
            f"{[A.shape for A in blocks]}."
        )
    smallest = min(A.shape[1] for A in blocks)
    if not 1 <= n_dims <= smallest:
        raise ValidationError(
            f"The collaborative dimension must be in [1, {smallest}] (the smallest intermediate "
            f"dimension). Got {n_dims} instead."
        )
    return blocks


def _spans(anchors: Sequence[np.ndarray]) -> list[tuple[int, int]]:
    """Row ranges of each worker's block in the stacked ``G``."""
    return list(pairwise(np.cumsum([0] + [int(np.shape(A)[1]) for A in anchors]).tolist()))


def target_basis(anchors: Sequence[np.ndarray], n_dims: int) -> np.ndarray:
    """``Z``: the first ``n_dims`` left singular vectors of ``[A_1 .. A_c]``.

    Computed from the small Gram matrix ``[A_1..A_c]^T [A_1..A_c]`` (its
    eigenvectors are the right singular vectors), which is much cheaper than
    an SVD of the tall stacked matrix and as accurate for the leading vectors.

    Examples
    --------
    >>> A = np.diag([3.0, 2.0, 1.0])[:, :2]
    >>> Z = target_basis([A, A], 2)
    >>> np.allclose(np.abs(Z), np.eye(3)[:, :2])
    True
    """
    blocks = _check(anchors, n_dims)
    stacked = np.hstack(blocks)
    values, vectors = np.linalg.eigh(stacked.T @ stacked)
    top = np.argsort(values)[::-1][:n_dims]
    Z = stacked @ vectors[:, top]
    Z /= np.linalg.norm(Z, axis=0)
    return Z


def procrustes(A: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """The ``G`` with orthonormal columns that minimises ``||A G - Z||_F``: ``U V^T``.

    Examples
    --------
    >>> R = np.array([[0.0, -1.0], [1.0, 0.0]])
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    >>> np.allclose(procrustes(A, A @ R), R)
    True
    """
    U, _, Vt = np.linalg.svd(np.asarray(A).T @ np.asarray(Z), full_matrices=False)
    return U @ Vt


@one_blas_thread
def least_squares(anchors: Sequence[np.ndarray], n_dims: int) -> Collaboration:
    """LS: ``G_i = pinv(A_i) Z`` with ``Z`` from :func:`target_basis`."""
    blocks = _check(anchors, n_dims)
    Z = target_basis(blocks, n_dims)
    return Collaboration(tuple(np.linalg.lstsq(A, Z, rcond=None)[0] for A in blocks))


@one_blas_thread
def orthogonal_procrustes(anchors: Sequence[np.ndarray], n_dims: int) -> Collaboration:
    """OPP: ``G_i`` orthogonal, the Procrustes rotation of ``A_i`` onto ``Z``."""
    blocks = _check(anchors, n_dims)
    Z = target_basis(blocks, n_dims)
    return Collaboration(tuple(procrustes(A, Z) for A in blocks))


@one_blas_thread
def generalized_eigen(anchors: Sequence[np.ndarray], n_dims: int) -> Collaboration:
    """GEP: the top ``n_dims`` generalized eigenvectors of ``(A^T A, blockdiag(A_i^T A_i))``.

    Each column ``g`` (stacked over workers) is normalised to
    ``sum_i ||A_i g_i||^2 = 1``, the constraint that removes the trivial
    solution; then ``sum_{i<j} ||A_i g_i - A_j g_j||^2 = c - mu``.
    """
    blocks = _check(anchors, n_dims)
    stacked = np.hstack(blocks)
    gram = stacked.T @ stacked
    spans = _spans(blocks)
    diagonal = scipy.linalg.block_diag(*[gram[a:b, a:b] for a, b in spans])
    size = gram.shape[0]
    _, vectors = scipy.linalg.eigh(gram, diagonal, subset_by_index=[size - n_dims, size - 1])
    vectors = vectors[:, ::-1]
    return Collaboration(tuple(vectors[a:b] for a, b in spans))


@one_blas_thread
def generalized_procrustes(anchors: Sequence[np.ndarray], n_dims: int, *, tol: float = 1e-10,
                           max_iterations: int = 100) -> Collaboration:
    """GOPP: alternate minimisation of ``sum_i ||A_i G_i - Z||^2`` over orthogonal ``G_i``, ``Z``.

    Starts from the LS/OPP target; stops when ``||Z_new - Z|| <= tol ||Z_new||``.
    ``history`` holds the objective after each full iteration (it never increases).
    """
    blocks = _check(anchors, n_dims)
    Z = target_basis(blocks, n_dims)
    history: list[float] = []
    functions: tuple[np.ndarray, ...] = ()
    settled = False
    while not settled and len(history) < max_iterations:
        functions = tuple(procrustes(A, Z) for A in blocks)
        mapped = [A @ G for A, G in zip(blocks, functions, strict=True)]
        new = np.mean(mapped, axis=0)
        history.append(float(sum(np.sum((M - new) ** 2) for M in mapped)))
        settled = bool(np.linalg.norm(new - Z) <= tol * np.linalg.norm(new))
        Z = new
    return Collaboration(functions, len(history), tuple(history), settled)


def alignment_error(anchors: Sequence[np.ndarray], functions: Sequence[np.ndarray]) -> float:
    """``sum_{i<j} ||A_i G_i - A_j G_j||_F^2`` (computed as ``c sum ||M_i||^2 - ||sum M_i||^2``).

    Examples
    --------
    >>> A = [np.ones((3, 1)), np.zeros((3, 1))]
    >>> alignment_error(A, [np.eye(1), np.eye(1)])
    3.0
    """
    mapped = [np.asarray(A) @ np.asarray(G) for A, G in zip(anchors, functions, strict=True)]
    total = np.sum(mapped, axis=0)
    return float(len(mapped) * sum(np.sum(M**2) for M in mapped) - np.sum(total**2))


def alignment_operator(anchors: Sequence[np.ndarray]) -> np.ndarray:
    """``L = c blockdiag(A_i^T A_i) - A^T A``: the alignment error is ``tr(G^T L G)``.

    ``G`` stacks the ``G_i`` vertically (in the order of the anchors).
    """
    stacked = np.hstack([np.asarray(A, dtype=np.float64) for A in anchors])
    gram = stacked.T @ stacked
    operator = -gram
    for a, b in _spans(anchors):
        operator[a:b, a:b] += len(anchors) * gram[a:b, a:b]
    return operator


def rank_penalty(log_det: float) -> float:
    """``p(l) = exp(-l) + l``: 1 at ``det = 1``, exponential towards rank deficiency.

    Examples
    --------
    >>> rank_penalty(0.0)
    1.0
    """
    return float(np.exp(-log_det) + log_det)


def rdp_objective(anchors: Sequence[np.ndarray], functions: Sequence[np.ndarray], *,
                  weight: float) -> float:
    """The RDP objective: alignment error plus ``weight`` times the rank penalties."""
    penalty = 0.0
    for G in functions:
        sign, log_det = np.linalg.slogdet(np.asarray(G).T @ np.asarray(G))
        if sign <= 0:
            return float("inf")
        penalty += rank_penalty(float(log_det))
    return alignment_error(anchors, functions) + weight * penalty


def _rdp_value_and_gradient(G: np.ndarray, operator: np.ndarray, spans: list[tuple[int, int]],
                            weight: float) -> tuple[float, np.ndarray]:
    """RDP objective and gradient at the stacked ``G`` (inf and zero off the full-rank set).

    Blocks of equal height are handled as one batch (one ``slogdet``, one ``solve``).
    """
    LG = operator @ G
    value = float(np.sum(G * LG))
    grad = 2.0 * LG
    by_height: dict[int, list[tuple[int, int]]] = {}
    for a, b in spans:
        by_height.setdefault(b - a, []).append((a, b))
    for group in by_height.values():
        blocks = np.stack([G[a:b] for a, b in group])
        grams = np.einsum("kij,kil->kjl", blocks, blocks)
        signs, log_dets = np.linalg.slogdet(grams)
        if np.any(signs <= 0) or np.any(log_dets < -700.0):
            return float("inf"), np.zeros_like(G)
        value += weight * float(np.sum(np.exp(-log_dets) + log_dets))
        inverse_t = np.linalg.solve(grams, np.swapaxes(blocks, 1, 2))  # (G^T G)^{-1} G^T
        factors = weight * (1.0 - np.exp(-log_dets)) * 2.0
        steps = factors[:, None, None] * np.swapaxes(inverse_t, 1, 2)
        for (a, b), step in zip(group, steps, strict=True):
            grad[a:b] += step
    return value, grad


def rdp_gradient(anchors: Sequence[np.ndarray], functions: Sequence[np.ndarray], *,
                 weight: float) -> list[np.ndarray]:
    """The gradient of :func:`rdp_objective` with respect to each ``G_i``."""
    G = np.vstack([np.asarray(F, dtype=np.float64) for F in functions])
    _, grad = _rdp_value_and_gradient(G, alignment_operator(anchors), _spans(anchors), weight)
    return [grad[a:b] for a, b in _spans(anchors)]


@one_blas_thread
def rank_deficiency_penalty(anchors: Sequence[np.ndarray], n_dims: int, *, weight: float = 1.0,
                            init: str = "opp", optimizer: str = "rbfgs",
                            max_iterations: int = 500, tol: float = 1e-10) -> Collaboration:
    """RDP: minimise the rank-deficiency-penalised alignment error from LS or OPP.

    ``optimizer``: ``rbfgs``, the paper's Riemannian BFGS on the product of
    full-rank (fixed-rank ``m_hat``) ``m_i x m_hat`` matrix manifolds
    (:func:`.manifold.rbfgs`, Manopt's ``rlbfgs`` with its fixed-rank embedded
    geometry; ``history`` is the objective at every iteration), or ``lbfgs``,
    SciPy's L-BFGS-B on the stacked entries (``history``: start and end).
    Both use ``grad = 2 L G + weight (1 - exp(-l_i)) 2 G_i (G_i^T G_i)^{-1}``
    per block, ``L`` from :func:`alignment_operator`, and stop on the relative
    objective change ``tol``. The LS start is first brought to the data's size
    by :func:`common_scale` (the LS maps are about ``1/sqrt(r)`` too small,
    where the penalty is huge); the OPP start has scale 1.

    The penalty fixes only each ``G_i``'s volume. When the workers' principal
    subspaces share a direction (few workers: ``c`` subspaces of dimension
    ``m_i`` in ``R^m`` share ``sum m_i - (c - 1) m`` dimensions), aligning it
    costs nothing, so the optimum stretches it and shrinks the rest without
    bound; the iterations then stop at ``max_iterations`` with ill-conditioned
    ``G_i``. With 13 Pima workers (6 of 8 dimensions each) no direction is shared.
    """
    blocks = _check(anchors, n_dims)
    if init not in ("ls", "opp"):
        raise ValidationError(f"RDP starts from 'ls' or 'opp'. Got {init!r} instead.")
    if optimizer not in OPTIMIZERS:
        raise ValidationError(f"RDP's optimizer is one of {OPTIMIZERS}. Got {optimizer!r} instead.")
    start = (least_squares if init == "ls" else orthogonal_procrustes)(blocks, n_dims)
    scale = common_scale(blocks, start.functions)  # LS maps are ~1/sqrt(r) of unit size
    operator = alignment_operator(blocks)
    spans = _spans(blocks)

    def cost(G: np.ndarray) -> tuple[float, np.ndarray]:
        return _rdp_value_and_gradient(G, operator, spans, weight)

    G0 = scale * np.vstack(start.functions)
    geometry = manifold.FixedRankProduct(spans=tuple(spans), n_columns=n_dims, rank=n_dims)
    minimise = manifold.rbfgs if optimizer == "rbfgs" else manifold.lbfgs_b
    found = minimise(cost, G0, geometry, max_iterations=max_iterations, tol=tol)
    return Collaboration(tuple(found.point[a:b].copy() for a, b in spans), found.iterations,
                         found.history, found.converged)


@one_blas_thread
def collaboration_functions(method: str, anchors: Sequence[np.ndarray], n_dims: int, *,
                            rdp_weight: float = 1.0, rdp_init: str = "opp",
                            rdp_optimizer: str = "rbfgs", max_iterations: int = 500,
                            tol: float = 1e-10) -> Collaboration:
    """Dispatch on ``method`` (one of :data:`METHODS`)."""
    if method == "ls":
        return least_squares(anchors, n_dims)
    if method == "gep":
        return generalized_eigen(anchors, n_dims)
    if method == "opp":
        return orthogonal_procrustes(anchors, n_dims)
    if method == "gopp":
        return generalized_procrustes(anchors, n_dims, tol=tol, max_iterations=max_iterations)
    if method == "rdp":
        return rank_deficiency_penalty(anchors, n_dims, weight=rdp_weight, init=rdp_init,
                                       optimizer=rdp_optimizer, max_iterations=max_iterations,
                                       tol=tol)
    raise ValidationError(f"Unknown collaboration method {method!r}; use one of {METHODS}.")


def common_scale(anchors: Sequence[np.ndarray], functions: Sequence[np.ndarray]) -> float:
    """The one factor that gives ``[A_i G_i]`` the size of the ``A_i`` (scaled to ``m_hat``).

    ``s^2 = sum_i ||A_i||^2 m_hat / m_i / sum_i ||A_i G_i||^2``: 1 for square
    orthogonal ``G_i``. LS and GEP fix the scale of ``G_i`` through a target
    with orthonormal columns or a unit-norm constraint, which leaves the
    collaborative representation about ``1/sqrt(r)`` times smaller than the
    data; a scale-sensitive model (L2-regularised logistic regression) then
    sees almost nothing. Multiplying every ``G_i`` by the same ``s`` keeps the
    alignment exactly as it is.

    Examples
    --------
    >>> common_scale([np.ones((4, 2))], [0.5 * np.eye(2)])
    2.0
    """
    n_dims = np.shape(functions[0])[1]
    size = sum(np.sum(np.asarray(A) ** 2) * n_dims / np.shape(A)[1] for A in anchors)
    mapped = sum(np.sum((np.asarray(A) @ np.asarray(G)) ** 2)
                 for A, G in zip(anchors, functions, strict=True))
    return float(np.sqrt(size / mapped)) if mapped > 0 else 1.0
