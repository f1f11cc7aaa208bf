"""Column spaces: how much of a private matrix's column space an estimated basis captures.

An adversary who sees linear images ``X W`` of private data learns the column space of
``X`` (a basis, not ``X`` itself): leverage scores, the whitened geometry of the rows and
their nearest neighbours follow from it, and a few known rows turn it into every row
(:func:`align_known_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring.reconstruction import EpsilonParams, advantage, scored_targets

RANK_TOL = 1e-9


def basis(images: np.ndarray, *, rtol: float = RANK_TOL) -> np.ndarray:
    """An orthonormal basis of the column space of ``images`` (singular values above
    ``rtol`` times the largest).

    Examples
    --------
    >>> basis(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])).shape
    (3, 1)
    """
    A = np.asarray(images, dtype=np.float64)
    if A.size == 0:
        return np.zeros((A.shape[0], 0))
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    if not s.size or s[0] == 0:
        return np.zeros((A.shape[0], 0))
    return U[:, s > rtol * s[0]]


def captured(Q: np.ndarray, X: np.ndarray) -> float:
    """The fraction of ``X``'s energy inside span(Q): ``||Q Q^T X||_F / ||X||_F``.

    Examples
    --------
    >>> captured(np.eye(3)[:, :1], np.diag([1.0, 0.0, 0.0]))
    1.0
    """
    norm = float(np.linalg.norm(X))
    if norm == 0 or Q.shape[1] == 0:
        return 0.0
    return float(np.linalg.norm(Q @ (Q.T @ X)) / norm)


def largest_angle(Q: np.ndarray, U: np.ndarray) -> float:
    """The largest principal angle (degrees) between span(Q) and span(U), both orthonormal
    (90 when Q misses a direction of U; give ``U = basis(X)`` for a block's columns)."""
    from scipy.linalg import subspace_angles

    if Q.shape[1] == 0 or U.shape[1] == 0:
        return 90.0
    return float(np.degrees(np.max(subspace_angles(Q, U))))


def leverage(Q: np.ndarray) -> np.ndarray:
    """Each row's leverage in the span of orthonormal ``Q``: its squared row norm."""
    return np.einsum("ij,ij->i", Q, Q)


def same_neighbours(Q: np.ndarray, U: np.ndarray) -> float:
    """The fraction of rows whose nearest other row is the same under the row geometry of ``Q``
    and of ``U`` (for a basis of a block's columns: its whitened, Mahalanobis, geometry)."""
    from scipy.spatial.distance import cdist

    if Q.shape[0] < 2:
        return float("nan")

    def nearest(A: np.ndarray) -> np.ndarray:
        d = cdist(A, A, "sqeuclidean")
        np.fill_diagonal(d, np.inf)
        return np.argmin(d, axis=1)

    return float(np.mean(nearest(Q) == nearest(U)))


def align_known_rows(Q: np.ndarray, known: np.ndarray, known_X: np.ndarray) -> np.ndarray:
    """Every row of ``X = Q T`` from the rows ``known`` of ``X``: ``T`` by least squares on
    ``Q[known] T = X[known]``; exact once the known rows span ``Q``'s columns.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 3)); Q = basis(X @ rng.normal(size=(3, 5)))
    >>> bool(np.allclose(align_known_rows(Q, np.arange(4), X[:4]), X))
    True
    """
    T, *_ = np.linalg.lstsq(Q[np.asarray(known)], np.asarray(known_X, dtype=np.float64),
                            rcond=None)
    return Q @ T


def random_basis(n_rows: int, rank: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``rank``-dimensional subspace of R^n_rows (the uninformed guess)."""
    if rank == 0:
        return np.zeros((n_rows, 0))
    Q, _ = np.linalg.qr(rng.normal(size=(n_rows, rank)))
    return Q


def column_space_metrics(estimate: Any, truth: Any) -> dict[str, float]:
    """One target's figures for :class:`ColumnSpace`: ``estimate`` a basis, ``truth`` the block.

    The ``baseline_`` figures are a random subspace of the estimated rank, seeded by the
    block's shape.
    """
    X = np.asarray(truth, dtype=np.float64)
    Q = basis(np.asarray(estimate, dtype=np.float64))
    rng = np.random.default_rng(list(X.shape))
    guess = random_basis(X.shape[0], Q.shape[1], rng)
    U = basis(X)
    entry = {
        "captured": captured(Q, X), "largest_angle": largest_angle(Q, U),
        "leverage_error": float(np.abs(leverage(Q) - leverage(U)).max()),
        "baseline_leverage_error": float(np.abs(leverage(guess) - leverage(U)).max()),
        "same_neighbours": same_neighbours(Q, U),
        "baseline_same_neighbours": same_neighbours(guess, U),
        "recovered_rank": float(Q.shape[1]),
        "true_rank": float(U.shape[1]),
        "baseline_captured": captured(guess, X),
        "baseline_largest_angle": largest_angle(guess, U)}
    entry["advantage"] = advantage(1.0 - entry["captured"], 1.0 - entry["baseline_captured"])
    return entry


@register("scorer", "column-space")
class ColumnSpace(Scorer):
    """Fraction of a private block's column space inside the estimated basis, largest principal
    angle, recovered and true rank, against a random subspace.

    How much of each target's column space an estimated basis captures.

    Per target (a private ``N x d`` block, the estimate an ``N x r`` basis): ``captured``
    (fraction of the block's energy inside the estimated span; 1 is the whole column space),
    ``largest_angle`` (degrees; 0 is exact, 90 a missed direction), ``recovered_rank`` and
    ``true_rank``; what the span already gives: ``leverage_error`` (largest error in the rows'
    leverage scores) and ``same_neighbours`` (rows whose nearest neighbour in the block's
    whitened geometry the span finds). The ``baseline_`` figures are a random subspace of the
    same rank (seeded by the target's shape); ``advantage`` closes the gap in ``captured``
    from it to 1 (per target, averaged over the targets where there is a gap: none when the
    block's columns span every row).
    """

    Params = EpsilonParams
    recovers = "the column space of {what}"
    reads = frozenset({"basis"})
    glossary: ClassVar[Mapping[str, str]] = {
        "captured": "the fraction of the private block inside the estimated span (1: its "
                    "whole column space).",
        "largest_angle": "the largest principal angle, in degrees, between the estimated span "
                         "and the block's column space (0: exact, 90: a direction missed).",
        "recovered_rank": "the dimension of the estimated span.",
        "true_rank": "the rank of the private block.",
        "leverage_error": "the largest error in the rows' leverage scores.",
        "same_neighbours": "the fraction of rows whose nearest neighbour in the block's "
                           "whitened geometry the span finds.",
        "fraction_recovered": "the fraction of blocks captured within epsilon.",
        "advantage": "how much of the gap from a random subspace of the same rank to the "
                     "whole column space the attack closed (1: all of it).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        per_target = {key: column_space_metrics(reconstruction.estimates[key], truth[key])
                      for key in scored_targets(reconstruction, truth)}
        values = list(per_target.values())

        def mean(name: str) -> float:
            return float(np.mean([v[name] for v in values])) if values else float("nan")

        summary: dict[str, Any] = {
            "n_targets": len(values), "captured": mean("captured"),
            "largest_angle": mean("largest_angle"), "recovered_rank": mean("recovered_rank"),
            "true_rank": mean("true_rank"), "baseline_captured": mean("baseline_captured"),
            "baseline_largest_angle": mean("baseline_largest_angle"),
            "leverage_error": mean("leverage_error"),
            "baseline_leverage_error": mean("baseline_leverage_error"),
            "same_neighbours": mean("same_neighbours"),
            "baseline_same_neighbours": mean("baseline_same_neighbours"),
            "fraction_recovered": float(np.mean([
                v["captured"] >= 1 - self.params.epsilon for v in values])) if values else 0.0,
        }
        gains = [v["advantage"] for v in values if np.isfinite(v["advantage"])]
        # per target, then averaged: a view whose column space is the whole row space (more
        # features than rows) gives nothing to gain and stays out (NaN when every view does)
        summary["advantage"] = float(np.mean(gains)) if gains else float("nan")
        summary["per_target"] = per_target
        return summary


def binary_columns(X: np.ndarray) -> list[int]:
    """The non-constant columns of ``X`` whose values are all 0 or 1."""
    return [j for j in range(X.shape[1])
            if np.isin(X[:, j], (0.0, 1.0)).all() and 0 < X[:, j].sum() < X.shape[0]]


def column_matches(found: np.ndarray, X: np.ndarray) -> tuple[int, int]:
    """How many 0/1 columns of ``X`` appear among ``found`` (or complemented), and how many
    found columns match no column of ``X``."""
    truth = [X[:, j] for j in binary_columns(X)]
    def same(a: np.ndarray, b: np.ndarray) -> bool:
        return bool(np.array_equal(a, b) or np.array_equal(a, 1 - b))
    hits = sum(any(same(t, found[:, i]) for i in range(found.shape[1])) for t in truth)
    spurious = sum(not any(same(t, found[:, i]) for t in truth) for i in range(found.shape[1]))
    return hits, spurious


@register("scorer", "binary-columns")
class BinaryColumnsScore(Scorer):
    """Fraction of a block's 0/1 columns recovered exactly, and spurious columns.

    Which 0/1 columns of each private block an attack recovered exactly.

    Per target: ``binary_columns`` (the block's non-constant 0/1 columns), ``recovered``
    (the fraction of them among the estimate's columns, up to complement), ``spurious``
    (estimated columns that are no column of the block); ``advantage`` is ``recovered``
    against the baseline's.
    """

    recovers = "the 0/1 columns of {what}"
    reads = frozenset({"binary-columns"})
    glossary: ClassVar[Mapping[str, str]] = {
        "binary_columns": "the private blocks' non-constant 0/1 columns.",
        "recovered": "the fraction of those columns found exactly (up to complement).",
        "spurious": "found columns that are no column of the block.",
        "advantage": "recovered against the baseline's (1: every 0/1 column found).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        per_target: dict[str, dict[str, float]] = {}
        for key in scored_targets(reconstruction, truth):
            X = np.asarray(truth[key], dtype=np.float64)
            n_binary = len(binary_columns(X))
            entry: dict[str, float] = {"binary_columns": float(n_binary)}
            for prefix, table in (("", reconstruction.estimates),
                                  ("baseline_", reconstruction.baseline)):
                if key in table:
                    hits, spurious = column_matches(np.asarray(table[key], dtype=float), X)
                    entry[prefix + "recovered"] = hits / n_binary if n_binary else float("nan")
                    entry[prefix + "spurious"] = float(spurious)
            per_target[key] = entry
        with_binary = [v for v in per_target.values() if v["binary_columns"] > 0]
        recovered = (float(np.mean([v["recovered"] for v in with_binary]))
                     if with_binary else float("nan"))
        base = (float(np.mean([v.get("baseline_recovered", 0.0) for v in with_binary]))
                if with_binary else float("nan"))
        return {"n_targets": len(per_target),
                "binary_columns": float(sum(v["binary_columns"] for v in per_target.values())),
                "recovered": recovered, "baseline_recovered": base,
                "spurious": float(sum(v.get("spurious", 0.0) for v in per_target.values())),
                "advantage": advantage(1.0 - recovered, 1.0 - base)
                if with_binary else float("nan"),
                "per_target": per_target}
