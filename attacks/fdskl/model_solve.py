"""Solving for another active worker's decision function once the training rows are known.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for Vertically
Partitioned Data", section 2.2: worker ``l``'s share is ``f^l(x) = sum_{j in
Lambda^l} alpha_j sqrt(2) cos(w_j^T x + b_j)``. Writing ``c_j = alpha_j cos b_j``
and ``s_j = alpha_j sin b_j``, ``f^l(x) = sqrt(2) sum_j (c_j cos(w_j^T x) - s_j
sin(w_j^T x))``: linear in ``(c, s)`` with coefficients an adversary computes
from the shared seed's directions, once it knows the rows ``x_i`` in full. Each
reading of ``f^l`` at iteration ``t`` (:mod:`.model_privacy`) is one such
equation over the features created before ``t``, their coefficients scaled by
``decay^(t - T)``. With ``B`` samples per iteration and two active workers there
are about ``B T / 2`` readings for ``2 T / 2`` unknowns: determined once
``B >= 2`` (up to the last features, which few readings see); the paper's
``B = 1`` leaves half the directions free, and the least-norm solution is what
the attack reports then. ``(c, s)`` give the share anywhere, at fresh points as
well; ``alpha_j`` itself only up to its sign (``(alpha, b)`` and ``(-alpha, b + pi)``
give the same share).

A row is known when the coalition holds every column itself or reads the
others' partial products at that row exactly from the tree sums (``offsets="none"``,
or a coalition that cancels the offsets: :mod:`.tree_collusion`); the readings at
known rows make the system.
"""

from __future__ import annotations

import numpy as np

from fedsec.attacks.fdskl import observations as fo
from fedsec.attacks.fdskl.equations import fdskl_systems
from fedsec.attacks.linear_systems import solve_rows
from fedsec.private_store import parse_truth_key
from fedsec.protocols.fdskl.batches import owned
from fedsec.views import View

SQRT2 = np.sqrt(2.0)


def design(X: np.ndarray, W: np.ndarray, features: np.ndarray, iterations: np.ndarray,
           samples: np.ndarray, *, group: int, n_iterations: int, decay: float) -> np.ndarray:
    """The readings' coefficients of ``(c, s)``: ``decay^(t - T) sqrt(2) [cos, -sin](w_j^T x_i)``
    for the features ``j`` created before iteration ``t`` (zero for later ones).

    Examples
    --------
    >>> A = design(np.zeros((1, 1)), np.ones((2, 1)), np.array([0, 1]), np.array([1]),
    ...            np.array([0]), group=1, n_iterations=1, decay=1.0)
    >>> (A.round(4) + 0.0).tolist()
    [[1.4142, 0.0, 0.0, 0.0]]
    """
    Z = X[samples] @ W.T
    before = features[None, :] < (iterations[:, None] * group)
    scale = decay ** (iterations - n_iterations).astype(float)
    weight = SQRT2 * before * scale[:, None]
    return np.hstack([np.cos(Z) * weight, -np.sin(Z) * weight])


def solve_share(A: np.ndarray, values: np.ndarray, *, rcond: float = 1e-10
                ) -> tuple[np.ndarray, int]:
    """Least-norm ``(c, s)`` (stacked) fitting the readings, and the rank of ``A``."""
    solution, _, rank, _ = np.linalg.lstsq(A, values, rcond=rcond)
    return solution, int(rank)


def share_at(X: np.ndarray, W: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """``f^l`` at the rows of ``X`` from the stacked ``(c, s)``.

    Examples
    --------
    >>> share_at(np.zeros((1, 1)), np.ones((1, 1)), np.array([1.0, 5.0])).round(4).tolist()
    [1.4142]
    """
    Z = X @ W.T
    m = W.shape[0]
    return SQRT2 * (np.cos(Z) @ coefficients[:m] - np.sin(Z) @ coefficients[m:])


def known_rows(view: View) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """The training rows (global columns; NaN where unknown), the directions, and why not
    when no row is known in full: the coalition's own columns, plus those the exact tree sums
    determine."""
    reason = fo.applicable(view)
    if reason is not None:
        return None, None, reason
    obs = fo.observe(view)
    X = np.full((obs.n_samples, obs.n_features), np.nan)
    for member, own in obs.own_X.items():
        X[:, obs.columns[member]] = own
    for system in fdskl_systems(view, kinds=("exact",)):
        x, _ = solve_rows(system)
        for key, start, stop in system.parts:
            X[:, obs.columns[str(parse_truth_key(key).party)]] = x[:, start:stop]
    if not X.size or not np.isfinite(X).all(axis=1).any():
        missing = [w for w in obs.workers if w in obs.columns
                   and not np.isfinite(X[:, obs.columns[w]]).all()]
        return None, None, ("the columns of " + ", ".join(missing or ["every worker"])
                            + " are known exactly for no row")
    return X, obs.directions, ""


def owned_features(active: list[str], worker: str, n_features: int, group: int) -> np.ndarray:
    """The features ``worker`` created: its turns among the active workers, ``group`` each."""
    return owned(0, n_features, active.index(worker), len(active), group)
