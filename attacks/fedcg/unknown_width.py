"""Multilateration when the kernel width is unknown too.

Seed paper 000 (Damiani, Rodina, Decherchi, 2024, section 4) and the project's reading of it
(SEEDS.md): ``L = -log K`` holds ``L_j = gamma (||x||^2 - 2 w_j . x + ||w_j||^2)``, linear in
``u = (gamma x, gamma ||x||^2, gamma)``, so ``m >= d + 2`` known distances identify a point and
the width. Below that, one row does not, and the estimate is the best the equations allow,
under the premise the attack already makes, one width common to the block:

- ``m = d + 1``: the linear solutions form a line ``u0 + t n``, and the consistency condition
  ``u_gamma u_s = ||u_x||^2`` leaves at most two widths per row. The true width is common to all
  rows, the spurious root is not: the width most rows share is taken, and with it the
  known-width multilateration is exact;
- otherwise the width is the median of the block's identified rows, else the width the server
  announced (the base width a random-width defence perturbs), else a moment estimate under the
  box prior: points uniform in the box ``[low, high]`` (``[0, 1]^d`` for min-max scaled
  features) are at mean squared distance ``sum (high - low)^2 / 12 + ||w_j - centre||^2`` from
  landmark ``w_j``, so ``gamma = sum L / sum of those``.

With the width fixed, :func:`~fedsec.attacks.fedcg.multilateration.multilaterate_spread`
places the points (the centre of the sphere they are known to lie on below ``d + 1``) and
reports the sphere's radius as the spread; with a width that is only a prior, the spread is
the radius at that width, a lower bound on the uncertainty.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

SHARED = "the width the rows share"
IDENTIFIED = "the median width of the identified rows"
ANNOUNCED = "the width the server announced"
BOX_PRIOR = "a moment estimate under the box prior"
PRIORS = (ANNOUNCED, BOX_PRIOR)
"""Width sources that are a guess, not a solution of the equations."""
AGREEMENT = 1e-6
"""Relative difference under which two rows' candidate widths count as the same width."""


class WidthFit(NamedTuple):
    """What :func:`multilaterate_unknown_gamma` found."""

    points: np.ndarray
    widths: np.ndarray
    """The width per row."""
    spread: np.ndarray
    """How far each point is determined at that width (0: identified)."""
    width_from: str
    """How the width of the unidentified rows was set ("" when every row is identified)."""
    below: list[dict[str, Any]]
    """Per group of rows below ``d + 1`` known entries, the estimate kept and why
    (:func:`~fedsec.attacks.fedcg.below_hull.place_points`)."""


def lifted_solve(L: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points and widths of rows with ``d + 2`` or more known entries, by linear least squares.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.9, 0.8]])  # not on one circle
    >>> L = 2.0 * ((np.array([[0.3, 0.6]])[:, None] - W[None]) ** 2).sum(-1)
    >>> X, gammas = lifted_solve(L, W)
    >>> X.round(9).tolist(), gammas.round(9).tolist()
    ([[0.3, 0.6]], [2.0])
    """
    d = W.shape[1]
    A = _lifted_matrix(W)
    u, *_ = np.linalg.lstsq(A, L.T, rcond=None)
    g = u[-1]
    ok = np.abs(g) > 1e-12
    X = np.full((L.shape[0], d), np.nan)
    X[ok] = (u[:d, ok] / g[ok]).T
    return X, np.where(ok, g, np.nan)


def _lifted_matrix(W: np.ndarray) -> np.ndarray:
    """The linear map from ``u = (gamma x, gamma ||x||^2, gamma)`` to the row ``L``."""
    return np.hstack([-2.0 * W, np.ones((len(W), 1)), (W**2).sum(axis=1)[:, None]])


def candidate_widths(L: np.ndarray, W: np.ndarray) -> np.ndarray:
    """For rows with exactly ``d + 1`` known entries: the (up to two) positive widths
    consistent with each row, shape (rows, 2), NaN where a root is missing.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> L = 3.0 * ((np.array([[0.2, 0.7]])[:, None] - W[None]) ** 2).sum(-1)
    >>> bool(np.isclose(candidate_widths(L, W), 3.0).any())
    True
    """
    from scipy.linalg import null_space

    d = W.shape[1]
    A = _lifted_matrix(W)
    out = np.full((L.shape[0], 2), np.nan)
    N = null_space(A)
    if N.shape[1] != 1:
        return out  # degenerate landmarks: more than a line of solutions
    n = N[:, 0]
    u0 = np.linalg.lstsq(A, L.T, rcond=None)[0].T  # (rows, d + 2)
    nx, ns, ng = n[:d], n[d], n[d + 1]
    ux, us, ug = u0[:, :d], u0[:, d], u0[:, d + 1]
    a = np.full(len(L), ng * ns - nx @ nx)
    b = ug * ns + ng * us - 2.0 * ux @ nx
    c = ug * us - (ux**2).sum(axis=1)
    disc = b * b - 4.0 * a * c
    real = (disc >= 0) & (np.abs(a) > 1e-300)
    root = np.sqrt(np.where(real, disc, 0.0))
    for k, sign in enumerate((1.0, -1.0)):
        t = np.where(real, (-b + sign * root) / (2.0 * np.where(real, a, 1.0)), np.nan)
        gamma = ug + t * ng
        out[:, k] = np.where(gamma > 0, gamma, np.nan)
    return out


def shared_width(candidates: np.ndarray) -> float | None:
    """The candidate width the most rows share (at least two), else None.

    Examples
    --------
    >>> shared_width(np.array([[2.0, 5.0], [2.0, 0.7], [9.0, 2.0]]))
    2.0
    >>> shared_width(np.array([[2.0, 5.0]])) is None
    True
    """
    rows = np.repeat(np.arange(len(candidates)), candidates.shape[1])
    values = candidates.ravel()
    keep = np.isfinite(values)
    rows, values = rows[keep], values[keep]
    if values.size < 2:
        return None
    logs = np.log(values)
    close = np.abs(logs[:, None] - logs[None, :]) <= AGREEMENT
    support = np.array([np.unique(rows[c]).size for c in close])
    best = int(np.argmax(support))
    if support[best] < 2:
        return None
    return float(np.median(values[close[best]]))


def box_moment_width(L: np.ndarray, W: np.ndarray, box: tuple[np.ndarray, np.ndarray]
                     ) -> float:
    """The width under the box prior: total ``L`` over the expected squared distances.

    Examples
    --------
    >>> W = np.array([[0.5, 0.5]])
    >>> box = (np.zeros(2), np.ones(2))
    >>> round(box_moment_width(np.array([[4.0 * 2 / 12]]), W, box), 9)
    4.0
    """
    low, high = box
    expected = ((high - low) ** 2).sum() / 12.0 + ((W - (low + high) / 2) ** 2).sum(axis=1)
    known = np.isfinite(L)
    total = float((known * expected[None, :]).sum())
    return float(np.nansum(L)) / total if total > 0 else float("nan")


def multilaterate_unknown_gamma(L: np.ndarray, W: np.ndarray, *, announced: float | None = None,
                                estimator: str = "auto") -> WidthFit:
    """Points, per-row widths, spreads, how the width of the unidentified rows was set, and
    which estimate the rows below ``d + 1`` kept.

    Rows with ``d + 2`` or more known entries are identified (spread 0); the others take the
    block's common width as the module docstring describes (``announced``: the width the server
    announced, if any) and are placed at that width. The last value names where that width
    came from ("" when every row is identified); ``estimator`` chooses the estimate below ``d +
    1`` (:func:`~fedsec.attacks.fedcg.below_hull.place_points`). Rows with no known entry are
    NaN.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # d + 1 landmarks in the plane
    >>> points = np.array([[0.2, 0.7], [0.6, 0.1], [0.9, 0.4]])
    >>> L = 3.0 * ((points[:, None] - W[None]) ** 2).sum(-1)
    >>> X, gammas, spread, how, _ = multilaterate_unknown_gamma(L, W)
    >>> X.round(6).tolist() == points.tolist(), gammas.round(6).tolist(), how
    (True, [3.0, 3.0, 3.0], 'the width the rows share')
    """
    from fedsec.attacks.fedcg.below_hull import feature_box, place_points

    L = np.asarray(L, dtype=np.float64)
    n, d = L.shape[0], W.shape[1]
    X, gammas, spread = np.full((n, d), np.nan), np.full(n, np.nan), np.full(n, np.nan)
    known = np.isfinite(L)
    below: list[tuple[np.ndarray, np.ndarray]] = []
    for pattern in np.unique(known, axis=0):
        rows = np.flatnonzero((known == pattern).all(axis=1))
        if pattern.sum() >= d + 2:
            X[rows], gammas[rows] = lifted_solve(L[np.ix_(rows, pattern)], W[pattern])
            spread[rows] = 0.0
        elif pattern.sum() > 0:
            below.append((rows, pattern))
    if not below:
        return WidthFit(X, gammas, spread, "", [])
    candidates = [candidate_widths(L[np.ix_(rows, p)], W[p]) for rows, p in below
                  if p.sum() == d + 1]
    width = shared_width(np.vstack(candidates)) if candidates else None
    how = SHARED
    if width is None and np.isfinite(gammas).any():
        width, how = float(np.nanmedian(gammas)), IDENTIFIED
    if width is None and announced is not None:
        width, how = float(announced), ANNOUNCED
    if width is None:
        rows_below = np.concatenate([rows for rows, _ in below])
        width, how = box_moment_width(L[rows_below], W, feature_box(W)), BOX_PRIOR
    records: list[dict[str, Any]] = []
    for rows, pattern in below:
        placed = place_points(L[np.ix_(rows, pattern)] / width, W[pattern],
                              estimator=estimator)
        X[rows], spread[rows] = placed.points, placed.spread
        records.extend(placed.below)
        gammas[rows] = width
    return WidthFit(X, gammas, spread, how, records)
