"""A linear-system attack engine: secrets that enter observed messages linearly.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Definition 6: a party holding enough equations
``o_j = (w_j)_G^T x_G`` with known ``w_j`` solves for ``x_G``. An offset drawn
from a known distribution is noise of known mean, so regression over every
equation about the same secret still converges (error about
``1 / sqrt(messages)``), and offsets shared by a group of equations (the
paper's per-feature seeds) are one more unknown each, which cancels between
rows.

An *extractor* (one per protocol, :func:`register_extractor`) turns a View
into :class:`LinearSystem` s, each "``values[k] = coefficients(k) .
secret[rows[k]] + noise_k``" with the noise's variance known (0 for exact
equations) and, optionally, an unknown offset shared by a group of equations.
The extractors live with their families (:mod:`fedsec.attacks.fdskl.equations`,
:mod:`fedsec.attacks.fedcg.gram_inference`); the attack that runs them is
``linear-inference`` (:mod:`fedsec.attacks.linear_inference`).

Estimators: :func:`solve_rows` (weighted least squares per row, offsets
treated as independent noise) and :func:`solve_shared` (alternating least
squares over the rows and the shared offsets, the global translation left
free by them fixed from the offsets' known mean); :func:`error_curve` gives
the attacker's own predicted error against the number of messages observed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fedsec.builtin_index import EXTRACTOR_MODULES
from fedsec.convergence import Convergence, thin
from fedsec.errors import CapabilityError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.views import View

EXACT_WEIGHT = 1e6
"""Relative weight of an exact equation next to a noisy one of unit variance (used only
when the exact equations alone do not determine a row)."""


@dataclass
class LinearSystem:
    """Equations ``values[k] = coefficients([k]) . secret[rows[k]] + noise_k``.

    ``parts`` maps ground-truth keys to column ranges of the unknown vector
    (``(key, start, stop)``). ``values`` already have the noise mean removed;
    ``variance`` is the remaining noise variance (0: exact). ``nuisance`` (-1:
    none) names an unknown offset shared by every equation with that id, of
    prior mean 0 and variance ``nuisance_variance[id]`` (its mean is already
    removed from ``values``). ``order`` is the position in the view of the
    message an equation came from. With ``min_norm``, a row the equations do
    not determine gets the minimum-norm solution (the secret on the span the
    equations reach) instead of none. ``estimator`` names the estimator kind
    a system is built for when an extractor offers several (``per-sample``,
    ``shared-offsets``), None when it is the only one; ``symmetric`` secrets
    (a Gram matrix) are symmetrised after solving.
    """

    label: str
    parts: tuple[tuple[str, int, int], ...]
    n_rows: int
    n_unknowns: int
    rows: np.ndarray
    values: np.ndarray
    variance: np.ndarray
    order: np.ndarray
    coefficients: Callable[[np.ndarray], np.ndarray]
    nuisance: np.ndarray | None = None
    nuisance_variance: np.ndarray | None = None
    nuisance_coefficients: Callable[[np.ndarray], np.ndarray] | None = None
    baseline: float = 0.0
    min_norm: bool = False
    estimator: str | None = None
    symmetric: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _weights(variance: np.ndarray, unit: float) -> np.ndarray:
    """Inverse-variance weights in units of the typical noise; exact equations weigh more."""
    if unit <= 0:
        return np.ones_like(variance)
    return np.where(variance > 0, unit / np.maximum(variance, 1e-300), EXACT_WEIGHT)


def _by_row(rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
    order = np.argsort(rows, kind="stable")
    cuts = np.flatnonzero(np.diff(rows[order])) + 1
    return [(int(rows[chunk[0]]), chunk) for chunk in np.split(order, cuts) if chunk.size]


@dataclass
class _Normals:
    """Per-row normal equations ``G_r x_r = A_r^T W (y - offsets)`` of a system."""

    index: np.ndarray  # equations used, sorted by row
    weights: np.ndarray  # per equation (0 for noisy equations of rows exact ones settle)
    grams: dict[int, np.ndarray]
    unit: float


def _normals(system: LinearSystem, mask: np.ndarray | None) -> _Normals:
    p = system.n_unknowns
    keep = np.ones(system.rows.size, dtype=bool) if mask is None else mask
    index = np.flatnonzero(keep)
    noisy = system.variance[system.variance > 0]
    unit = float(np.median(noisy)) if noisy.size else 0.0
    weights = _weights(system.variance, unit)
    exact = keep & (system.variance == 0)
    settled = np.bincount(system.rows[exact], minlength=system.n_rows) >= p
    weights = np.where(settled[system.rows], np.where(system.variance == 0, 1.0, 0.0), weights)
    grams: dict[int, np.ndarray] = {}
    order = index[np.argsort(system.rows[index], kind="stable")]
    for row, chunk in _by_row(system.rows[order]):
        idx = order[chunk]
        if idx.size < p and not system.min_norm:
            continue
        A = system.coefficients(idx)
        grams[row] = (A * weights[idx][:, None]).T @ A
    return _Normals(order, weights, grams, unit)


def _row_sums(system: LinearSystem, normals: _Normals, vector: np.ndarray,
              chunk: int = 65536) -> np.ndarray:
    """``sum_k w_k a_k vector_k`` per row, over the equations the normals use."""
    out = np.zeros((system.n_rows, system.n_unknowns))
    order = normals.index
    for start in range(0, order.size, chunk):
        idx = order[start:start + chunk]
        r = system.rows[idx]
        A = system.coefficients(idx) * (normals.weights[idx] * vector[idx])[:, None]
        starts = np.concatenate([[0], np.flatnonzero(np.diff(r)) + 1])
        out[r[starts]] += np.add.reduceat(A, starts, axis=0)
    return out


def solve_rows(system: LinearSystem, *, mask: np.ndarray | None = None,
               offsets: np.ndarray | None = None,
               normals: _Normals | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares per row: estimates (NaN where underdetermined) and predicted RMSE.

    ``offsets`` (one per equation) are subtracted from the values first. A row
    with enough exact equations is solved from them alone. The predicted error
    is ``sqrt(trace((A^T W A)^-1) / p)`` in units of the noise (standard
    deviation ``sqrt(variance)``): the attacker's own uncertainty.
    """
    p = system.n_unknowns
    normals = normals or _normals(system, mask)
    y = system.values if offsets is None else system.values - offsets
    rhs = _row_sums(system, normals, y)
    estimate = np.full((system.n_rows, p), np.nan)
    predicted = np.full(system.n_rows, np.nan)
    for row, gram in normals.grams.items():
        scale = np.sqrt(np.maximum(np.diag(gram), 1e-300))
        M, rank = solve_linear_map(gram / scale[:, None] / scale[None, :],
                                   (rhs[row] / scale)[None, :], rcond=1e-12)
        if rank < p:
            if not system.min_norm:
                continue
            M, _ = solve_linear_map(gram, rhs[row][None, :], rcond=1e-10)
            scale = np.ones(p)
        estimate[row] = M[0] / scale
        if normals.unit > 0 and rank == p:
            inv = np.linalg.pinv(gram)
            predicted[row] = float(np.sqrt(max(np.trace(inv), 0.0) * normals.unit / p))
        else:
            predicted[row] = 0.0
    return estimate, predicted


def solve_shared(system: LinearSystem, *, anchor: str = "prior", n_sweeps: int = 60,
                 tol: float = 1e-9) -> tuple[np.ndarray, dict[str, Any]]:
    """Rows and shared offsets by alternating least squares, then the free translation.

    A solution ``(x, eta)`` stays one under ``x -> x + c``, ``eta_id -> eta_id -
    a_id . c`` (``a_id`` the coefficients of the offset's equations). ``anchor``
    fixes ``c``: ``prior`` makes the offsets best match their known mean (0, it
    is already removed), weighted by their prior variance; ``minmax`` uses
    min-max scaled data (every column's minimum over the training rows is 0)
    and sets each column's smallest estimate to 0. The returned facts hold a
    :class:`~fedsec.convergence.Convergence` record (``convergence``): converged when the
    largest change of a sweep fell below ``tol``, out of budget after ``n_sweeps``; its
    history is the change per sweep.
    """
    if system.nuisance is None or system.nuisance_coefficients is None:
        raise CapabilityError(f"{system.label}: no shared offsets to estimate.")
    ids = system.nuisance
    n_ids = int(ids.max()) + 1
    normals = _normals(system, None)
    x, _ = solve_rows(system, normals=normals)
    eta = np.zeros(n_ids)
    sweeps, settled, changes = 0, False, []
    for sweep in range(1, n_sweeps + 1):
        sweeps = sweep
        usable = (ids >= 0) & np.isfinite(x[system.rows]).all(axis=1)
        resid = system.values - _fitted(system, x)
        counts = np.bincount(ids[usable], minlength=n_ids)
        sums = np.bincount(ids[usable], weights=resid[usable], minlength=n_ids)
        eta = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        per_eq = np.where(ids >= 0, eta[np.maximum(ids, 0)], 0.0)
        new_x, _ = solve_rows(system, offsets=per_eq, normals=normals)
        change = float(np.nanmax(np.abs(new_x - x))) if np.isfinite(new_x).any() else 0.0
        x = new_x
        changes.append(change)
        if change < tol * (1.0 + float(np.nanmax(np.abs(x)))):
            settled = True
            break
    found = np.isfinite(x).all(axis=1)
    if anchor == "minmax":
        c = -x[found].min(axis=0) if found.any() else np.zeros(system.n_unknowns)
    else:
        present = np.flatnonzero(np.bincount(ids[ids >= 0], minlength=n_ids) > 0)
        A = system.nuisance_coefficients(present)
        variance = system.nuisance_variance
        if variance is None:
            raise ValidationError("Solving for the nuisances needs the system's nuisance_variance.")
        w = 1.0 / np.sqrt(variance[present])
        c, *_ = np.linalg.lstsq(A * w[:, None], eta[present] * w, rcond=None)
    record = Convergence("converged" if settled else "budget", sweeps, n_sweeps,
                         thin(changes))
    return x + c[None, :], {"sweeps": sweeps, "offsets_estimated": int(n_ids),
                            "anchor": anchor, "translation_norm": float(np.linalg.norm(c)),
                            "convergence": record}


def _fitted(system: LinearSystem, x: np.ndarray, chunk: int = 200_000) -> np.ndarray:
    out = np.zeros(system.rows.size)
    for start in range(0, out.size, chunk):
        idx = np.arange(start, min(start + chunk, out.size))
        X = np.nan_to_num(x[system.rows[idx]])
        out[idx] = np.einsum("ij,ij->i", system.coefficients(idx), X)
    return out


def error_curve(system: LinearSystem, n_points: int) -> list[dict[str, float]]:
    """Per-sample regression on the first k observed messages, for k on a geometric grid.

    Reports, per checkpoint, the rows determined, the median equations per
    row and the attacker's predicted RMSE (in the secret's units, from the
    noise's known variance; no ground truth involved). One pass: the normal
    equations of each stretch of messages are added to the previous ones.
    """
    p = system.n_unknowns
    last = int(system.order.max()) + 1 if system.order.size else 0
    grid = np.unique(np.geomspace(1, max(last, 1), num=max(n_points, 1)).round().astype(int))
    noisy = system.variance[system.variance > 0]
    unit = float(np.median(noisy)) if noisy.size else 0.0
    weights = _weights(system.variance, unit)
    grams = np.zeros((system.n_rows, p, p))
    counts = np.zeros(system.n_rows, dtype=int)
    out, previous = [], 0
    for k in grid.tolist():
        stretch = np.flatnonzero((system.order >= previous) & (system.order < k))
        previous = k
        for row, chunk in _by_row(system.rows[stretch]):
            idx = stretch[chunk]
            A = system.coefficients(idx)
            grams[row] += (A * weights[idx][:, None]).T @ A
            counts[row] += idx.size
        errors = []
        for row in np.flatnonzero(counts >= p).tolist():
            if np.linalg.matrix_rank(grams[row], tol=1e-10 * np.abs(grams[row]).max()) == p:
                errors.append(np.sqrt(max(np.trace(np.linalg.inv(grams[row])), 0.0) * unit / p))
        out.append({"messages_observed": int(k), "rows_determined": len(errors),
                    "median_equations_per_row": float(np.median(counts[counts > 0]))
                    if (counts > 0).any() else 0.0,
                    "predicted_rmse": float(np.mean(errors)) if errors else float("nan")})
    return out


@dataclass(frozen=True)
class Extractor:
    """How to read equations from one protocol's transcripts.

    ``systems`` turns a View into linear systems; ``tags`` are the message tags
    it needs; ``applicable`` (optional) says why a View cannot be read, or None.
    """

    systems: Callable[[View], list[LinearSystem]]
    tags: frozenset[str]
    applicable: Callable[[View], str | None] | None = None


EXTRACTORS: dict[str, Extractor] = {}


def extractors() -> dict[str, Extractor]:
    """Every extractor by protocol: the built-ins (their modules, listed in
    :data:`fedsec.builtin_index.EXTRACTOR_MODULES`, imported on the first call) and any
    registered since."""
    for module in EXTRACTOR_MODULES.values():
        importlib.import_module(module)
    return EXTRACTORS


def register_extractor(protocol: str, tags: frozenset[str], *,
                       applicable: Callable[[View], str | None] | None = None,
                       ) -> Callable[[Callable[[View], list[LinearSystem]]],
                                     Callable[[View], list[LinearSystem]]]:
    """Declare how to read equations from ``protocol``'s transcripts (the tags it needs)."""
    def decorate(function: Callable[[View], list[LinearSystem]],
                 ) -> Callable[[View], list[LinearSystem]]:
        EXTRACTORS[protocol] = Extractor(function, tags, applicable)
        return function
    return decorate


def solve_linear_map(inputs: np.ndarray, outputs: np.ndarray, *,
                     rcond: float = 1e-10) -> tuple[np.ndarray, int]:
    """The matrix M with ``outputs ≈ M inputs`` (columns are observations), and the rank used.

    Least squares over every observed pair; with fewer independent inputs than
    M has columns, M is determined only on their span (minimum-norm solution).

    Examples
    --------
    >>> M = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> P = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    >>> est, rank = solve_linear_map(P, M @ P)
    >>> np.allclose(est, M), rank
    (True, 2)
    """
    solution, _, rank, _ = np.linalg.lstsq(inputs.T, outputs.T, rcond=rcond)
    return solution.T, int(rank)
